package machine

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// review is a small definition with one fan-out state, for the table below
// to break one field at a time.
const review = `{"name": "review", "initial": "start",
 "transitions": {"start": ["review"], "review": ["done"], "done": []},
 "scopes": {"all": {"terminal": "done", "route": ["start", "review", "done"]}},
 "work": {"review": %s}}`

// checkParsed parses def and checks the outcome: accepted for want "",
// else exit 4 with a message holding want.
func checkParsed(t *testing.T, def, want string) {
	t.Helper()
	_, err := Parse([]byte(def))
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v", def, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: got %v, want %q", def, err, want)
	case want != "" && fail.Code(err) != fail.Invalid:
		t.Errorf("%s: exit %d, want %d", def, fail.Code(err), fail.Invalid)
	}
}

func TestWorkValidation(t *testing.T) {
	for _, tc := range []struct{ work, want string }{
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}_{item}.md", "format": "report"}`, ""},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown", "sections": ["Findings"]}`, ""},
		{`{"agent": "reviewer", "each": "arguments", "output": "r/{item}.json", "format": "json", "fields": ["verdict"], "min_delivered": 0}`, ""},
		{`{"agent": "flowstate:reviewer", "output": "r.md", "format": "report"}`, `work.review.agent: "flowstate:reviewer" is not an agent name`},
		{`{"agent": "reviewer", "format": "report"}`, "work.review.output: missing"},
		{`{"agent": "reviewer", "output": "../r.md", "format": "report"}`, "work.review.output: \"../r.md\" must stay inside the spec directory"},
		{`{"agent": "reviewer", "output": "out/Summary.md", "format": "report"}`, `work.review.output: "out/Summary.md": Claude Code refuses an agent's Write`},
		{`{"agent": "reviewer", "each": "topics", "output": "r/{item}.md", "format": "report"}`, `work.review.output: "r/{item}.md": Claude Code refuses`},
		{`{"agent": "reviewer", "output": "summary.json", "format": "json", "fields": ["a"]}`, ""},
		{`{"agent": "reviewer", "output": "r.md", "format": "pdf"}`, `work.review.format: "pdf"; use one of report, plan`},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown"}`, "work.review.sections: format markdown needs"},
		{`{"agent": "reviewer", "output": "r.md", "format": "json"}`, "work.review.fields: format json needs"},
		{`{"agent": "reviewer", "output": "r/{x}.md", "format": "report"}`, "work.review.output: {x} in \"r/{x}.md\" is not a template variable here"},
		{`{"agent": "reviewer", "output": "r/{n.md", "format": "report"}`, "work.review.output: \"r/{n.md\" has a brace"},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r.md", "format": "report"}`, "work.review.output: \"r.md\" is the same for every worker"},
		{`{"agent": "reviewer", "each": "topics", "id": "review", "output": "r/{n}.md", "format": "report"}`, "work.review.id: \"review\" is the same for every worker"},
		{`{"agent": "reviewer", "each": "everything", "output": "r.md", "format": "report"}`, `work.review.each: "everything"; use one of request, topics`},
		{`{"agent": "reviewer", "each": [], "output": "r.md", "format": "report"}`, "work.review.each: an empty list"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "aggregate": "testing"}`, "work.review.aggregate: testing needs format test-results, not report"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "aggregate": "sum"}`, `work.review.aggregate: "sum"`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": ["x"], "fail_when": "x"}`, "work.review.fail_when: state review has no recovery state"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "reads": ["nowhere"]}`, `work.review.reads: "nowhere" is not a state`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "supervisor": {"agent": "boss", "from": 1}}`, "work.review.supervisor.from: 1"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "min_delivered": -1}`, "work.review.min_delivered: -1"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "colour": "red"}`, `unknown field "colour"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "supervisor": {"agent": "a:b", "from": 3}}`, `work.review.supervisor.agent: "a:b" is not an agent name`},
		{`{"agent": "reviewer", "output": "/r.md", "format": "report"}`, `work.review.output: "/r.md" must stay inside`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": ["a"], "sections": ["A"]}`, "work.review.sections: only formats markdown and report"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "sections": ["A"], "fields": ["a"]}`, "work.review.fields: only format json"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "fail_when": "x"}`, "work.review.fail_when: state review has no recovery state"},
		{`{"agent": "reviewer", "each": ["a", " "], "output": "r/{n}.md", "format": "report"}`, "work.review.each[1]: an empty item"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "label": "{who}"}`, "work.review.label: {who} in \"{who}\""},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "id": "{text}"}`, "work.review.id: {text} in \"{text}\""},
		// The first problem in the order of the fields is the one reported.
		{`{"agent": "a:b", "format": "pdf", "each": []}`, `work.review.agent: "a:b"`},
		{`{"agent": "reviewer", "output": "../r.md", "format": "pdf", "each": []}`, `work.review.output: "../r.md"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "pdf", "each": []}`, `work.review.format: "pdf"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "min_delivered": -1, "each": []}`, "work.review.min_delivered: -1"},
		{`{"agent": "reviewer", "output": "r/{x}.md", "format": "report", "each": []}`, "work.review.each: an empty list"},
	} {
		checkParsed(t, strings.Replace(review, "%s", tc.work, 1), tc.want)
	}
}

func TestWorkOnUnknownOrInitialState(t *testing.T) {
	for state, want := range map[string]string{"nowhere": `work.nowhere.agent: "nowhere" is not a state`, "start": `work.start.agent: the initial state "start" has no work`} {
		def := strings.Replace(review, `"review": %s`, `"`+state+`": {"agent": "a", "output": "a.md", "format": "report"}`, 1)
		if _, err := Parse([]byte(def)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("work on %s: got %v, want %q", state, err, want)
		}
	}
}

func TestRender(t *testing.T) {
	v := Vars{State: "test", N: 7, Run: 2, Item: "unit", Text: "Unit"}
	for tmpl, want := range map[string]string{
		"{state}_{n}":                      "test_7",
		"reports/{n:3}_{item}.md":          "reports/007_unit.md",
		"tests/r{run}_{item}_results.json": "tests/r2_unit_results.json",
		"{text} tests":                     "Unit tests",
		"debug/{run:3}_debug.md":           "debug/002_debug.md",
	} {
		if got := Render(tmpl, v); got != want {
			t.Errorf("Render(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

func TestDefaultAgents(t *testing.T) {
	m := Default()
	if got := m.PlanState(); got != "plan" {
		t.Errorf("PlanState = %q", got)
	}
	if got := m.RecoveryOf("debug"); got != "test" {
		t.Errorf("RecoveryOf(debug) = %q", got)
	}
}

// Default hands out copies: a caller that changes one changes nothing
// for the next.
func TestDefaultIsACopy(t *testing.T) {
	m := Default()
	m.Work["research"] = Work{}
	m.Transitions["initialize"][0] = "x"
	m.Work["test"].Supervisor.From = 99
	n := Default()
	if n.Work["research"].Agent != "research-specialist" || n.Transitions["initialize"][0] != "research" || n.Work["test"].Supervisor.From != 2 {
		t.Error("Default shares its maps with callers")
	}
}

// loop is a definition with a check-and-recover loop, check -> fix, for
// the table below to break: each broken loop would never end.
const loop = `{"name": "x", "initial": "start",
 "transitions": {"start": ["lint"], "lint": ["check", "fix"], "check": ["fix", "lint", "done"], "fix": ["check", "lint"], "done": []},
 "scopes": {"all": {"terminal": "done", "route": ["start", "lint", "check", "done"]}},
 "recovery": %s,
 "work": {"check": %s, "fix": %s}}`

func TestLoopValidation(t *testing.T) {
	const (
		check   = `{"agent": "c", "id": "check_{run}", "output": "c/{run}.json", "format": "test-results", "fail_when": "tests_failed"}`
		fix     = `{"agent": "f", "each": "failures", "id": "fix_{run}", "output": "f/{run:3}_fix.md", "format": "report"}`
		noWork  = `{"agent": "f", "output": "f/{run}.md", "format": "report"}`
		ownFix  = `{"check": "fix"}`
		shared  = `{"check": "fix", "lint": "fix"}`
		unnamed = `{"agent": "c", "output": "c/{run}.json", "format": "test-results", "fail_when": "tests_failed"}`
	)
	for _, tc := range []struct{ recovery, check, fix, want string }{
		{ownFix, check, fix, ""},
		// fix has no work: the check fails, goes to fix and back, forever.
		{`{"check": "lint"}`, check, noWork, `machine "x": work.check.fail_when: the recovery state lint has no work`},
		{shared, check, fix, `machine "x": work.check.fail_when: the recovery state fix also repairs lint`},
		{ownFix, unnamed, fix, `machine "x": work.check.id: "{state}_{n}" has no {run}`},
		{ownFix, strings.Replace(check, "c/{run}.json", "c/out.json", 1), fix, `machine "x": work.check.output: "c/out.json" has no {run}`},
		{ownFix, check, strings.Replace(fix, `"id": "fix_{run}", `, "", 1), `machine "x": work.fix.id: "{state}_{n}" has no {run}`},
		{ownFix, check, strings.Replace(fix, "f/{run:3}_fix.md", "f/fix.md", 1), `machine "x": work.fix.output: "f/fix.md" has no {run}`},
	} {
		checkParsed(t, strings.Replace(strings.Replace(strings.Replace(loop, "%s", tc.recovery, 1), "%s", tc.check, 1), "%s", tc.fix, 1), tc.want)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Auth Patterns (JWT/OAuth2)!": "auth_patterns_jwt_oauth2",
		"$(rm -rf /)":                 "rm_rf",
		"日本語":                         "untitled",
		strings.Repeat("ab ", 30):     "ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_a",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// A definition a run would refuse is refused when read: each row breaks
// the review definition in one place.
func TestWorkRefusedUpFront(t *testing.T) {
	const ok = `{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}_{item}.md", "format": "report"}`
	for _, tc := range []struct{ work, want string }{
		{ok, ""},
		{`{"agent": "reviewer", "each": ["a b", "a-b"], "output": "r/{item}.json", "format": "report", "id": "w_{n}"}`, `work.review.output: items "a b" and "a-b" both get "r/a_b.json"; put {n} in it`},
		{`{"agent": "reviewer", "each": ["A", "a"], "output": "r/{n}.md", "format": "report", "id": "{item}"}`, `work.review.id: items "A" and "a" both get "a"`},
		// The items a plan of one wave keeps are numbered 1.. again.
		{`{"agent": "reviewer", "each": [{"item": "x", "min_waves": 2}, "x"], "output": "r/{item}.json", "format": "report", "id": "w_{n}"}`, `work.review.output: items "x" and "x" both get "r/x.json"`},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{run}.md", "format": "report"}`, `work.review.output: "r/{run}.md" is the same for every worker`},
		{`{"agent": "reviewer", "each": "plan", "output": "r/{n}.md", "format": "report"}`, `work.review.each: plan, but no state writes a plan`},
		{`{"agent": "reviewer", "each": "plan", "output": "p/{n}.md", "format": "plan"}`, `work.review.each: plan in the state that writes the plan`},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "isolation": "worktree", "on_conflict": "redo"}`, ""},
		{`{"agent": "reviewer", "each": "plan", "output": "r/{n}.md", "format": "report", "isolation": "worktree"}`, "work.review.each: plan, but no state writes a plan"},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "isolation": "sandbox"}`, `work.review.isolation: "sandbox"; the one isolation is "worktree"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "isolation": "worktree"}`, "work.review.isolation: state review runs one worker"},
		{`{"agent": "reviewer", "each": ["a"], "output": "r.md", "format": "report", "isolation": "worktree"}`, "work.review.isolation: state review runs one worker"},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "on_conflict": "redo"}`, "work.review.on_conflict: state review merges nothing (no isolation)"},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "isolation": "worktree", "on_conflict": "theirs"}`, `work.review.on_conflict: "theirs"; use "redo"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "records": "a.b"}`, `work.review.records: "a.b"; give a key of letters`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "records": "0"}`, `work.review.records: "0"`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "records": "` + strings.Repeat("k", 65) + `"}`, `work.review.records: "kkk`},
		{`{"agent": "` + strings.Repeat("a", 65) + `", "output": "r.md", "format": "report"}`, `is longer than 64 bytes`},
		{`{"agent": "reviewer", "output": "r/` + strings.Repeat("x", 200) + `{item}.md", "format": "report"}`, `can render to more than the 255 bytes a file name may have`},
		{`{"agent": "reviewer", "output": "briefs/{n}.md", "format": "report"}`, `work.review.output: "briefs/{n}.md" can name a file of flowstate's own: briefs/ holds the briefs`},
		{`{"agent": "reviewer", "output": "{item}/x.md", "format": "report", "each": ["briefs"]}`, `can name a file of flowstate's own`},
		{`{"agent": "reviewer", "output": "classification.json/{n}.md", "format": "report"}`, `can name a file of flowstate's own: classification.json`},
		{`{"agent": "reviewer", "output": "./Briefs/{n}.md", "format": "report"}`, `can name a file of flowstate's own: briefs/`},
		{`{"agent": "reviewer", "output": "r/{n}.md", "format": "report", "each": [` + strings.Repeat(`"x", `, 50) + `"y"]}`, "work.review.each: 51 items, more than the 50 workers a state may run"},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "min_delivered": 2}`, `work.review.min_delivered: 2, more than the 1 workers of the state`},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "min_delivered": 3}`, `work.review.min_delivered: 3, more than the 2 workers`},
		{`{"agent": "reviewer", "each": "arguments", "output": "r/{n}.md", "format": "report", "min_delivered": 30}`, ""},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "min_delivered": "50%"}`, ""},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "min_delivered": "0%"}`, `work.review.min_delivered: "0%"; give a percentage from 1% to 100%`},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "min_delivered": "half"}`, `min_delivered: "half"; give a count of workers (2) or a percentage`},
		{`{"agent": "reviewer", "each": ["a", "b"], "output": "r/{n}.md", "format": "report", "min_delivered": 1.5}`, `min_delivered: 1.5; give a count`},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown", "sections": ["## Overview", "### Notes"]}`, ""},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown", "sections": ["# Overview"]}`, `work.review.sections[0]: "# Overview" is not a section`},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown", "sections": ["Overview", " "]}`, `work.review.sections[1]: " " names no heading`},
		{`{"agent": "reviewer", "output": "r.md", "format": "markdown", "sections": ["2."]}`, `work.review.sections[0]: "2." names no heading`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": ["a", {"name": "b", "type": "number"}, {"name": "c", "values": ["x", "y"]}]}`, ""},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": [""]}`, `work.review.fields[0]: an empty name`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": ["a", "a"]}`, `work.review.fields[1]: "a" is named twice`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": [{"name": "a", "type": "int"}]}`, `work.review.fields[0]: type "int"; use one of string, number, boolean, array, object`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": [{"name": "a", "type": "number", "values": ["1"]}]}`, `work.review.fields[0]: values are for a field of type string, not number`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": [{"name": "a", "values": ["x", ""]}]}`, `work.review.fields[0]: an empty value`},
		{`{"agent": "reviewer", "output": "r.json", "format": "json", "fields": [{"name": "a", "kind": "x"}]}`, `work.review.fields[0]: unknown field "kind"; a field of fields has name, type, values`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "supervisor": {"agent": "s", "from": 2, "to": 3}}`, `work.review.supervisor: unknown field "to"; supervisor has agent, from`},
		{`{"agent": "reviewer", "output": "r/{n}.md", "format": "report", "each": [{"item": "a", "waves": 2}]}`, `work.review.each[0]: unknown field "waves"; an item of each has item, min_waves`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "Output": "x.md"}`, `work.review: unknown field "Output"`},
		{`{"agent": "reviewer", "output": "r.md", "output": "s.md", "format": "report"}`, `work.review.output: given twice`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "label": "Lens:\t{text}"}`, `work.review.label: "Lens:\t{text}" holds a control character (U+0009)`},
		{`{"agent": "reviewer", "output": "r.md", "format": "report", "each": ["a\u2028b"]}`, `work.review.each[0]: "a\u2028b" holds a control character`},
	} {
		checkParsed(t, strings.Replace(review, "%s", tc.work, 1), tc.want)
	}
}
