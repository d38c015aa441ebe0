package orchestrate

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/sm"
)

// TestLeftOverSupervisor: a sub-supervisor started in research, left
// running while the command moved on to plan, hands out nothing and ends
// with a signal saying so; the supervisor of the current state (or a step
// the hooks said nothing about) plans as before.
func TestLeftOverSupervisor(t *testing.T) {
	_, w := withTopics(t, "research-and-plan", "a", "b", "c", "d")
	agentEvent(t, w, agentrun.Start, "s1", "old-sup", "sub-supervisor", "")
	if out, err := Plan(w, Options{Supervisor: true, Agent: "old-sup"}); err != nil || value(t, out, "WORKER_COUNT") != "4" {
		t.Fatalf("the research supervisor in research: %v\n%s", err, out)
	}
	if _, err := sm.Transition(w, "plan", "moved on"); err != nil {
		t.Fatal(err)
	}
	out, err := Plan(w, Options{Supervisor: true, Agent: "old-sup"})
	if err != nil || value(t, out, "WORKER_COUNT") != "0" || value(t, out, "NEXT") != "verify" || len(out.Warnings) != 1 {
		t.Errorf("the left-over supervisor's plan: %v\n%s", err, out)
	}
	out, err = Verify(w, Options{Supervisor: true, Agent: "old-sup"})
	if err != nil || !strings.HasPrefix(out.Signal, "SUPERVISOR_FAILED: ") || !strings.Contains(out.Signal, "which is in state plan now") {
		t.Errorf("the left-over supervisor's verify: %v\n%s", err, out)
	}
	// An agent the hooks recorded no start of, or no agent named: the
	// step plans the current state as before.
	for _, o := range []Options{{Supervisor: true, Agent: "never-recorded"}, {Supervisor: true}} {
		if out, err := Plan(w, o); err != nil || value(t, out, "WORKER_COUNT") != "1" || len(out.Warnings) > 0 {
			t.Errorf("%+v: %v\n%s", o, err, out)
		}
	}
}
