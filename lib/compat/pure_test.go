package compat

import (
	"slices"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
)

func TestPhases(t *testing.T) {
	for _, tc := range []struct{ phase, state string }{
		{"0", "initialize"}, {"1", "research"}, {"2", "plan"}, {"3", "implement"}, {"4", "test"},
		{"5", "debug"}, {"6", "document"}, {"7", "complete"},
	} {
		if got := phaseState(tc.phase); got != tc.state {
			t.Errorf("phaseState(%s) = %s, want %s", tc.phase, got, tc.state)
		}
		if got := statePhase(tc.state); got != tc.phase {
			t.Errorf("statePhase(%s) = %s, want %s", tc.state, got, tc.phase)
		}
	}
	for _, p := range []string{"8", "-1", "01", "", "x"} {
		if got := phaseState(p); got != "initialize" {
			t.Errorf("phaseState(%q) = %s, want initialize", p, got)
		}
	}
	for _, s := range []string{"nowhere", "", "Research"} {
		if got := statePhase(s); got != "0" {
			t.Errorf("statePhase(%q) = %s, want 0", s, got)
		}
	}
}

// TestEntered: the original's COMPLETED_STATES from flowstate's record
// of the states left.
func TestEntered(t *testing.T) {
	for _, tc := range []struct {
		completed []string
		current   string
		want      []string
	}{
		{nil, "initialize", []string{}},
		{[]string{"initialize"}, "research", []string{"research"}},
		{[]string{"initialize", "research"}, "plan", []string{"research", "plan"}},
		{[]string{"initialize", "research", "plan"}, "plan", []string{"research", "plan"}}, // finished in plan
		{[]string{"initialize", "implement", "test", "debug"}, "test", []string{"implement", "test", "debug"}},
		{[]string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"}, "complete",
			[]string{"research", "plan", "implement", "test", "debug", "document", "complete"}},
	} {
		if got := entered(tc.completed, tc.current, "initialize"); !slices.Equal(got, tc.want) {
			t.Errorf("entered(%q, %s) = %q, want %q", tc.completed, tc.current, got, tc.want)
		}
	}
}

func TestConstants(t *testing.T) {
	got := constants([]string{"initialize", "code-review", "file", "a-b", "a_b", "transitions"})
	want := [][2]string{{"STATE_INITIALIZE", "initialize"}, {"STATE_CODE_REVIEW", "code-review"}}
	if !slices.Equal(got, want) {
		t.Errorf("constants = %q, want %q", got, want)
	}
}

// TestResembles: the second argument of sm_transition that reads like a
// state is refused, not taken as a reason.
func TestResembles(t *testing.T) {
	states := []string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"}
	for word, want := range map[string]string{
		"planning": "plan", "planned": "plan", "implementation": "implement", "testing": "test",
		"documentation": "document", "debugging": "debug", "completion": "complete", "initialization": "initialize",
		"Planning": "plan", "impl": "implement", "researched": "research",
		"done": "", "retry": "", "ok": "", "research complete": "", "tests failed": "", "resume": "", "": "",
	} {
		if got := resembles(word, states); got != want {
			t.Errorf("resembles(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestForms(t *testing.T) {
	now := time.Unix(1700000000, 123)
	for _, tc := range []struct{ name, got, want string }{
		{"uniqueID", uniqueID("plan", now), "plan_1700000000000000123"},
		{"recoveredID", recoveredID("plan", now), "plan_1700000000_recovered"},
		{"recoveredID without command", recoveredID("", now), "workflow_1700000000_recovered"},
		{"jqPath", jqPath(".a.b[0].c"), "a.b.0.c"},
		{"jqPath bare", jqPath("a"), "a"},
		{"jqPath root", jqPath("."), ""},
		{"jsonText", jsonText([]string{"<a> & b", `"q"`}), `["<a> & b","\"q\""]`},
		{"plansDescription", plansDescription([]string{"a.md", "b.md"}), "revise a.md and b.md"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	for s, want := range map[string]bool{`{"a":1}`: true, "  {": true, "[1]": false, "x": false, "": false} {
		if isObject(s) != want {
			t.Errorf("isObject(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"PLAN_PATH": true, "A": true, "plan_path": false, "coordinate_123": false, "_X": false, "A-B": false} {
		if keyForm().MatchString(s) != want {
			t.Errorf("keyForm(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"plan_123": true, "plan_123_recovered": true, "plan": false, "Plan_1": false, "plan_1_2": false} {
		if workflowIDForm().MatchString(s) != want {
			t.Errorf("workflowIDForm(%q) = %v", s, !want)
		}
	}
}

func TestTopics(t *testing.T) {
	if got := genericTopics("3"); !slices.Equal(got, []string{"Topic 1", "Topic 2", "Topic 3"}) {
		t.Errorf("genericTopics(3) = %q", got)
	}
	for _, n := range []string{"", "0", "5", "x"} {
		if got := genericTopics(n); len(got) != 2 {
			t.Errorf("genericTopics(%q) = %q, want 2", n, got)
		}
	}
	if got := topics("Research the auth module and plan the session store migration", ""); !slices.Equal(got, []string{"Auth Module", "Session Store Migration"}) {
		t.Errorf("topics = %q", got)
	}
	if got := topics("   ", "1"); !slices.Equal(got, []string{"Topic 1"}) {
		t.Errorf("topics of a blank description = %q", got)
	}
}

func TestBulkKey(t *testing.T) {
	for k, want := range map[string]bool{"A": true, "A_1": true, "_A": true, "a": false, "1A": false, "A-B": false, "": false} {
		if bulkKey(k) != want {
			t.Errorf("bulkKey(%q) = %v", k, !want)
		}
	}
}

// TestLastTransition: a scope that ends before complete ends there the
// way flowstate finishes a workflow; the original's view shows it in
// complete.
func TestLastTransition(t *testing.T) {
	m := machine.Default()
	if got := final(m); got != "complete" {
		t.Errorf("final = %q", got)
	}
	two := &machine.Machine{Transitions: map[string][]string{"a": {"b", "c"}, "b": {}, "c": {}}}
	if got := final(two); got != "" {
		t.Errorf("final of a machine with two ends = %q", got)
	}
	for _, tc := range []struct {
		status, current, terminal, to string
		finishing                     bool
		shown                         string
	}{
		{"in_progress", "plan", "plan", "complete", true, "plan"},
		{"in_progress", "research", "plan", "complete", false, "research"},
		{"in_progress", "plan", "plan", "implement", false, "plan"},
		{"complete", "plan", "plan", "complete", true, "complete"},
		{"failed", "plan", "plan", "complete", false, "plan"},
		{"abandoned", "research", "plan", "complete", false, "research"},
		{"complete", "complete", "complete", "complete", false, "complete"},
		{"in_progress", "document", "complete", "complete", false, "document"},
	} {
		st := sm.Status{Status: tc.status, CurrentState: tc.current, TerminalState: tc.terminal}
		if got := finishing(st, m, tc.to); got != tc.finishing {
			t.Errorf("finishing(%+v, %s) = %v", st, tc.to, got)
		}
		if got := shown(st, m); got != tc.shown {
			t.Errorf("shown(%+v) = %s, want %s", st, got, tc.shown)
		}
	}
}

// TestParseMachine: the three forms the original's sm_load read.
func TestParseMachine(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      savedMachine
	}{
		{"a checkpoint's section", `{"state_machine": {"current_state": "plan", "completed_states": ["initialize", "research"],
			"workflow_config": {"scope": "research-and-plan", "description": "d", "command": "/coordinate"}}}`,
			savedMachine{current: "plan", scope: "research-and-plan", description: "d", command: "/coordinate", completed: []string{"initialize", "research"}}},
		{"what sm_save wrote", `{"current_state": "research", "completed_states": ["research"], "workflow_config": {"scope": "research-only"}}`,
			savedMachine{current: "research", scope: "research-only", completed: []string{"research"}}},
		{"no scope", `{"current_state": "implement"}`, savedMachine{current: "implement", scope: "full-implementation"}},
		{"a 1.3 checkpoint's phases", `{"workflow_state": {"current_phase": 3, "completed_phases": [1, 2]}, "state_machine": null}`,
			savedMachine{current: "implement", scope: "full-implementation", completed: []string{"research", "plan"}}},
		{"nothing", `{}`, savedMachine{current: "initialize", scope: "full-implementation"}},
	} {
		if got := parseMachine([]byte(tc.doc)); got.current != tc.want.current || got.scope != tc.want.scope ||
			got.description != tc.want.description || got.command != tc.want.command || !slices.Equal(got.completed, tc.want.completed) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestLeft: a saved machine's completed states in flowstate's form, the
// states left, whichever form the file held.
func TestLeft(t *testing.T) {
	for _, tc := range []struct {
		completed []string
		current   string
		want      []string
	}{
		{[]string{"research", "plan"}, "plan", []string{"initialize", "research"}},       // the original's: states entered
		{[]string{"initialize", "research"}, "plan", []string{"initialize", "research"}}, // flowstate's: states left
		{nil, "research", []string{"initialize"}},
		{nil, "initialize", []string{}},
		{[]string{"research", "research"}, "plan", []string{"initialize", "research"}},
	} {
		if got := left(tc.completed, tc.current, "initialize"); !slices.Equal(got, tc.want) {
			t.Errorf("left(%q, %s) = %q, want %q", tc.completed, tc.current, got, tc.want)
		}
	}
}

// TestCommandOfID: the command a workflow id from
// generate_unique_workflow_id names, the command of a workflow before
// sm_init names one.
func TestCommandOfID(t *testing.T) {
	for id, want := range map[string]string{
		"plan_1762798806": "plan", "coordinate_1795291157304325067": "coordinate", "repair_1762798806_recovered": "repair",
		"build_plan_1": "build_plan", "test_wf": "workflow", "workflow_123": "workflow", "x": "workflow", "a-b_2": "a-b",
		"Plan_1": "plan",
	} {
		if got := commandOfID(id); got != want {
			t.Errorf("commandOfID(%s) = %s, want %s", id, got, want)
		}
	}
}

// TestOnlyAssigns: a state file flowstate did not write is handed out
// only when sourcing it can do nothing but assign variables that run
// nothing later.
func TestOnlyAssigns(t *testing.T) {
	for text, want := range map[string]bool{
		"": true,
		"# comment\n\nexport A=\"x y\"\nB=plain\n": true,
		`export D="a \"quoted\" \\ word"`:          true,
		"export S='$(not run)'":                    true,
		`export A="$(touch pwned)"`:                false,
		"export A=\"`touch pwned`\"":               false,
		`export A="${HOME}"`:                       false,
		"export A=$(touch pwned)":                  false,
		"touch pwned":                              false,
		"export A=\"x\"; touch pwned":              false,
		`export BASH_ENV="evil.sh"`:                false,
		`PATH="/nowhere"`:                          false,
		"export A=\"two\nlines\"":                  false,
	} {
		if got := onlyAssigns([]byte(text)); got != want {
			t.Errorf("onlyAssigns(%q) = %v, want %v", text, got, want)
		}
	}
}
