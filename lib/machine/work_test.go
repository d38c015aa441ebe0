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
		_, err := Parse([]byte(strings.Replace(review, "%s", tc.work, 1)))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.work, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.work, err, tc.want)
		case tc.want != "" && fail.Code(err) != fail.Invalid:
			t.Errorf("%s: exit %d, want %d", tc.work, fail.Code(err), fail.Invalid)
		}
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
	for typ, want := range map[string]string{
		"flowstate:research-specialist": "research-specialist", "sub-supervisor": "sub-supervisor",
		"workflow-classifier": "workflow-classifier", "flowstate:doc-writer": "doc-writer",
	} {
		if got, ok := m.Agent(typ); !ok || got != want {
			t.Errorf("Agent(%q) = %q, %v; want %q", typ, got, ok, want)
		}
	}
	for _, typ := range []string{"general-purpose", "flowstate:", "Explore", ""} {
		if got, ok := m.Agent(typ); ok {
			t.Errorf("Agent(%q) = %q, want none", typ, got)
		}
	}
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
