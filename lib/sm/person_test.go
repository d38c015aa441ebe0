package sm

import "testing"

func TestActorFrom(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Actor
	}{
		{map[string]string{"FLOWSTATE_USER": "ana", "USER": "ci", "LOGNAME": "x"}, Actor{By: "ana", Via: "shell"}},
		{map[string]string{"FLOWSTATE_USER": "  ", "USER": "bo"}, Actor{By: "bo", Via: "shell"}},
		{map[string]string{"LOGNAME": "cy", "CLAUDE_CODE_SESSION_ID": "s1"}, Actor{By: "cy", Via: "claude-code"}},
		{map[string]string{"USER": "two\nlines"}, Actor{By: "two lines", Via: "shell"}},
		{nil, Actor{By: "unknown", Via: "shell"}},
	} {
		if got := ActorFrom(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("ActorFrom(%v) = %+v, want %+v", c.env, got, c.want)
		}
	}
}

// TestRewindBeforeAnyStateIsDone: rewinding a workflow to its current
// state before it completed any (its first state's work done again)
// leaves completed_states an empty array; it was written as null, and
// the write refused as invalid.
func TestRewindBeforeAnyStateIsDone(t *testing.T) {
	w := newWorkflow(t, "initialize")
	if err := Rewind(w, "initialize", Actor{By: "ann"}, "start over"); err != nil {
		t.Fatal(err)
	}
	st, err := Current(w)
	if err != nil {
		t.Fatal(err)
	}
	if st.CurrentState != "initialize" || len(st.CompletedStates) != 0 || st.Status != "in_progress" {
		t.Errorf("after the rewind: %+v", st)
	}
}
