package orchestrate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// done and failed are records of workers of a state.
func done(path string) supervisor.Record {
	return supervisor.Record{Status: checkpoint.WorkerCompleted, OutputPath: path}
}

func failed(id, topic, why string) supervisor.Record {
	return supervisor.Record{WorkerID: id, Topic: topic, Status: checkpoint.WorkerFailed, Error: why}
}

func TestContextOf(t *testing.T) {
	recs := map[string][]supervisor.Record{
		"research": {done("r1"), done("r2")}, "plan": {done("p")}, "implement": {done("i1")}, "test": {done("t1")},
	}
	for state, want := range map[string]string{
		"research": "[]",
		"plan":     "[r1 r2]",
		"test":     "[p i1]",
		"debug":    "[t1 p i1]",
		"document": "[p i1 t1 r1 r2]",
	} {
		if got := fmt.Sprint(ContextOf(role(state), recs).Read); got != want {
			t.Errorf("ContextOf(%s) = %s, want %s", state, got, want)
		}
	}
}

func TestBrief(t *testing.T) {
	f := Facts{Description: "Add login", Failures: "1 failing tests; TestLogin"}
	got := Brief(role("research"), f, Context{})
	if want := "# Brief: research\n\n## Workflow request\n\nAdd login\n\n## Read first\n\nNothing yet: start from the workflow request.\n\n## Format\n\n"; !strings.HasPrefix(got, want) {
		t.Errorf("research brief:\n%s\nwant it to start\n%s", got, want)
	}
	f.TopicNotes = []string{"Auth: how logins work"}
	if got := Brief(role("research"), f, Context{}); !strings.Contains(got, "## Topics\n\n- Auth: how logins work\n") {
		t.Errorf("research brief without the classifier's topic notes:\n%s", got)
	}
	got = Brief(role("debug"), f, Context{Read: []string{"a/r1_unit.json", "a/plan.md"}})
	for _, want := range []string{"## What failed\n\n1 failing tests; TestLogin\n", "## Read first\n\n- a/r1_unit.json\n- a/plan.md\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("debug brief lacks %q:\n%s", want, got)
		}
	}
}

// TestBriefListsWhatWasNotDelivered: a state after a partial failure is
// told, beside what to read, which workers of the states it reads did
// not deliver and why, and how many did (issue 33: a synthesizer says
// "2 of 3 files were analysed").
func TestBriefListsWhatWasNotDelivered(t *testing.T) {
	writer := Role{State: "summarize", Work: machine.Work{Agent: "w", Format: machine.FormatReport, Reads: []string{"analyse"}}}
	c := ContextOf(writer, map[string][]supervisor.Record{"analyse": {
		done(".flowstate/specs/x/a1.json"),
		failed("analyse_2", "src/b.go", "triage-analyst analyse_2 wrote no json at .flowstate/specs/x/a2.json"),
		done(".flowstate/specs/x/a3.json"),
	}})
	got := Brief(writer, Facts{Description: "src/a.go src/b.go src/c.go"}, c)
	want := "## Read first\n\n- .flowstate/specs/x/a1.json\n- .flowstate/specs/x/a3.json\n\n## Not delivered\n\n" +
		"The workflow went on without these workers; where it matters, say what your work lacks for it.\n\n" +
		"analyse: 2 of 3 workers delivered; these did not:\n\n" +
		"- src/b.go (analyse_2): triage-analyst analyse_2 wrote no json at .flowstate/specs/x/a2.json\n"
	if !strings.Contains(got, want) {
		t.Errorf("brief:\n%s\nwant it to hold\n%s", got, want)
	}
	if got := Brief(writer, Facts{}, ContextOf(writer, map[string][]supervisor.Record{"analyse": {done("a1")}})); strings.Contains(got, "Not delivered") {
		t.Errorf("a brief after every worker delivered speaks of some that did not:\n%s", got)
	}
}

func TestBriefFeedback(t *testing.T) {
	fb := Feedback("reject", "ann", "cover the\naudit log", []string{"/s/plans/001_x.md"})
	if want := "ann rejected /s/plans/001_x.md; do it again, addressing: cover the\naudit log"; fb != want {
		t.Errorf("Feedback = %q, want %q", fb, want)
	}
	if got := Brief(role("plan"), Facts{Description: "d", Feedback: fb}, Context{Read: []string{"r1"}}); !strings.Contains(got, "## Sent back\n\n"+fb+"\n") {
		t.Errorf("brief without the feedback:\n%s", got)
	}
	if got := Feedback("rewind", "bob", "", nil); got != "" {
		t.Errorf("Feedback without a reason = %q, want none", got)
	}
	if got, want := Feedback("rewind", "bob", "simpler", nil), "bob sent back the earlier work; do it again, addressing: simpler"; got != want {
		t.Errorf("Feedback = %q, want %q", got, want)
	}
}

// filled is the template of a brief's format section with each <...>
// filled in, as a literal-minded worker writes it.
func filled(brief string) (string, error) {
	lang, text, ok := protocol.Template(brief)
	if !ok {
		return "", fmt.Errorf("the brief gives no template:\n%s", brief)
	}
	return regexp.MustCompile(`<[^<>\n]+>`).ReplaceAllStringFunc(text, func(p string) string {
		words := "the " + strings.Trim(p, "<>") + " as written"
		if lang == "json" {
			b, _ := json.Marshal(words)
			return strings.Trim(string(b), `"`)
		}
		return words
	}), nil
}

// TestBriefTemplateMeetsTheCheck: the template a brief gives, filled in
// as it says, is a file the check of its state takes, for every format
// (the default machine's states, the one `new command` writes, sections,
// typed fields, fail_when): the brief and the check are said from the
// same definition data. TestAcceptedDefinitionsRun has its workers write
// these templates too, over generated definitions.
func TestBriefTemplateMeetsTheCheck(t *testing.T) {
	roles := Roles(machine.Default())
	for _, w := range []machine.Work{
		{Format: machine.FormatMarkdown, Sections: []string{"Overview", "Fix first", "Where `it` is"}},
		{Format: machine.FormatReport, Sections: []string{"Risks"}},
		{Format: machine.FormatReport, Aggregate: "implementation"},
		{Format: machine.FormatJSON, Fields: []machine.Field{{Name: "file"}, {Name: "severity", Values: []string{"low", "medium", "high"}},
			{Name: "issues", Type: machine.TypeArray}, {Name: "score", Type: machine.TypeNumber}, {Name: "fixed", Type: machine.TypeBoolean},
			{Name: "where", Type: machine.TypeObject}, {Name: `say "<hi>"`, Type: machine.TypeString}}},
		{Format: machine.FormatJSON, Fields: []machine.Field{{Name: "verdict"}}, FailWhen: "errors"},
		{Format: machine.FormatJSON, Fields: []machine.Field{{Name: "errors"}}, FailWhen: "errors"},
	} {
		w.Agent = "a"
		roles = append(roles, Role{State: "s", Work: w})
	}
	for _, r := range roles {
		brief := Brief(r, Facts{Description: "d"}, Context{})
		file, err := filled(brief)
		if err != nil {
			t.Errorf("%s (%s): %v", r.State, r.Format, err)
			continue
		}
		if _, err := CheckArtifact(r, []byte(file)); err != nil {
			t.Errorf("%s (%s): the brief's template, filled in, is refused: %v\n%s", r.State, r.Format, err, brief)
		}
	}
	// And what the brief says is what is checked: a template without one
	// of its parts fails.
	md := Role{State: "s", Work: machine.Work{Format: machine.FormatMarkdown, Sections: []string{"Overview", "Fix first"}}}
	file, _ := filled(Brief(md, Facts{}, Context{}))
	if _, err := CheckArtifact(md, []byte(strings.Replace(file, "## Fix first", "## Later", 1))); err == nil {
		t.Errorf("a file without a section the brief gives passed the check")
	}
}

// TestBriefStatesTheFormat: each format's rules are said in the brief,
// once, and nowhere in an agent file (tests/plugin checks the agents).
func TestBriefStatesTheFormat(t *testing.T) {
	for state, wants := range map[string][]string{
		"test":      {"whole numbers, always present", "leave the field out when you did not measure", "do not write null or \"N/A\""},
		"plan":      {"`### Phase N: Name`", "`dependencies: [..]`", "nothing else on that line (no names, no comments)"},
		"research":  {"## Executive Summary", "## Key Findings"},
		"implement": {"## Files Modified"},
	} {
		got := Brief(role(state), Facts{}, Context{})
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("the %s brief does not say %q:\n%s", state, want, got)
			}
		}
	}
	triage := Role{State: "analyse", Work: machine.Work{Format: machine.FormatJSON, Fields: []machine.Field{
		{Name: "file"}, {Name: "severity", Values: []string{"low", "medium", "high"}}, {Name: "issues", Type: machine.TypeArray}}}}
	want := "- `file`: any value but null\n- `severity`: a string, one of `low`, `medium`, `high`\n- `issues`: an array\n\n" +
		"```json\n{\n  \"file\": \"<file>\",\n  \"severity\": \"low\",\n  \"issues\": []\n}\n```\n"
	if got := Brief(triage, Facts{}, Context{}); !strings.HasSuffix(got, want) {
		t.Errorf("the brief of a json state:\n%s\nwant it to end\n%s", got, want)
	}
}
