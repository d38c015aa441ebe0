//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// People in the loop, in the real CLI: a person decides at a gate, pauses
// or cancels from a terminal of their own while Claude Code runs the
// command, and the command ends cleanly where a person must act. The Stop
// hook must not push a model that waits for them.

// shell runs flowstate as the person at another terminal: the project,
// their name, no Claude Code session. It returns stdout, failing the test
// unless it exits 0.
func (s *scenario) shell(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(flowstateBin(s.t), args...)
	cmd.Dir = s.Project
	cmd.Env = testenv.Env(s.Home, "CLAUDE_PROJECT_DIR="+s.Project, "USER=ann")
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("flowstate %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// expectEnded checks how a run ended where a person must act: its final
// answer is the MESSAGE= of the step that stopped, unless the model (a
// drift) had already ended its turn early, which nothing pushed on.
func expectEnded(t *testing.T, r result, d standin.Drift, want ...string) {
	t.Helper()
	if d.StopEvery > 0 && strings.Contains(r.Stdout, "under way") {
		return
	}
	expectOutput(t, r, want...)
}

// TestPlanGateApprovedFromAShell: /coordinate --approve-plan researches,
// plans, and stops at the gate before implement, telling the user what to
// review and how to approve. The person approves from a terminal (a
// separate process); /workflow-resume, in a new session, runs the rest to
// completion without running research or the plan again.
func TestPlanGateApprovedFromAShell(t *testing.T) { underEachMode(t, testPlanGateApprovedFromAShell) }

func testPlanGateApprovedFromAShell(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("full-implementation", "Audit events")})
	s.Permissions = acceptEdits // it implements once approved: the person accepts the implementers' edits
	r := s.run("/flowstate:coordinate --approve-plan add an audit log to the admin API")
	s.expectNoDenials()

	w := s.onlyWorkflow()
	w.expect(map[string]any{
		"status":                                "awaiting_approval",
		"workflow_description":                  "add an audit log to the admin API",
		"state_machine.current_state":           "plan",
		"state_machine.completed_states|@ugly":  `["initialize","research"]`,
		"state_machine.gates.implement.message": "Approve the plan before implement starts",
		"hold.kind":                             "approval",
		"hold.state":                            "implement",
	})
	w.expectWorkers("plan_architect", map[string]string{"plan_1": "completed"})
	plan := w.expectArtifacts(s.Project, "plan", "plans", 1)
	w.expectEvents("initialize research plan", map[string]int{"gate": 1, "approve": 0})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 1, "plan-architect": 1})
	expectEnded(t, r, m.Drift, "waits for your approval to enter implement", "Review "+testenv.FromProject(t, s.Project, plan[0]), "/flowstate:workflow-approve", "flowstate approve --workflow "+w.ID)
	s.expectPointer(r, w, true)

	// A model that approves on its own, in a Bash block of a prompt that
	// is not /workflow-approve, is refused: flowstate grants nothing to a
	// prompt that invoked none of its commands, so Claude Code asks the
	// person (refuses, in -p); and a person who allows every Bash call
	// still sees flowstate refuse it, by the UserPromptSubmit hook's record
	// of what the user typed.
	self := "Run this block:\n\n```bash\nflowstate approve --workflow " + w.ID + " --note 'looks fine to me'\n```\n"
	asked := s.run(self)
	if len(asked.Denials) == 0 {
		t.Errorf("the model's own approval: Claude Code refused nothing")
	}
	for _, dn := range asked.Denials { // a model that runs each block twice is refused twice
		if !strings.Contains(string(dn.Input), "flowstate approve --workflow "+w.ID) {
			t.Errorf("the model's own approval: Claude Code refused %v", dn)
		}
	}
	s.Permissions = waived
	expectOutput(t, s.run(self), "only the user can approve workflow "+w.ID)
	// Nor does clearing the session from the block's environment help:
	// the shell Claude Code started names it (lib/ancestry).
	cleared := s.run("Run this block:\n\n```bash\nCLAUDE_CODE_SESSION_ID= flowstate approve --workflow " + w.ID + "\n```\n")
	expectOutput(t, cleared, "only the user can approve workflow "+w.ID)
	s.Permissions = acceptEdits
	s.onlyWorkflow().expect(map[string]any{"status": "awaiting_approval"})

	out := s.shell("approve", "--workflow", w.ID, "--note", "plan reviewed")
	expectOutput(t, result{Prompt: "flowstate approve", Stdout: out}, "STATUS=in_progress\n", "CURRENT_STATE=implement\n")

	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume")
	s.expectNoDenials()
	s.expectAgents(map[string]int{"sub-supervisor": 2, "implementation-executor": 4,
		"test-specialist": 2, "doc-writer": 1})
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "hold": nil,
		"phase_data.implement.approval.by": "ann", "phase_data.implement.approval.via": "shell", "phase_data.implement.approval.note": "plan reviewed"})
	w.expectEvents("initialize research plan implement test document complete", map[string]int{"gate": 1, "approve": 1})
	// The implementers work in worktrees of their own (the project is a
	// git repository), which hold none of the spec directory: their brief
	// names the plan where it is in the project.
	for _, c := range s.calls() {
		if c.Persona == "implementation-executor" && !strings.Contains(s.brief(c), "- "+plan[0]+"\n") {
			t.Errorf("an executor was not given the approved plan:\n%s", s.brief(c))
		}
	}
	expectOutput(t, resumed, "FINAL_STATE=complete")
	s.expectHookExports(resumed)
	s.expectPointer(resumed, w, false)
}

// TestAStepThePersonRefuses: a person whose own rule denies flowstate's
// verify (a deny rule wins over flowstate's grant) has the command stop
// at that step, asked once: the Stop hook does not send the model back
// into it, and the workflow is as it was, the workers' reports on disk
// and not yet recorded. Without the rule, /workflow-resume finishes it,
// asking nothing.
func TestAStepThePersonRefuses(t *testing.T) {
	s := flowstateScenario(t, steps(standin.Drift{}), standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage")})
	s.Permissions = asPeopleRun
	s.denyInProject("Bash(flowstate phase-verify:*)")
	r := s.run("/flowstate:coordinate research how logins and sessions work")
	if len(r.Denials) != 1 || !strings.Contains(string(r.Denials[0].Input), `"command":"flowstate phase-verify"`) {
		t.Errorf("refused %v, want the verify once", r.Denials)
	}
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "in_progress", "state_machine.current_state": "research", "error_state.last_error": nil})
	w.expectWorkers("research_supervisor", map[string]string{})
	if reports, _ := filepath.Glob(filepath.Join(s.Project, ".flowstate", "specs", w.ID, "reports", "*.md")); len(reports) != 2 {
		t.Errorf("the workers' reports: %v", reports)
	}

	s.denyInProject()
	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume")
	s.onlyWorkflow().expect(map[string]any{"status": "complete", "state_machine.current_state": "research"})
	if len(resumed.Denials) != 0 {
		t.Errorf("the resume was refused %v", resumed.Denials)
	}
	s.expectAgents(map[string]int{})
	expectOutput(t, resumed, "FINAL_STATE=research")
}

// TestPlanGateRejectedInClaudeCode: the person decides in Claude Code:
// /workflow-reject sends the plan back with the reason, the resumed
// workflow plans again (the planner reads the reason and the rejected
// plan, kept beside the new one) and stops at the gate again;
// /workflow-approve lets it go on.
func TestPlanGateRejectedInClaudeCode(t *testing.T) {
	underEachMode(t, testPlanGateRejectedInClaudeCode)
}

func testPlanGateRejectedInClaudeCode(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{})
	s.run("/flowstate:orchestrate --scope debug-only --approve-plan fix the flaky session expiry")
	// Claude Code keeps the decisions from the model: they are not among
	// the skills it may invoke (disable-model-invocation).
	requests, _ := filepath.Glob(filepath.Join(s.LogDir, "*-main.request.json"))
	for _, f := range requests {
		if b, err := os.ReadFile(f); err == nil && (bytes.Contains(b, []byte("- flowstate:workflow-approve:")) || bytes.Contains(b, []byte("- flowstate:workflow-reject:"))) {
			t.Errorf("%s: the model was offered /workflow-approve or /workflow-reject as a skill", f)
		}
	}
	if len(requests) == 0 {
		t.Errorf("no requests logged in %s", s.LogDir)
	}
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "awaiting_approval", "hold.state": "debug"})
	rejected := w.expectArtifacts(s.Project, "plan", "plans", 1)

	reject := s.run("/flowstate:workflow-reject the plan must cover clock skew")
	expectOutput(t, reject, "STATUS=in_progress", "CURRENT_STATE=plan")
	s.restartModel(standin.Knobs{}, "replan")
	s.run("/flowstate:workflow-resume")
	s.expectAgents(map[string]int{"plan-architect": 1})
	if c := s.calls(); len(c) == 1 && (!strings.Contains(s.brief(c[0]), "rejected "+testenv.FromProject(t, s.Project, rejected[0])) || !strings.Contains(s.brief(c[0]), "the plan must cover clock skew")) {
		t.Errorf("the planner was not told what was rejected and why:\n%s", s.brief(c[0]))
	}
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "awaiting_approval", "rewinds.0.kind": "reject", "rewinds.0.supervisor_state.plan_architect.workers.0.output_path": rejected[0]})
	replanned := w.expectArtifacts(s.Project, "plan", "plans", 1)
	if len(replanned) == 1 && (replanned[0] == rejected[0] || !s.exists(rejected[0])) {
		t.Errorf("the new plan %s must be written beside the rejected %s, which stays", replanned, rejected)
	}

	approve := s.run("/flowstate:workflow-approve covers it now")
	expectOutput(t, approve, "CURRENT_STATE=debug")
	if got := s.read(filepath.Join(".claude", "state", "prompts", approve.Session)); !strings.Contains(got, `"command":"workflow-approve"`) {
		t.Errorf("the UserPromptSubmit hook did not note the user's /workflow-approve: %q", got)
	}
	s.restartModel(standin.Knobs{}, "resume")
	done := s.run("/flowstate:workflow-resume")
	s.expectAgents(map[string]int{"debug-analyst": 1})
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "debug", "phase_data.debug.approval.via": "claude-code",
		"phase_data.debug.approval.note": "covers it now"})
	w.expectEvents("initialize research plan debug", map[string]int{"gate": 2, "reject": 1, "rewind": 1, "approve": 1})
	expectOutput(t, done, "FINAL_STATE=debug")
}

// TestPauseFromAShellWhileAnAgentWorks: the person pauses the workflow
// from a terminal while its planner works (after research, so that every
// drift shows before it). The agent finishes and is recorded by the
// hooks; the command's next step ends it, with the reason, and nothing
// pushes the model on. /workflow-resume continues: the plan delivered
// while paused counts, and only the debug analyst runs.
func TestPauseFromAShellWhileAnAgentWorks(t *testing.T) {
	underEachMode(t, testPauseFromAShellWhileAnAgentWorks)
}

func testPauseFromAShellWhileAnAgentWorks(t *testing.T, m mode) {
	s, r := whileThePlannerWorks(t, m, "pause", "--reason", "waiting for the budget")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "paused", "state_machine.current_state": "plan", "hold.reason": "waiting for the budget", "hold.by": "ann"})
	expectEnded(t, r, m.Drift, "is paused by ann: waiting for the budget", "/flowstate:workflow-resume")
	if len(w.eventsOf("agent_stop")) < 2 {
		t.Errorf("the planner that finished while paused was not recorded: %d agent stops", len(w.eventsOf("agent_stop")))
	}
	s.expectAgents(map[string]int{"research-specialist": 1, "plan-architect": 1})

	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume")
	s.expectAgents(map[string]int{"debug-analyst": 1})
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "debug"})
	w.expectWorkers("plan_architect", map[string]string{"plan_1": "completed"})
	w.expectEvents("initialize research plan debug", map[string]int{"pause": 1, "unpause": 1})
	if e := w.eventsOf("unpause"); len(e) == 1 && e[0].Get("via").String() != "claude-code" {
		t.Errorf("the resume's unpause was not recorded as from Claude Code: %s", e[0].Raw)
	}
	expectOutput(t, resumed, "FINAL_STATE=debug")
}

// TestCancelFromAShellWhileAnAgentWorks: cancelled while its planner
// works, the command ends at its next step saying so; the workflow is
// finished as cancelled, the planner's end still recorded (its plan not:
// nothing changes a cancelled workflow), and a resume refuses it.
func TestCancelFromAShellWhileAnAgentWorks(t *testing.T) {
	underEachMode(t, testCancelFromAShellWhileAnAgentWorks)
}

func testCancelFromAShellWhileAnAgentWorks(t *testing.T, m mode) {
	s, r := whileThePlannerWorks(t, m, "cancel", "--reason", "superseded by the SSO work")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "cancelled", "state_machine.current_state": "plan", "hold.reason": "superseded by the SSO work",
		"supervisor_state.plan_architect.workers": nil})
	expectEnded(t, r, m.Drift, "was cancelled by ann: superseded by the SSO work")
	if len(w.eventsOf("agent_stop")) < 2 {
		t.Errorf("the planner that finished after the cancel was not recorded: %d agent stops", len(w.eventsOf("agent_stop")))
	}
	s.expectAgents(map[string]int{"research-specialist": 1, "plan-architect": 1})
	s.expectPointer(r, w, false)

	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume " + w.ID)
	s.expectAgents(map[string]int{})
	expectOutput(t, resumed, "was cancelled by ann: superseded by the SSO work")
}

// whileThePlannerWorks runs /orchestrate --scope debug-only until its
// (slow) planner is at work, runs flowstate args from the person's
// terminal, and lets the run end.
func whileThePlannerWorks(t *testing.T, m mode, args ...string) (*scenario, result) {
	t.Helper()
	s := flowstateScenario(t, m, standin.Knobs{SlowAgent: "plan-architect", SlowDelay: 2 * time.Second})
	p := s.start("/flowstate:orchestrate --scope debug-only fix the flaky session expiry")
	s.waitUntil("the planner is at work", time.Minute, func() bool { return s.Model.Served("plan-architect") > 0 }, p)
	s.shell(args...)
	r := p.wait()
	if r.ExitCode != 0 {
		t.Fatalf("claude -p %q exited %d", r.Prompt, r.ExitCode)
	}
	return s, r
}

// eventsOf are the workflow's events of kind.
func (w *workflow) eventsOf(kind string) []gjson.Result {
	var out []gjson.Result
	for _, e := range w.events {
		if e.Get("event").String() == kind {
			out = append(out, e)
		}
	}
	return out
}
