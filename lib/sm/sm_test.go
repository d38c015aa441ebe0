package sm

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// IsDerived must name exactly the keys Derived produces, or users could
// store a key that state-load then silently overrides.
func TestIsDerivedMatchesDerived(t *testing.T) {
	keys := Derived(&store.Workflow{ID: "w", P: &store.Project{Dir: "/p"}}, nil)
	for k := range keys {
		if !IsDerived(k) {
			t.Errorf("Derived produces %s but IsDerived says no", k)
		}
	}
	// One list: Derived produces exactly DerivedKeys, which is sorted.
	if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, DerivedKeys()) {
		t.Errorf("Derived produces %q, DerivedKeys() = %q", got, DerivedKeys())
	}
	for _, k := range []string{"FOO", "STATE_FILE", "current_state"} {
		if IsDerived(k) {
			t.Errorf("IsDerived(%s) = true", k)
		}
	}
}

func TestStatusOf(t *testing.T) {
	doc := []byte(`{"command":"coordinate","status":"in_progress",
	  "state_machine":{"current_state":"plan","completed_states":["initialize","research"],
	    "workflow_config":{"scope":"research-and-plan","terminal_state":"plan"}},
	  "error_state":{"last_error":"boom","failed_state":"plan","retry_count":1}}`)
	s := StatusOf("w1", doc)
	if s.WorkflowID != "w1" || s.Command != "coordinate" || s.Scope != "research-and-plan" || !s.IsTerminal ||
		len(s.CompletedStates) != 2 || s.LastError == nil || *s.LastError != "boom" || s.RetryCount != 1 {
		t.Errorf("StatusOf = %+v", s)
	}
	empty := StatusOf("w2", []byte(`{"error_state":{"last_error":null,"failed_state":null}}`))
	if empty.LastError != nil || empty.FailedState != nil || empty.CompletedStates == nil {
		t.Errorf("nulls: %+v", empty)
	}
}

// TestInitRefusesCommand: a command that is not a plain name, or one
// with a leading slash (/coordinate, as the bash libraries' commands
// pass it), is refused (exit 4) before anything is written, since
// sm-status prints it as a KEY=VALUE line.
func TestInitRefusesCommand(t *testing.T) {
	dir := t.TempDir()
	p, err := store.FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"x\nCURRENT_STATE=complete", "a b", "../x", "-flag", "a=b", "/", "//x", "/x\nA=b", "x/"} {
		_, _, err := Init(p, InitParams{Description: "d", Command: cmd, Scope: "research-only", Machine: machine.Default()})
		if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "--command") {
			t.Errorf("Init(--command %q) = %v, want an invalid --command", cmd, err)
		}
	}
	if list, err := p.List(); err != nil || len(list) != 0 {
		t.Errorf("a refused sm-init left workflows: %v %v", list, err)
	}
	w, _, err := Init(p, InitParams{Description: "d", Command: "coordinate", Scope: "research-only", Machine: machine.Default()})
	if err != nil {
		t.Fatalf("a plain command: %v", err)
	}
	doc, err := w.ReadCheckpoint()
	if err != nil || StatusOf(w.ID, doc).Command != "coordinate" {
		t.Errorf("command not stored: %v", err)
	}
	w, _, err = Init(p, InitParams{Description: "d", Command: "/repair", Scope: "debug-only", Machine: machine.Default()})
	if err != nil {
		t.Fatalf("a slash command: %v", err)
	}
	if doc, err = w.ReadCheckpoint(); err != nil || StatusOf(w.ID, doc).Command != "/repair" || !strings.HasPrefix(w.ID, "repair-") {
		t.Errorf("slash command: id %s, %v", w.ID, err)
	}
}

// TestDerived: every variable read from its place in the checkpoint.
func TestDerived(t *testing.T) {
	doc := []byte(`{"command":"coordinate","phase_data":{"research":{"k":1}},
	  "state_machine":{"current_state":"plan","completed_states":["initialize","research"],
	    "workflow_config":{"scope":"research-and-plan","terminal_state":"plan","description":"Add login"},
	    "classification":{"research_complexity":3,"research_topics":["auth", "sessions"]}},
	  "error_state":{"last_error":"boom","failed_state":"plan","retry_count":1}}`)
	got := Derived(&store.Workflow{ID: "w1", P: &store.Project{Dir: "/p"}}, doc)
	want := map[string]string{
		"WORKFLOW_ID": "w1", "CLAUDE_PROJECT_DIR": "/p", "COMMAND_NAME": "coordinate", "WORKFLOW_DESCRIPTION": "Add login",
		"WORKFLOW_SCOPE": "research-and-plan", "CURRENT_STATE": "plan", "TERMINAL_STATE": "plan",
		"COMPLETED_STATES": "initialize research", "COMPLETED_STATES_COUNT": "2", "RESEARCH_COMPLEXITY": "3",
		"RESEARCH_TOPICS_JSON": `["auth", "sessions"]`,
	}
	if !maps.Equal(got, want) {
		t.Errorf("Derived =\n%q\nwant\n%q", got, want)
	}
	empty := Derived(&store.Workflow{ID: "w2", P: &store.Project{}}, []byte(`{}`))
	if empty["COMPLETED_STATES_COUNT"] != "0" || empty["COMPLETED_STATES"] != "" || empty["RESEARCH_TOPICS_JSON"] != "[]" {
		t.Errorf("Derived of an empty document = %q", empty)
	}
}
