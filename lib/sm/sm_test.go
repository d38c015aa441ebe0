package sm

import (
	"testing"

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
