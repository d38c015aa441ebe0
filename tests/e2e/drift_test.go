//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// TestBackgroundAgentsWithoutTheForegroundHook: with the PreToolUse hook
// taken out, agents launched without run_in_background really run in the
// background, and each next block runs while they work. phase-start
// --classified and phase-verify tell agents at work (from the
// SubagentStart and SubagentStop records) from agents that did not
// deliver: they wait, loop back (NEXT=classified, NEXT=verify) when the
// agents take longer than FLOWSTATE_WAIT, and the workflow completes with
// every worker run once.
func TestBackgroundAgentsWithoutTheForegroundHook(t *testing.T) {
	s := flowstateScenario(t, standin.Drift{Background: true}, standin.Knobs{
		Classification: classification("full-implementation", "Auth patterns", "Session storage"),
		SlowAgent:      "research-specialist", SlowDelay: 3 * time.Second,
	})
	s.removeHook("PreToolUse")
	s.Env = append(s.Env, "FLOWSTATE_WAIT=1s")
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "error_state.last_error": nil})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed"})
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	expectAgents(t, s.Model, map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1,
		"implementation-sub-supervisor": 1, "implementation-executor": 4, "testing-sub-supervisor": 1, "test-specialist": 2, "doc-writer": 1})
	if n := s.Model.BackgroundAgents(); n < 5 {
		t.Errorf("Claude Code ran %d agents in the background, want every one the main thread launched: the race was not tested", n)
	}
	waited := 0
	for _, out := range s.Model.BashResults() {
		if strings.Contains(out, "NEXT=verify") && strings.Contains(out, "RUNNING=") {
			waited++
		}
	}
	if waited == 0 {
		t.Errorf("phase-verify never waited for the slow research workers")
	}
	expectOutput(t, r, "FINAL_STATE=complete")
}
