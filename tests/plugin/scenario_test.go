package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hostile is a description a shell would execute if it were interpolated.
const hostile = "Compare \"auth\" flows $(touch PWNED) `touch PWNED2` ${HOME} 'quoted' \\ end"

func classification(scope string, topics ...string) string {
	q := make([]string, len(topics))
	for i, t := range topics {
		q[i] = `"` + t + `"`
	}
	return `{"workflow_type": "` + scope + `", "confidence": 0.9, "research_complexity": ` + strconv.Itoa(len(topics)) +
		`, "research_topics": [` + strings.Join(q, ", ") + `], "reasoning": "test"}`
}

func (w *world) exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestRunOrchestrateResearchOnly runs /orchestrate for a research-only
// scope block by block: the description reaches flowstate unexecuted, one
// research worker writes its report, the workflow ends at research.
func TestRunOrchestrateResearchOnly(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	out, err := w.command("orchestrate", "--scope research-only "+hostile)
	if err != nil {
		t.Fatalf("orchestrate: %v\n%s", err, out)
	}
	if !strings.Contains(out, "NEXT=done") || !strings.Contains(out, "ARTIFACT_COUNT=1") {
		t.Errorf("the last block did not finish the workflow:\n%s", out)
	}
	if w.exists(filepath.Join(w.Dir, "PWNED")) || w.exists(filepath.Join(w.Dir, "PWNED2")) {
		t.Fatal("the description was executed")
	}
	if got := w.flowstate("checkpoint-get", "workflow_description"); got != hostile {
		t.Errorf("description stored as %q, want %q", got, hostile)
	}
	if got := w.agentsInvoked(); got["research-specialist"] != 1 || len(got) != 1 {
		t.Errorf("agents invoked: %v, want one research-specialist", got)
	}
	if got := w.flowstate("checkpoint-get", "state_machine.current_state"); got != "research" {
		t.Errorf("current state %s, want research", got)
	}
	if got := w.flowstate("checkpoint-get", "supervisor_state.research_supervisor.workers.0.status"); got != "completed" {
		t.Errorf("research worker recorded %s", got)
	}
	if got := w.flowstate("checkpoint-get", "phase_data.research.artifacts.0"); !w.exists(got) {
		t.Errorf("phase_data.research.artifacts names %q, which does not exist", got)
	}
	// start (which plans the research), phase-verify (which finds the
	// workflow done): each its own process; one bash block per phase.
	if w.Blocks != 2 {
		t.Errorf("%d bash blocks ran, want 2", w.Blocks)
	}
}

func TestRunOrchestrateNeedsScope(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	if _, err := w.command("orchestrate", "just a description"); err == nil || !strings.Contains(err.Error(), "--scope SCOPE") {
		t.Errorf("want a usage error naming --scope, got %v", err)
	}
}

// TestRunCoordinateFullImplementation goes through every phase with the
// classifier agent: four topics go through the sub-supervisor, the
// four-phase plan through it in three waves, two test types through it
// (twice); the first test run fails,
// so debug runs once and the tests run again.
func TestRunCoordinateFullImplementation(t *testing.T) {
	w := newWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth", "Sessions", "Tokens", "Storage"), FailTestRuns: 1})
	out, err := w.command("coordinate", "build login with sessions")
	if err != nil {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	if got := w.flowstate("checkpoint-get", "state_machine.current_state"); got != "complete" {
		t.Fatalf("current state %s, want complete\n%s", got, out)
	}
	want := map[string]int{"workflow-classifier": 1, "sub-supervisor": 4, "research-specialist": 4, "plan-architect": 1,
		"implementation-executor": 4, "test-specialist": 4,
		"debug-analyst": 1, "doc-writer": 1}
	got := w.agentsInvoked()
	for a, n := range want {
		if got[a] != n {
			t.Errorf("%s invoked %d times, want %d (all: %v)", a, got[a], n, got)
		}
	}
	var waves []int
	for _, b := range w.Batches {
		if b[0].Agent == "implementation-executor" {
			waves = append(waves, len(b))
		}
	}
	if fmt.Sprint(waves) != "[1 2 1]" {
		t.Errorf("implementation waves %v, want [1 2 1]", waves)
	}
	if got := w.flowstate("checkpoint-get", "error_state.retries.test"); got != "1" {
		t.Errorf("test retries %s, want 1", got)
	}
	if got := w.flowstate("checkpoint-get", "supervisor_state.research_supervisor.aggregated_metadata.topics_researched"); got != "4" {
		t.Errorf("research aggregate topics %s, want 4", got)
	}
	if got := w.flowstate("checkpoint-get", "phase_data.implement.coordination"); got != "hierarchical" {
		t.Errorf("implementation coordination %s, want hierarchical", got)
	}
	if got := w.flowstate("checkpoint-get", "status"); got != "complete" {
		t.Errorf("status %s, want complete", got)
	}
}

// TestRunSuperviseSequential: /supervise runs one worker per step and no
// sub-supervisor, even for four topics.
func TestRunSuperviseSequential(t *testing.T) {
	w := newWorld(t, fakeAgents{Classification: classification("research-and-plan", "A", "B", "C", "D")})
	if out, err := w.command("supervise", "study A to D and plan"); err != nil {
		t.Fatalf("supervise: %v\n%s", err, out)
	}
	for _, b := range w.Batches {
		if len(b) != 1 || strings.HasSuffix(b[0].Agent, "sub-supervisor") {
			t.Errorf("batch %v: want one worker, no supervisor", b)
		}
	}
	if got := w.agentsInvoked(); got["research-specialist"] != 4 || got["plan-architect"] != 1 {
		t.Errorf("agents invoked: %v", got)
	}
	if got := w.flowstate("checkpoint-get", "state_machine.current_state"); got != "plan" {
		t.Errorf("current state %s, want plan", got)
	}
}

// TestRunMissingWorkerThenRetry: two of three workers deliver; the
// command finishes with the third's failure accepted and warned about, and
// /workflow-resume --retry-failed runs that worker alone.
func TestRunMissingWorkerThenRetry(t *testing.T) {
	w := newWorld(t, fakeAgents{Classification: classification("research-only", "Alpha", "Beta", "Gamma"), Missing: "Beta"})
	out, err := w.command("coordinate", "research alpha beta gamma")
	if err != nil || !strings.Contains(out, "ARTIFACT_COUNT=2") {
		t.Fatalf("coordinate: want it to finish with two reports: %v\n%s", err, out)
	}
	if got := w.flowstate("checkpoint-get", "phase_data.research.partial_failures"); got != `["research_2"]` {
		t.Errorf("partial failures %s, want [\"research_2\"]", got)
	}
	w.Agents.Missing, w.Invoked = "", nil
	if out, err = w.command("workflow-resume", "--retry-failed"); err != nil {
		t.Fatalf("workflow-resume --retry-failed: %v\n%s", err, out)
	}
	if len(w.Invoked) != 1 || !strings.Contains(w.Invoked[0].Prompt, "Topic: Beta") {
		t.Errorf("the retry invoked %v, want only the Beta worker", w.Invoked)
	}
	if !strings.Contains(out, "ARTIFACT_COUNT=3") {
		t.Errorf("the retry did not finish with three reports:\n%s", out)
	}
}

// TestRunMissingWorkerThenResume: with fewer than two workers delivered,
// the command stops with the missing file named; /workflow-resume re-runs
// only that worker.
func TestRunMissingWorkerThenResume(t *testing.T) {
	w := newWorld(t, fakeAgents{Classification: classification("research-only", "Alpha", "Beta"), Missing: "Beta"})
	_, err := w.command("coordinate", "research alpha and beta")
	if err == nil || !strings.Contains(err.Error(), "002_beta.md") {
		t.Fatalf("want a failure naming the missing report 002_beta.md, got %v", err)
	}
	w.Agents.Missing, w.Invoked = "", nil
	out, err := w.command("workflow-resume", "")
	if err != nil {
		t.Fatalf("workflow-resume: %v\n%s", err, out)
	}
	if len(w.Invoked) != 1 || !strings.Contains(w.Invoked[0].Prompt, "Topic: Beta") {
		t.Errorf("resume invoked %v, want only the Beta worker", w.Invoked)
	}
	if !strings.Contains(out, "ARTIFACT_COUNT=2") {
		t.Errorf("resume did not finish with two reports:\n%s", out)
	}
	w.Invoked = nil
	if out, err := w.command("workflow-resume", ""); err == nil || !strings.Contains(err.Error(), "no unfinished workflow") {
		t.Errorf("resuming a finished workflow: want 'no unfinished workflow', got %v\n%s", err, out)
	}
}

// TestRunRetriesExhausted: tests that keep failing go to debug twice (the
// retry budget), then the command stops with exit 3's message.
func TestRunRetriesExhausted(t *testing.T) {
	w := newWorld(t, fakeAgents{FailTestRuns: 99})
	_, err := w.command("orchestrate", "--scope test-and-debug make the login tests pass")
	if err == nil || !strings.Contains(err.Error(), "retries exhausted") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("want retries exhausted (exit 3), got %v", err)
	}
	if got := w.agentsInvoked(); got["test-specialist"] != 3 || got["debug-analyst"] != 2 || got["implementation-executor"] != 1 {
		t.Errorf("agents invoked: %v, want 3 test runs, 2 debug attempts, 1 implementation", got)
	}
	for _, inv := range w.Invoked {
		if inv.Agent == "debug-analyst" && !strings.Contains(inv.Prompt, "TestLogin") {
			t.Errorf("the debug analyst was not told the failing test:\n%s", inv.Prompt)
		}
	}
}

// TestRunCoordinateOffline: FLOWSTATE_CLASSIFICATION=offline classifies in
// the binary; no classifier agent runs.
func TestRunCoordinateOffline(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	w.Env = append(w.Env, "FLOWSTATE_CLASSIFICATION=offline")
	out, err := w.command("coordinate", "research how sessions expire")
	if err != nil {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	if got := w.agentsInvoked(); got["workflow-classifier"] != 0 || got["research-specialist"] == 0 {
		t.Errorf("agents invoked: %v", got)
	}
}

func TestRunWorkflowStatus(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	if _, err := w.command("orchestrate", "--scope research-only look around"); err != nil {
		t.Fatal(err)
	}
	out, err := w.command("workflow-status", "")
	if err != nil || !strings.Contains(out, "orchestrate · research-only · complete") || !strings.Contains(out, "✓ research") {
		t.Errorf("workflow-status: %v\n%s", err, out)
	}
}

// TestRunEveryScope: /orchestrate reaches each scope's terminal state with
// the agents its route needs and no others.
func TestRunEveryScope(t *testing.T) {
	tests := []struct {
		scope, final string
		agents       map[string]int
	}{
		{"research-only", "research", map[string]int{"research-specialist": 1}},
		{"research-and-plan", "plan", map[string]int{"research-specialist": 1, "plan-architect": 1}},
		{"research-and-revise", "plan", map[string]int{"research-specialist": 1, "plan-architect": 1}},
		{"debug-only", "debug", map[string]int{"research-specialist": 1, "plan-architect": 1, "debug-analyst": 1}},
		{"implement-only", "implement", map[string]int{"implementation-executor": 1}},
		{"test-and-debug", "complete", map[string]int{"implementation-executor": 1, "test-specialist": 1}},
		{"full-implementation", "complete", map[string]int{"research-specialist": 1, "plan-architect": 1,
			"sub-supervisor": 2, "implementation-executor": 4, "test-specialist": 2, "doc-writer": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			w := newWorld(t, fakeAgents{})
			out, err := w.command("orchestrate", "--scope "+tt.scope+" fix the login bug")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "FINAL_STATE="+tt.final+"\n") {
				t.Errorf("want FINAL_STATE=%s:\n%s", tt.final, out)
			}
			if got := w.agentsInvoked(); fmt.Sprint(got) != fmt.Sprint(tt.agents) {
				t.Errorf("agents invoked %v, want %v", got, tt.agents)
			}
		})
	}
}

// TestRunResumeMidWave: an executor of wave 2 delivers nothing; the
// supervisor reports the partial failure, the command stops naming the
// file, and the resumed workflow runs that phase and then wave 3 only.
func TestRunResumeMidWave(t *testing.T) {
	w := newWorld(t, fakeAgents{Missing: "Phase 3"})
	_, err := w.command("orchestrate", "--scope full-implementation add audit logging")
	if err == nil || !strings.Contains(err.Error(), "003_phase_3.md") {
		t.Fatalf("want a failure naming 003_phase_3.md, got %v", err)
	}
	if got := w.flowstate("checkpoint-get", "supervisor_state.implementation_supervisor.aggregated_metadata.partial_failures.0.worker_id"); got != "phase_3" {
		t.Errorf("the supervisor's aggregate lists %q as failed, want phase_3", got)
	}
	w.Agents.Missing, w.Invoked = "", nil
	if out, err := w.command("workflow-resume", ""); err != nil {
		t.Fatalf("workflow-resume: %v\n%s", err, out)
	}
	var executors []string
	for _, inv := range w.Invoked {
		if inv.Agent == "implementation-executor" {
			topic, _, _ := strings.Cut(inv.Prompt, "\n")
			executors = append(executors, topic)
		}
	}
	if fmt.Sprint(executors) != "[Topic: Phase 3: Interfaces Topic: Phase 4: Integration]" {
		t.Errorf("resume ran executors %v, want phases 3 and 4 only", executors)
	}
	if got := w.flowstate("checkpoint-get", "state_machine.current_state"); got != "complete" {
		t.Errorf("current state %s, want complete", got)
	}
}
