//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// The flowstate plugin end to end: the real CLI runs the repository's
// commands, agents and hooks, with flowstate in the plugin's bin/, against
// the stand-in model. Each scenario checks the final state, the artifacts,
// the checkpoint and the event log.

func classification(scope string, topics ...string) *standin.Classification {
	return &standin.Classification{WorkflowType: scope, Confidence: 0.9, ResearchComplexity: len(topics),
		ResearchTopics: topics, Reasoning: "e2e scenario"}
}

// TestCoordinateResearchOnly: /coordinate, classified by the classifier
// agent as research-only with two topics, researches them flat (both
// workers in one message) and ends in research with the aggregate recorded.
// The hooks run for real: SessionStart's exports reach the bash blocks,
// SessionEnd drops the finished workflow's session pointer.
func TestCoordinateResearchOnly(t *testing.T) {
	s := flowstateScenario(t, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage")})
	const desc = "research how logins and sessions work"
	r := s.run("/flowstate:coordinate " + desc)

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                               "complete",
		"command":                              "coordinate",
		"workflow_description":                 desc,
		"session_id":                           r.Session,
		"state_machine.current_state":          "research",
		"state_machine.completed_states|@ugly": `["initialize","research"]`,
		"state_machine.workflow_config.terminal_state":                               "research",
		"state_machine.classification.workflow_type":                                 "research-only",
		"state_machine.classification.research_topics|@ugly":                         `["Auth patterns","Session storage"]`,
		"phase_data.research.coordination":                                           "flat",
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched": 2,
		"supervisor_state.research_supervisor.aggregated_metadata.reports_created.#": 2,
		"error_state.last_error":                                                     nil,
		"error_state.failed_state":                                                   nil,
		"error_state.retry_count":                                                    0,
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed"})
	reports := w.expectArtifacts(s.Project, "research", "reports", 2)
	w.expectWorkerSignals(s.Model, "research-specialist", "research_supervisor")
	w.expectEvents("initialize research", map[string]int{"init": 1, "worker": 2, "finish": 1, "error": 0})
	expectAgents(t, s.Model, map[string]int{"workflow-classifier": 1, "research-specialist": 2})
	if got := batches(s.Model, "research-specialist"); fmt.Sprint(got) != "[2]" {
		t.Errorf("research-specialist invoked in batches %v, want both in one message [2]", got)
	}
	if !s.exists(filepath.Join(".flowstate/specs", w.ID, "classification.json")) {
		t.Errorf("the classifier's classification.json is missing")
	}
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=2", "ARTIFACT_2="+reports[1])
	s.expectHookExports(r)
	s.expectPointer(r, w, false)

	// A bash block of a later session sees the SessionStart exports and
	// finds the workflow through them.
	probe := s.run("Run this block:\n\n```bash\nprintf 'PROJECT=%s\\nBIN=%s\\n' \"$CLAUDE_PROJECT_DIR\" \"$FLOWSTATE_BIN\"\nflowstate list\n```\n")
	expectOutput(t, probe, "PROJECT="+s.Project+"\n", "BIN="+filepath.Join(s.Plugin, "bin", "flowstate")+"\n", w.ID)
}

// expectOutput checks that the CLI's stdout (the model's final answer)
// contains every string of want.
func expectOutput(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("claude -p %q: stdout lacks %q:\n%s", r.Prompt, s, r.Stdout)
		}
	}
}

// TestCoordinateResearchAndPlan: four topics make research hierarchical:
// /coordinate hands the phase to research-sub-supervisor, which starts the
// four research-specialists in one message; then plan-architect writes the
// plan and the workflow ends in plan.
func TestCoordinateResearchAndPlan(t *testing.T) {
	topics := []string{"Auth patterns", "Session storage", "Token rotation", "Audit logging"}
	s := flowstateScenario(t, standin.Knobs{Classification: classification("research-and-plan", topics...)})
	r := s.run("/flowstate:coordinate study auth, sessions, tokens and auditing, then plan the login rework")

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                                     "complete",
		"state_machine.current_state":                "plan",
		"state_machine.completed_states|@ugly":       `["initialize","research","plan"]`,
		"state_machine.classification.workflow_type": "research-and-plan",
		"phase_data.research.coordination":           "hierarchical",
		"phase_data.plan.coordination":               "flat",
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched": 4,
		"error_state.last_error": nil,
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed", "research_3": "completed", "research_4": "completed"})
	w.expectWorkers("plan_architect", map[string]string{"plan_1": "completed"})
	w.expectArtifacts(s.Project, "research", "reports", 4)
	plan := w.expectArtifacts(s.Project, "plan", "plans", 1)
	if len(plan) == 1 && !strings.Contains(s.read(plan[0]), "### Phase 4: Integration\ndependencies: [2, 3]") {
		t.Errorf("the plan %s is not the plan-architect's:\n%s", plan[0], s.read(plan[0]))
	}
	w.expectWorkerSignals(s.Model, "research-specialist", "research_supervisor")
	w.expectSupervisorSignal(s.Model, "research-sub-supervisor", "research_supervisor", 1)
	w.expectEvents("initialize research plan", map[string]int{"worker": 5, "finish": 1, "error": 0})
	expectAgents(t, s.Model, map[string]int{"workflow-classifier": 1, "research-sub-supervisor": 1, "research-specialist": 4, "plan-architect": 1})

	// The four workers: started by the sub-supervisor, in one assistant
	// message, and Claude Code ran them as one batch (their four results
	// came back in one user message).
	if got := batches(s.Model, "research-specialist"); fmt.Sprint(got) != "[4]" {
		t.Errorf("research-specialist invoked in batches %v, want all four in one message [4]", got)
	}
	for _, c := range agentCalls(s.Model) {
		if c.Persona == "research-specialist" && c.Caller != "research-sub-supervisor" {
			t.Errorf("a research-specialist was started by %q, want research-sub-supervisor", c.Caller)
		}
	}
	if n := s.mostToolResults("sub-research-sub-supervisor"); n != 4 {
		t.Errorf("research-sub-supervisor got at most %d tool results in one message, want the 4 workers' together", n)
	}
	expectOutput(t, r, "FINAL_STATE=plan", "ARTIFACT_COUNT=5")
	s.expectHookExports(r)
	s.expectPointer(r, w, false)
}

// TestCoordinateFullImplementationRetry: the whole route. The first test
// run fails (FailTestRuns), so flowstate records the error, spends one
// retry, sends the failure to debug-analyst and tests again; the second run
// passes and doc-writer finishes the workflow.
func TestCoordinateFullImplementationRetry(t *testing.T) {
	s := flowstateScenario(t, standin.Knobs{Classification: classification("full-implementation", "Auth patterns", "Session storage"), FailTestRuns: 1})
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                      "complete",
		"state_machine.current_state": "complete",
		"state_machine.classification.workflow_type": "full-implementation",
		"phase_data.research.coordination":           "flat",
		"phase_data.implement.coordination":          "hierarchical",
		"phase_data.test.coordination":               "hierarchical",
		"error_state.retries.test":                   1,
		// Leaving test forward (to document) ends the error; the retry stays counted.
		"error_state.last_error":   nil,
		"error_state.failed_state": nil,
	})
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	w.expectWorkers("testing_supervisor", map[string]string{"test_unit_r1": "completed", "test_integration_r1": "completed", "test_unit_r2": "completed", "test_integration_r2": "completed"})
	w.expectWorkers("debug_analyst", map[string]string{"debug_1": "completed"})
	w.expectWorkers("doc_writer", map[string]string{"document_1": "completed"})
	w.expectArtifacts(s.Project, "implement", "summaries", 4)
	w.expectArtifacts(s.Project, "debug", "debug", 1)
	w.expectArtifacts(s.Project, "document", "summaries", 1)
	// FailTestRuns: 1 fails the first results file written (unit or
	// integration, they run in parallel), so run 1 has one failing test.
	for run, want := range map[int]int64{1: 1, 2: 0} {
		var failed int64
		for _, kind := range []string{"unit", "integration"} {
			f := filepath.Join(".flowstate/specs", w.ID, "tests", fmt.Sprintf("r%d_%s_results.json", run, kind))
			failed += gjsonFile(t, s.path(f), "tests_failed").Int()
		}
		if failed != want {
			t.Errorf("test run %d: %d failing tests in its results, want %d", run, failed, want)
		}
	}
	w.expectEvents("initialize research plan implement test debug test document complete",
		map[string]int{"error": 1, "retry": 1, "finish": 0})
	for _, e := range w.events {
		switch e.Get("event").String() {
		case "error":
			if e.Get("state").String() != "test" || !strings.Contains(e.Get("error").String(), "TestStandInFailure") {
				t.Errorf("error event %s: want the test state and the failing test's name", e.Raw)
			}
		case "retry":
			if e.Get("state").String() != "test" || e.Get("retry").Int() != 1 {
				t.Errorf("retry event %s: want the first retry of test", e.Raw)
			}
		}
	}
	expectAgents(t, s.Model, map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1,
		"implementation-sub-supervisor": 1, "implementation-executor": 4, "testing-sub-supervisor": 2, "test-specialist": 4,
		"debug-analyst": 1, "doc-writer": 1})
	if got := batches(s.Model, "implementation-executor"); fmt.Sprint(got) != "[1 2 1]" {
		t.Errorf("implementation-executor waves %v, want the plan's diamond [1 2 1]", got)
	}
	for _, c := range agentCalls(s.Model) {
		if c.Persona == "debug-analyst" && !strings.Contains(c.Prompt, "TestStandInFailure") {
			t.Errorf("debug-analyst was not told the failing test:\n%s", c.Prompt)
		}
	}
	w.expectSupervisorSignal(s.Model, "implementation-sub-supervisor", "implementation_supervisor", 1)
	w.expectSupervisorSignal(s.Model, "testing-sub-supervisor", "testing_supervisor", 2)
	w.expectWorkerSignals(s.Model, "implementation-executor", "implementation_supervisor")
	expectOutput(t, r, "FINAL_STATE=complete")
	s.expectHookExports(r)
	s.expectPointer(r, w, false)
}
