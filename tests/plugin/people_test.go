package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// People in the loop, run as Claude Code runs the commands: a person
// approves, rejects, pauses, cancels or rewinds from another shell (a
// process without the session), and the command's next step sees it.

// shell runs flowstate as a person at another terminal would: same
// project, no Claude Code session. It returns stdout and the exit code.
func (w *world) shell(args ...string) (string, int) {
	w.t.Helper()
	cmd := exec.Command(flowstateBin, args...)
	cmd.Dir = w.Dir
	for _, kv := range w.Env {
		if !strings.HasPrefix(kv, "CLAUDE_CODE_SESSION_ID=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "USER=ann")
	out, err := cmd.Output()
	code, xerr := testenv.ExitCode(err)
	if xerr != nil {
		w.t.Fatalf("flowstate %v: %v", args, xerr)
	}
	return string(out), code
}

// get is the checkpoint's value at path, JSON compacted.
func (w *world) get(path string) string {
	v := w.flowstate("checkpoint-get", path)
	if gjson.Valid(v) && (strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{")) {
		return gjson.Get(v, "@ugly").Raw
	}
	return v
}

func expectLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(out, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, out)
		}
	}
}

// TestRunPlanGateRejectThenApprove: --approve-plan stops the command at
// the plan with what to review and how to approve; resuming while it
// waits stops again and runs nothing; a rejection sends it back to plan,
// whose new planner reads the reason and the rejected plan, and writes a
// new plan beside the old; approval lets the resumed workflow finish.
func TestRunPlanGateRejectThenApprove(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	out, err := w.command("orchestrate", "--scope full-implementation --approve-plan add an audit log")
	if err != nil {
		t.Fatalf("orchestrate: %v\n%s", err, out)
	}
	plan1 := w.get("phase_data.plan.artifacts.0")
	expectLines(t, "the command's last block", out, "STATUS=awaiting_approval\n", "WAITING_FOR=approval to enter implement\n",
		"REVIEW="+testenv.FromProject(t, w.Dir, plan1)+"\n", "/flowstate:workflow-approve", "/flowstate:workflow-reject", "NEXT=stopped\n")
	if got := w.agentsInvoked(); len(got) != 2 || got["research-specialist"] != 1 || got["plan-architect"] != 1 {
		t.Errorf("agents before the gate: %v, want research and plan only", got)
	}
	if got := w.get("status"); got != "awaiting_approval" {
		t.Errorf("status %s, want awaiting_approval", got)
	}
	if _, code := w.shell("sm-transition", "implement"); code != 6 {
		t.Errorf("sm-transition into the gated state exited %d, want 6", code)
	}

	// Resumed while it waits: stops again, nothing run.
	w.Invoked = nil
	out, err = w.command("workflow-resume", "")
	if err != nil || len(w.Invoked) != 0 || !strings.Contains(out, "NEXT=stopped") {
		t.Errorf("resume at the gate: %v, agents %v:\n%s", err, w.Invoked, out)
	}

	out, err = w.command("workflow-reject", "cover the retention of the audit log")
	if err != nil {
		t.Fatalf("workflow-reject: %v\n%s", err, out)
	}
	expectLines(t, "workflow-reject", out, "STATUS=in_progress\n", "CURRENT_STATE=plan\n")
	out, err = w.command("workflow-resume", "")
	if err != nil || !strings.Contains(out, "NEXT=stopped") {
		t.Fatalf("resume after the rejection: %v\n%s", err, out)
	}
	if len(w.Invoked) != 1 || w.Invoked[0].Agent != "plan-architect" {
		t.Fatalf("after a rejection the resume ran %v, want the plan-architect only", w.Invoked)
	}
	expectLines(t, "the new planner's brief", w.brief(w.Invoked[0]), "rejected "+testenv.FromProject(t, w.Dir, plan1), "cover the retention of the audit log")
	plan2 := w.get("phase_data.plan.artifacts.0")
	if plan2 == plan1 || !strings.HasSuffix(plan2, ".v2.md") || !w.exists(plan1) || !w.exists(plan2) {
		t.Errorf("the new plan %s must be written beside the rejected %s, both kept", plan2, plan1)
	}
	if got := w.get("rewinds.0.supervisor_state.plan_architect.workers.0.output_path"); got != plan1 {
		t.Errorf("the rejected plan's record is kept as %q, want %s", got, plan1)
	}

	out, err = w.command("workflow-approve", "ship it")
	if err != nil {
		t.Fatalf("workflow-approve: %v\n%s", err, out)
	}
	expectLines(t, "workflow-approve", out, "STATUS=in_progress\n", "CURRENT_STATE=implement\n")
	w.Invoked = nil
	if out, err = w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("resume after the approval: %v\n%s", err, out)
	}
	if got := w.agentsInvoked(); got["plan-architect"] != 0 || got["research-specialist"] != 0 || got["implementation-executor"] != 4 {
		t.Errorf("the resume after the approval ran %v, want the implementation and what follows only", got)
	}
	for _, inv := range w.Invoked {
		if inv.Agent != "implementation-executor" {
			continue
		}
		if brief := w.brief(inv); !strings.Contains(brief, "- "+testenv.FromProject(t, w.Dir, plan2)+"\n") {
			t.Errorf("an executor was not given the approved plan %s:\n%s", plan2, brief)
		}
	}
	hist := w.flowstate("history", "--json")
	approve := gjson.Get(hist, `events.#(event=="approve")`)
	if approve.Get("fields.note").String() != "ship it" || approve.Get("fields.state").String() != "implement" || approve.Get("fields.via").String() != "claude-code" || approve.Get("fields.by").String() == "" {
		t.Errorf("the approve event %s does not say who approved what, from where, with the note", approve.Raw)
	}
	if n := len(gjson.Get(hist, `events.#(event=="gate")#`).Array()); n != 2 {
		t.Errorf("%d gate events, want 2 (before and after the rejection)", n)
	}
}

// TestRunPauseFromAShell: a person pauses the workflow from another shell
// while its research agent works. The command's next step ends cleanly
// with the reason; transitions wait (exit 6); the resume continues it,
// recording the report that agent delivered without running it again.
func TestRunPauseFromAShell(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	w.Agents.During = func(inv invocation) {
		if inv.Agent == "research-specialist" {
			if out, code := w.shell("pause", "--reason", "reviewing the budget"); code != 0 || !strings.Contains(out, "STATUS=paused") {
				t.Errorf("pause exited %d:\n%s", code, out)
			}
		}
	}
	out, err := w.command("orchestrate", "--scope research-and-plan plan the exporter")
	if err != nil {
		t.Fatalf("orchestrate: %v\n%s", err, out)
	}
	expectLines(t, "the command's last block", out, "STATUS=paused\n", "is paused by ann: reviewing the budget", "NEXT=stopped\n")
	if got := w.get("state_machine.current_state"); got != "research" {
		t.Errorf("current state %s, want research", got)
	}
	if _, code := w.shell("sm-transition", "plan"); code != 6 {
		t.Errorf("sm-transition of a paused workflow exited %d, want 6", code)
	}
	if out, code := w.shell("pause"); code != 0 {
		t.Errorf("pausing again exited %d:\n%s", code, out)
	}

	w.Agents.During, w.Invoked = nil, nil
	if out, err = w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=plan") {
		t.Fatalf("workflow-resume: %v\n%s", err, out)
	}
	if got := w.agentsInvoked(); got["research-specialist"] != 0 || got["plan-architect"] != 1 {
		t.Errorf("the resume ran %v, want the plan only: the research delivered while paused counts", got)
	}
	kinds := gjson.Get(w.flowstate("history", "--json"), "events.#.event").String()
	if !strings.Contains(kinds, `"pause","unpause"`) {
		t.Errorf("history lacks the pause and its end: %s", kinds)
	}
}

// TestRunCancelFromAShell: cancelled while an agent works, the workflow
// ends the command at its next step and refuses every change after.
func TestRunCancelFromAShell(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	w.Agents.During = func(inv invocation) {
		if inv.Agent == "research-specialist" {
			w.shell("cancel", "--reason", "wrong repository")
		}
	}
	out, err := w.command("orchestrate", "--scope research-and-plan plan the exporter")
	if err != nil {
		t.Fatalf("orchestrate: %v\n%s", err, out)
	}
	expectLines(t, "the command's last block", out, "STATUS=cancelled\n", "was cancelled by ann: wrong repository", "NEXT=stopped\n")
	// A finished workflow is named: discovery finds active ones only.
	id := w.get("workflow_id")
	if _, code := w.shell("sm-transition", "plan"); code != 2 {
		t.Errorf("sm-transition with no active workflow exited %d, want 2", code)
	}
	for _, args := range [][]string{
		{"sm-transition", "plan"}, {"state-append", "K", "v"}, {"checkpoint-set", "phase_data.x", "{}"}, {"pause"}, {"rewind", "research"},
	} {
		if _, code := w.shell(append(args, "--workflow", id)...); code != 3 {
			t.Errorf("flowstate %v on a cancelled workflow exited %d, want 3", args, code)
		}
	}
	if _, code := w.shell("cancel", "--reason", "again", "--workflow", id); code != 0 {
		t.Errorf("cancelling again exited %d, want 0 (nothing to do)", code)
	}
	w.Invoked = nil
	if _, err := w.command("workflow-resume", id); err == nil || !strings.Contains(err.Error(), "was cancelled by ann: wrong repository") {
		t.Errorf("resuming a cancelled workflow: %v, want the refusal naming why", err)
	}
	if len(w.Invoked) != 0 {
		t.Errorf("agents ran on a cancelled workflow: %v", w.Invoked)
	}
}

// TestRunRewindAfterCompletion: a finished workflow rewound to plan runs
// plan and every later state again, with new files beside the old, and
// never the research it keeps; the work taken back stays in the history.
func TestRunRewindAfterCompletion(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	if out, err := w.command("orchestrate", "--scope full-implementation add an audit log"); err != nil {
		t.Fatalf("orchestrate: %v\n%s", err, out)
	}
	oldDoc := w.get("phase_data.document.artifacts.0")
	out, code := w.shell("rewind", "plan", "--reason", "split the API phase", "--workflow", w.get("workflow_id"))
	if code != 0 {
		t.Fatalf("rewind exited %d:\n%s", code, out)
	}
	expectLines(t, "rewind", out, "STATUS=in_progress\n", "CURRENT_STATE=plan\n")
	if got := w.get("state_machine.completed_states"); got != `["initialize","research"]` {
		t.Errorf("completed states after the rewind %s", got)
	}
	if got := w.get("rewinds.0.states"); got != `["plan","implement","test","document","complete"]` {
		t.Errorf("the rewind took back %s", got)
	}
	w.Invoked = nil
	if out, err := w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("workflow-resume: %v\n%s", err, out)
	}
	if got := w.agentsInvoked(); got["research-specialist"] != 0 || got["plan-architect"] != 1 || got["implementation-executor"] != 4 || got["doc-writer"] != 1 {
		t.Errorf("after the rewind the resume ran %v", got)
	}
	if brief := w.brief(w.Invoked[0]); !strings.Contains(brief, "split the API phase") {
		t.Errorf("the planner was not told why:\n%s", brief)
	}
	newDoc := w.get("phase_data.document.artifacts.0")
	if newDoc == oldDoc || !w.exists(oldDoc) || !strings.HasSuffix(newDoc, ".v2.md") {
		t.Errorf("documentation %s after the rewind, %s before: want a new file, the old kept", newDoc, oldDoc)
	}
	if got := w.get("rewinds.0.phase_data.document.artifacts.0"); got != oldDoc {
		t.Errorf("the history keeps %q as the old documentation, want %s", got, oldDoc)
	}
	if _, err := os.Stat(filepath.Join(w.Dir, ".flowstate")); err != nil {
		t.Fatal(err)
	}
}
