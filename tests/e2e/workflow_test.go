//go:build e2e

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
func TestCoordinateResearchOnly(t *testing.T) { underEachMode(t, testCoordinateResearchOnly) }

func testCoordinateResearchOnly(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage")})
	s.Permissions = asPeopleRun
	const desc = "research how logins and sessions work"
	r := s.run("/flowstate:coordinate " + desc)
	s.expectNoDenials()
	// start, the classifier, the classified start (which plans research),
	// the two workers, the verify that finds the workflow done.
	s.expectCalls(6, 3)

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
		"phase_data.research.coordination":                                           s.coordination("flat"),
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
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2})
	if got := s.batches("research-specialist"); fmt.Sprint(got) != "[2]" {
		t.Errorf("research-specialist invoked in batches %v, want both in one message [2]", got)
	}
	if !s.exists(filepath.Join(".flowstate/specs", w.ID, "classification.json")) {
		t.Errorf("the classifier's classification.json is missing")
	}
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=2", "ARTIFACTS_DIR=.flowstate/specs/"+w.ID)
	if len(reports) != 2 {
		t.Errorf("reports %v", reports)
	}
	s.expectHookExports(r)
	s.expectPointer(r, w, false)

	// A bash block of a later session sees the SessionStart exports and
	// finds the workflow through them (a block the user typed is theirs to
	// allow: no command of flowstate's was invoked).
	s.Permissions = waived
	probe := s.run("Run this block:\n\n```bash\nprintf 'PROJECT=%s\\nBIN=%s\\n' \"$CLAUDE_PROJECT_DIR\" \"$FLOWSTATE_BIN\"\nflowstate list\n```\n")
	expectOutput(t, probe, "PROJECT="+s.Project+"\n", "BIN="+filepath.Join(s.Plugin, "bin", "flowstate")+"\n", w.ID)
}

// TestCoordinateResearchOnlyInstalled: the same research in a project
// install (./install.sh PROJECT: commands, agents and hooks in the
// project's .claude, no plugin), in Claude Code's default permission
// mode: nobody is asked about any of flowstate's steps or artifacts.
func TestCoordinateResearchOnlyInstalled(t *testing.T) {
	underEachMode(t, testCoordinateResearchOnlyInstalled)
}

func testCoordinateResearchOnlyInstalled(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage")})
	s.shell("install", s.Project)
	s.Plugin = ""
	s.Permissions = asPeopleRun
	r := s.run("/coordinate research how logins and sessions work")
	s.expectNoDenials()
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "command": "coordinate", "state_machine.current_state": "research"})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed"})
	w.expectArtifacts(s.Project, "research", "reports", 2)
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2})
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=2")
	s.expectPointer(r, w, false)
}

// TestClassifierAskedAgain: the classifier's first answer is malformed
// (a scope that does not exist, confidence as a word), as a model that
// paraphrases its instructions writes; the command asks once more, with
// what was wrong, and the workflow runs on the second answer.
func TestClassifierAskedAgain(t *testing.T) { underEachMode(t, testClassifierAskedAgain) }

func testClassifierAskedAgain(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage"),
		FirstClassification: `{"workflow_type": "research", "confidence": "high", "research_complexity": 2, "research_topics": ["Auth patterns", "Session storage"]}`})
	r := s.run("/flowstate:coordinate research how logins and sessions work")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.classification.workflow_type": "research-only"})
	s.expectAgents(map[string]int{"workflow-classifier": 2, "research-specialist": 2})
	var asks []string
	for _, c := range s.calls() {
		if c.Persona == "workflow-classifier" {
			asks = append(asks, c.Prompt)
		}
	}
	if len(asks) == 2 && (strings.Contains(asks[0], "refused") || !strings.Contains(asks[1], "[Your previous classification was refused: ")) {
		t.Errorf("the second ask does not say why the first answer was refused:\n%s", asks[1])
	}
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=2")
}

// TestClassifierOriginalForm: the classifier answers in the original
// design's form, CLASSIFICATION_COMPLETE: and topics as objects; it is
// taken as it is, and the topics' descriptions reach the researchers'
// brief.
func TestClassifierOriginalForm(t *testing.T) { underEachEngine(t, testClassifierOriginalForm) }

func testClassifierOriginalForm(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-only", "unused"),
		FirstClassification: `CLASSIFICATION_COMPLETE: {"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 2, "research_topics": [` +
			`{"short_name": "Auth patterns", "detailed_description": "How logins are checked today"}, ` +
			`{"short_name": "Session storage", "detailed_description": "Where sessions live and expire"}]}`})
	r := s.run("/flowstate:coordinate research how logins and sessions work")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.classification.research_topics|@ugly": `["Auth patterns","Session storage"]`})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2})
	for _, c := range s.calls() {
		if c.Persona == "research-specialist" && !strings.Contains(s.brief(c), "Where sessions live and expire") {
			t.Errorf("the researchers' brief lacks the topic's description:\n%s", s.brief(c))
		}
	}
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=2")
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
// /coordinate hands the phase to the sub-supervisor, which starts the
// four research-specialists in one message; then plan-architect writes the
// plan and the workflow ends in plan.
func TestCoordinateResearchAndPlan(t *testing.T) { underEachMode(t, testCoordinateResearchAndPlan) }

func testCoordinateResearchAndPlan(t *testing.T, m mode) {
	topics := []string{"Auth patterns", "Session storage", "Token rotation", "Audit logging"}
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-and-plan", topics...)})
	r := s.run("/flowstate:coordinate study auth, sessions, tokens and auditing, then plan the login rework")
	// start, classifier, classified start; the sub-supervisor and its
	// verify; plan-architect and its verify.
	s.expectCalls(7, 3)

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                                     "complete",
		"state_machine.current_state":                "plan",
		"state_machine.completed_states|@ugly":       `["initialize","research","plan"]`,
		"state_machine.classification.workflow_type": "research-and-plan",
		"phase_data.research.coordination":           s.coordination("hierarchical"),
		"phase_data.plan.coordination":               s.coordination("flat"),
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
	if !s.onWorkflow() {
		w.expectSupervisorSignal(s.Model, "research", "research_supervisor", 1)
	}
	w.expectEvents("initialize research plan", map[string]int{"worker": 5, "finish": 1, "error": 0})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "sub-supervisor": 1, "research-specialist": 4, "plan-architect": 1})

	// The four workers: started by the sub-supervisor, in one assistant
	// message, and Claude Code ran them as one batch (their four results
	// came back in one user message).
	if got := s.batches("research-specialist"); fmt.Sprint(got) != "[4]" {
		t.Errorf("research-specialist invoked in batches %v, want all four in one message [4]", got)
	}
	want := map[bool]string{false: "sub-supervisor", true: "workflow"}[s.onWorkflow()]
	for _, c := range s.calls() {
		if c.Persona == "research-specialist" && c.Caller != want {
			t.Errorf("a research-specialist was started by %q, want %s", c.Caller, want)
		}
	}
	if n := s.mostToolResults("sub-sub-supervisor"); n != 4 && !s.onWorkflow() {
		t.Errorf("sub-supervisor got at most %d tool results in one message, want the 4 workers' together", n)
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
	underEachMode(t, testCoordinateFullImplementationRetry)
}

func testCoordinateFullImplementationRetry(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("full-implementation", "Auth patterns", "Session storage"),
		FailTestRuns: 1, EditSource: true})
	// The implementers edit the person's source: that follows the
	// person's mode, here accepting edits; flowstate's own steps and
	// artifacts need nothing of it.
	s.Permissions = acceptEdits
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")
	s.expectNoDenials()
	s.expectSources(4)
	// 3 to start, then a task block and a verify per phase: research (2
	// workers), plan, implement and test (their sub-supervisors), debug,
	// test again, document.
	s.expectCalls(18, 3)

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                      "complete",
		"state_machine.current_state": "complete",
		"state_machine.classification.workflow_type": "full-implementation",
		"phase_data.research.coordination":           s.coordination("flat"),
		"phase_data.implement.coordination":          s.coordination("hierarchical"),
		"phase_data.test.coordination":               s.coordination("hierarchical"),
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
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1,
		"sub-supervisor": 3, "implementation-executor": 4, "test-specialist": 4,
		"debug-analyst": 1, "doc-writer": 1})
	if got := s.batches("implementation-executor"); fmt.Sprint(got) != "[1 2 1]" {
		t.Errorf("implementation-executor waves %v, want the plan's diamond [1 2 1]", got)
	}
	for _, c := range s.calls() {
		if c.Persona == "debug-analyst" && !strings.Contains(c.Prompt, "TestStandInFailure") {
			t.Errorf("debug-analyst was not told the failing test:\n%s", c.Prompt)
		}
	}
	if !s.onWorkflow() {
		w.expectSupervisorSignal(s.Model, "implement", "implementation_supervisor", 1)
		w.expectSupervisorSignal(s.Model, "test", "testing_supervisor", 2)
	} else {
		w.expectStepUsage()
	}
	w.expectWorkerSignals(s.Model, "implementation-executor", "implementation_supervisor")
	expectOutput(t, r, "FINAL_STATE=complete")
	s.expectHookExports(r)
	s.expectPointer(r, w, false)
}

// TestResumeAfterKill: the CLI is killed (SIGKILL to its process group)
// while an implementation-executor is working. The checkpoint keeps what
// was finished and the session pointer stays (no SessionEnd ran); a new
// session's /workflow-resume finishes the workflow, running the unfinished
// implementation worker again and nothing of research or plan.
func TestResumeAfterKill(t *testing.T) { underEachMode(t, testResumeAfterKill) }

func testResumeAfterKill(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{SlowAgent: "implementation-executor", SlowDelay: 10 * time.Minute})
	s.Permissions = acceptEdits // it implements: the person accepts the implementers' edits
	p := s.start("/flowstate:orchestrate --scope full-implementation add an audit log to the admin API")
	s.waitUntil("an implementation-executor is at work", time.Minute, func() bool { return s.Model.Served("implementation-executor") > 0 }, p)
	p.kill()
	killed := p.wait()
	t.Logf("killed after %s", killed.Wall.Round(time.Millisecond))
	if killed.ExitCode == 0 {
		t.Errorf("the killed CLI exited 0")
	}
	s.expectAgents(map[string]int{"research-specialist": 1, "plan-architect": 1, "sub-supervisor": 1, "implementation-executor": 1})
	if c := s.calls(); !strings.HasPrefix(c[len(c)-1].Prompt, "Topic: Phase 1: Foundation\n") {
		t.Errorf("the interrupted worker was %q, want the plan's phase 1", c[len(c)-1].Prompt)
	}

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                               "in_progress",
		"session_id":                           killed.Session,
		"state_machine.current_state":          "implement",
		"state_machine.completed_states|@ugly": `["initialize","research","plan"]`,
		"phase_data.implement.coordination":    s.coordination("hierarchical"),
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed"})
	w.expectWorkers("plan_architect", map[string]string{"plan_1": "completed"})
	w.expectWorkers("implementation_supervisor", map[string]string{})
	w.expectEvents("initialize research plan implement", map[string]int{"worker": 2, "finish": 0})
	s.expectPointer(killed, w, true)

	// A fresh stand-in: no SlowAgent, and its counters are the resume's own.
	s.restartModel(standin.Knobs{}, "resume")
	r := s.run("/flowstate:workflow-resume")
	s.expectNoDenials()
	for _, persona := range []string{"research-specialist", "plan-architect"} {
		if n := s.Model.Served(persona); n != 0 {
			t.Errorf("the resume sent %d %s requests, want none: its work was recorded", n, persona)
		}
	}
	s.expectAgents(map[string]int{"sub-supervisor": 2, "implementation-executor": 4,
		"test-specialist": 2, "doc-writer": 1})
	if c := workersOf(s.calls()); len(c) == 0 || c[0].Persona != "implementation-executor" || !strings.HasPrefix(c[0].Prompt, "Topic: Phase 1: Foundation\n") {
		t.Errorf("the resume's first worker is not phase 1's implementation-executor: %+v", c)
	}

	w = s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                               "complete",
		"session_id":                           r.Session,
		"state_machine.current_state":          "complete",
		"state_machine.completed_states|@ugly": `["initialize","research","plan","implement","test","document","complete"]`,
		"error_state.last_error":               nil,
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed"})
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	w.expectWorkers("doc_writer", map[string]string{"document_1": "completed"})
	w.expectEvents("initialize research plan implement test document complete", map[string]int{"worker": 2 + 4 + 2 + 1})
	expectOutput(t, r, "FINAL_STATE=complete", "WORKFLOW_ID="+w.ID)
	s.expectHookExports(r)
	s.expectPointer(r, w, false)
	// The killed session never ended; its pointer stays until it goes stale.
	s.expectPointer(killed, w, true)
}

// TestTwoSessionsOneProject: two CLIs run at once in one project, each its
// own workflow. Each session's pointer names its own workflow while both
// are at work; each checkpoint, event log and spec directory holds only
// its own workflow's records.
func TestTwoSessionsOneProject(t *testing.T) { underEachMode(t, testTwoSessionsOneProject) }

func testTwoSessionsOneProject(t *testing.T, m mode) {
	// Slow research keeps both sessions mid-workflow long enough to look.
	s := flowstateScenario(t, m, standin.Knobs{SlowAgent: "research-specialist", SlowDelay: 2 * time.Second})
	type session struct {
		scope, desc, final string
		p                  *process
		r                  result
		w                  *workflow
	}
	sessions := []*session{
		{scope: "research-only", desc: "survey the logging libraries", final: "research"},
		{scope: "research-and-plan", desc: "plan the metrics exporter", final: "plan"},
	}
	var procs []*process
	for _, x := range sessions {
		x.p = s.start("/flowstate:orchestrate --scope " + x.scope + " " + x.desc)
		procs = append(procs, x.p)
	}
	// Wait on what the checks below read: each session's pointer, naming a
	// workflow whose checkpoint and event log exist. (The slow research
	// agent only keeps both runs going meanwhile; a count of research
	// requests could be reached by one session alone.)
	s.waitUntil("both sessions have their workflow", time.Minute, func() bool {
		for _, x := range sessions {
			id := s.sessionPointer(x.p.session)
			if id == "" {
				return false
			}
			for _, f := range []string{"checkpoint.json", "events.jsonl"} {
				if _, err := os.Stat(filepath.Join(s.stateDir(), "workflows", id, f)); err != nil {
					return false
				}
			}
		}
		return true
	}, procs...)
	for _, x := range sessions {
		id := s.sessionPointer(x.p.session)
		if id == "" {
			t.Errorf("session %s has no pointer while its workflow runs", x.p.session)
			continue
		}
		s.workflow(id).expect(map[string]any{"workflow_description": x.desc, "session_id": x.p.session})
	}
	for _, x := range sessions {
		x.r = x.p.wait()
		t.Logf("%q: exit %d, wall %s", x.r.Prompt, x.r.ExitCode, x.r.Wall.Round(time.Millisecond))
		if x.r.ExitCode != 0 {
			t.Fatalf("claude -p %q exited %d", x.r.Prompt, x.r.ExitCode)
		}
	}

	ids := s.workflowIDs()
	if len(ids) != 2 {
		t.Fatalf("want two workflows, have %v", ids)
	}
	for _, x := range sessions {
		for _, id := range ids {
			if w := s.workflow(id); w.get("session_id").String() == x.r.Session {
				x.w = w
			}
		}
		if x.w == nil {
			t.Fatalf("no workflow of session %s in %v", x.r.Session, ids)
		}
		x.w.expect(map[string]any{
			"status":                              "complete",
			"workflow_description":                x.desc,
			"state_machine.workflow_config.scope": x.scope,
			"state_machine.current_state":         x.final,
		})
		x.w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed"})
		if got := x.w.get("supervisor_state.research_supervisor.workers.0.topic").String(); got != x.desc {
			t.Errorf("workflow %s researched %q, want its own description %q", x.w.ID, got, x.desc)
		}
		expectOutput(t, x.r, "WORKFLOW_ID="+x.w.ID, "FINAL_STATE="+x.final)
		s.expectHookExports(x.r)
		s.expectPointer(x.r, x.w, false)
	}
	if sessions[0].w.ID == sessions[1].w.ID {
		t.Fatalf("both sessions ran workflow %s", sessions[0].w.ID)
	}
	// No cross-writes: the research-only workflow has no plan, each spec
	// directory holds its own workflow's files only.
	solo, planned := sessions[0].w, sessions[1].w
	solo.expectWorkers("plan_architect", map[string]string{})
	solo.expectEvents("initialize research", map[string]int{"worker": 1, "finish": 1})
	planned.expectWorkers("plan_architect", map[string]string{"plan_1": "completed"})
	planned.expectEvents("initialize research plan", map[string]int{"worker": 2, "finish": 1})
	for _, x := range sessions {
		var files []string
		root := filepath.Join(s.Project, ".flowstate", "specs", x.w.ID)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if d != nil && d.IsDir() && d.Name() == "briefs" {
				return filepath.SkipDir // flowstate's, for the workers
			}
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(root, path)
				files = append(files, rel)
			}
			return nil
		})
		want := []string{"reports/001_" + slug(x.desc) + ".md"}
		if x.final == "plan" {
			want = append([]string{"plans/001_" + slug(x.desc) + ".md"}, want...)
		}
		if fmt.Sprint(files) != fmt.Sprint(want) {
			t.Errorf("workflow %s's spec directory holds %v, want %v", x.w.ID, files, want)
		}
	}
	s.expectAgents(map[string]int{"research-specialist": 2, "plan-architect": 1})
}

// slug is how flowstate names a worker's file after its topic.
func slug(s string) string { return strings.ReplaceAll(s, " ", "_") }

// TestMissingWorker: one of four research workers returns its signal but
// writes no report. Three delivered, so (partial failure, as the original
// design has it) the workflow goes on and completes with the other three,
// the failure recorded in the aggregate and in phase_data, and a warning
// the user sees. /workflow-resume --retry-failed then runs Beta alone.
func TestMissingWorker(t *testing.T) { underEachMode(t, testMissingWorker) }

func testMissingWorker(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{
		Classification: classification("research-only", "Alpha", "Beta", "Gamma", "Delta"),
		MissingWorker:  "Topic: Beta",
	})
	r := s.run("/flowstate:coordinate research alpha, beta, gamma and delta")

	w := s.onlyWorkflow()
	missing := filepath.Join(s.Project, ".flowstate", "specs", w.ID, "reports", "002_beta.md")
	expectOutput(t, r, "FINAL_STATE=research", "ARTIFACT_COUNT=3", "finished without workers research_2 (research)", "/flowstate:workflow-resume --retry-failed")
	if s.exists(missing) {
		t.Errorf("%s exists; MissingWorker should have kept it from being written", missing)
	}
	w.expect(map[string]any{
		"status":                      "complete",
		"state_machine.current_state": "research",
		"state_machine.classification.research_topics|@ugly":                                    `["Alpha","Beta","Gamma","Delta"]`,
		"phase_data.research.coordination":                                                      s.coordination("hierarchical"),
		"phase_data.research.partial_failures|@ugly":                                            `["research_2"]`,
		"error_state.last_error":                                                                nil,
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched":            3,
		"supervisor_state.research_supervisor.aggregated_metadata.partial_failures.#":           1,
		"supervisor_state.research_supervisor.aggregated_metadata.partial_failures.0.worker_id": "research_2",
		"supervisor_state.research_supervisor.supervisor_name":                                  map[bool]string{false: "sub-supervisor", true: "coordinate"}[s.onWorkflow()],
		"supervisor_state.research_supervisor.worker_count":                                     4,
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "failed", "research_3": "completed", "research_4": "completed"})
	w.expectArtifacts(s.Project, "research", "reports", 3)
	w.expectEvents("initialize research", map[string]int{"worker": 4, "error": 0, "finish": 1})
	if !s.onWorkflow() {
		w.expectSupervisorSignal(s.Model, "research", "research_supervisor", 1)
	}
	s.expectAgents(map[string]int{"workflow-classifier": 1, "sub-supervisor": 1, "research-specialist": 4})
	s.expectHookExports(r)
	s.expectPointer(r, w, false)

	// The user wants Beta after all: a resume runs Beta's worker only.
	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume --retry-failed")
	s.expectAgents(map[string]int{"sub-supervisor": 1, "research-specialist": 1})
	if c := workersOf(s.calls()); len(c) != 1 || !strings.HasPrefix(c[0].Prompt, "Topic: Beta\n") {
		t.Errorf("the resume ran %+v, want Beta's worker only", c)
	}
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "error_state.last_error": nil, "phase_data.research.partial_failures": nil,
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched": 4})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed", "research_3": "completed", "research_4": "completed"})
	expectOutput(t, resumed, "FINAL_STATE=research", "ARTIFACT_COUNT=4")
	s.expectPointer(resumed, w, false)
}

// TestTooFewWorkersDeliver: of two research workers one writes nothing:
// with fewer than two delivered, /coordinate stops naming the missing
// file, keeps everything recorded (the other worker, the classification,
// the error), SessionEnd keeps the session pointer, and /workflow-resume
// re-runs only the worker that did not deliver.
func TestTooFewWorkersDeliver(t *testing.T) { underEachMode(t, testTooFewWorkersDeliver) }

func testTooFewWorkersDeliver(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{
		Classification: classification("research-only", "Alpha", "Beta"),
		MissingWorker:  "Topic: Beta",
	})
	r := s.run("/flowstate:coordinate research alpha and beta")

	w := s.onlyWorkflow()
	// Named from the project's root: the message is kept in the records.
	missing := filepath.Join(".flowstate", "specs", w.ID, "reports", "002_beta.md")
	expectOutput(t, r, "Stopped:", "research-specialist research_2 wrote no research report at "+missing, "/flowstate:workflow-resume")
	w.expect(map[string]any{
		"status":                           "in_progress",
		"state_machine.current_state":      "research",
		"phase_data.research.coordination": s.coordination("flat"),
		"error_state.failed_state":         "research",
		"error_state.retry_count":          0,
	})
	if got := w.get("error_state.last_error").String(); !strings.Contains(got, missing) {
		t.Errorf("error_state.last_error = %q, want it to name %s", got, missing)
	}
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "failed"})
	w.expectEvents("initialize research", map[string]int{"worker": 2, "error": 1, "finish": 0})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2})
	s.expectHookExports(r)
	s.expectPointer(r, w, true)

	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume")
	if c := s.calls(); len(c) != 1 || !strings.HasPrefix(c[0].Prompt, "Topic: Beta\n") {
		t.Errorf("the resume ran %+v, want Beta's worker only", c)
	}
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "error_state.last_error": nil, "error_state.failed_state": nil,
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched": 2})
	expectOutput(t, resumed, "FINAL_STATE=research", "ARTIFACT_COUNT=2")
	s.expectPointer(resumed, w, false)
}

// TestSuperviseSequential: /supervise runs one worker per step and never
// a sub-supervisor; /workflow-status then shows the finished workflow.
func TestSuperviseSequential(t *testing.T) { underEachMode(t, testSuperviseSequential) }

func testSuperviseSequential(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-and-plan", "Auth patterns", "Session storage", "Token rotation", "Audit logging")})
	r := s.run("/flowstate:supervise study auth, sessions, tokens and auditing, then plan the login rework")
	// 3 to start, then one worker and its verify at a time: 4 research, 1 plan.
	s.expectCalls(13, 3)

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                             "complete",
		"state_machine.current_state":        "plan",
		"phase_data.initialize.coordination": "sequential",
		"phase_data.research.coordination":   s.coordination("flat"),
		"error_state.last_error":             nil,
	})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed", "research_3": "completed", "research_4": "completed"})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 4, "plan-architect": 1})
	if got := s.batches("research-specialist"); fmt.Sprint(got) != "[1 1 1 1]" {
		t.Errorf("research-specialist invoked in batches %v, want one at a time", got)
	}
	expectOutput(t, r, "FINAL_STATE=plan", "ARTIFACT_COUNT=5")
	s.expectPointer(r, w, false)

	status := s.run("/flowstate:workflow-status")
	expectOutput(t, status, w.ID)
}

// TestCoordinateFullImplementation: the whole route with no failing test:
// five phases, each one task block and one bash block for the
// orchestrating model (14 tool calls; 20 before verify planned the next
// phase).
func TestCoordinateFullImplementation(t *testing.T) {
	underEachMode(t, testCoordinateFullImplementation)
}

func testCoordinateFullImplementation(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("full-implementation", "Auth patterns", "Session storage"), EditSource: true})
	// Claude Code's default mode, no rule given: flowstate's steps and
	// artifacts are granted; the implementers' edits of the person's
	// source are the person's to allow, and refused (each implementer
	// still delivers its report, written first). Each implementer works
	// in a worktree of the project's (the implement state's isolation):
	// its source is the worktree's src/.
	s.Permissions = asPeopleRun
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")
	s.expectCalls(14, 3)
	denied := s.denials()
	source := regexp.MustCompile(`"file_path":"` + regexp.QuoteMeta(s.Project) + `(/\.claude/worktrees/agent-[a-z0-9]+)?/src/`)
	for _, dn := range denied {
		if dn.Tool != "Write" || !source.MatchString(string(dn.Input)) {
			t.Errorf("a refusal other than an implementer's edit of the person's source: %v", dn)
		}
	}
	if len(denied) == 0 && !s.onWorkflow() {
		// A workflow's agents' refusals are not in the result's
		// permission_denials (Claude Code 2.1.328): the sources not
		// written below show them.
		t.Errorf("no implementer's edit of the person's source was refused in the default mode")
	}
	s.expectSources(0)

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "error_state.last_error": nil, "error_state.retry_count": 0})
	w.expectEvents("initialize research plan implement test document complete", map[string]int{"error": 0, "retry": 0})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1,
		"sub-supervisor": 2, "implementation-executor": 4, "test-specialist": 2, "doc-writer": 1})
	expectOutput(t, r, "FINAL_STATE=complete", "ARTIFACT_COUNT=10")
	s.expectPointer(r, w, false)
}

// recipeFlags are the flags of the README's unattended run, for CI.
const recipeFlags = `--permission-mode dontAsk --allowedTools "Edit(src/**)" "Bash(go test *)" --output-format json`

// TestUnattendedRecipe: the README's recipe for a headless run (`claude
// -p` in CI): Claude Code refuses whatever no rule allows, flowstate's
// hook grants its own steps and artifacts, the person's two rules give
// the implementers their edits of src/ (and the testers their test
// runs); the whole route completes with nothing refused.
func TestUnattendedRecipe(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), recipeFlags) {
		t.Fatalf("the README's recipe for CI no longer gives %s", recipeFlags)
	}
	underEachEngine(t, func(t *testing.T, m mode) { testUnattendedRecipe(t, m) })
}

func testUnattendedRecipe(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("full-implementation", "Auth patterns", "Session storage"), EditSource: true})
	s.Permissions, s.AllowedTools = "dontAsk", []string{"Edit(src/**)", "Bash(go test *)"}
	r := s.run("/flowstate:coordinate build the login flow")
	s.expectNoDenials()
	s.expectSources(4)
	s.onlyWorkflow().expect(map[string]any{"status": "complete", "state_machine.current_state": "complete"})
	expectOutput(t, r, "FINAL_STATE=complete")
}
