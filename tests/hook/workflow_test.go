package hooktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// The workflow engine's hooks, as Claude Code runs them: the launch the
// start printed is let through and nothing else, the script's step agent
// gets its step as its StructuredOutput, the task Claude Code started is
// recorded, its notification ends the launch, and an agent that started
// after a cancel is ended.

// launching is session s1 of a new project with the plugin's hooks,
// whose user typed /flowstate:orchestrate --scope research-only, its
// start block run on the workflow engine: the launch it printed.
func launching(t *testing.T) (s *session, name, args string) {
	t.Helper()
	s = newSession(t, newProject(t, "p"), "s1", asPlugin())
	s.typed("/flowstate:orchestrate --scope research-only auth flows")
	out := s.runIn([]string{"FLOWSTATE_PLUGIN_ROOT=" + testenv.RepoRoot()}, "--scope research-only auth flows",
		"phase-start", "--command", "orchestrate", "--require-scope", "--launch")
	for _, kv := range protocol.KeyValues(out) {
		switch kv[0] {
		case "WORKFLOW_NAME":
			name = kv[1]
		case "WORKFLOW_ARGS":
			args = kv[1]
		}
	}
	if name != "flowstate:orchestrate-flow" || !strings.Contains(out, "NEXT=launch") {
		t.Fatalf("the start did not print a launch:\n%s", out)
	}
	return s, name, args
}

// runIn is run with extra environment.
func (s *session) runIn(env []string, stdin string, args ...string) string {
	s.t.Helper()
	r := exe(s.t, append([]string{"CLAUDE_PROJECT_DIR=" + s.project, "CLAUDE_CODE_SESSION_ID=" + s.id, "PATH=/usr/bin:/bin"}, env...), stdin, bin, args...)
	if r.code != 0 {
		s.t.Fatalf("flowstate %v: exit %d: %s", args, r.code, r.stderr)
	}
	return r.stdout
}

// workflowCall is PreToolUse of the main thread's Workflow call.
func (s *session) workflowCall(name string, args any) answer {
	s.t.Helper()
	return s.call("", "", "Workflow", map[string]any{"name": name, "args": args})
}

// scripted writes the transcript Claude Code keeps for agent id of
// workflow run: its first line, the task framed as Claude Code frames a
// script's task.
func (s *session) scripted(run, id, task string) {
	s.t.Helper()
	framed := "[Workflow harness — computed task] The task text below was computed at runtime by a workflow script. The computed task text follows:\n  " +
		strings.ReplaceAll(task, "\n", "\n  ")
	line, _ := json.Marshal(map[string]any{"type": "user", "agentId": id, "message": map[string]any{"role": "user", "content": framed}})
	path := filepath.Join(strings.TrimSuffix(s.transcript, ".jsonl"), "subagents", "workflows", run, "agent-"+id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// step is a step agent's StructuredOutput call, as flowstate's step
// hook answers it: the result it replaces the input with.
func (s *session) step(agentType, id string, input map[string]any) map[string]any {
	s.t.Helper()
	r := hook(s.t, s.project, "", "workflow-step", payload(map[string]any{"session_id": s.id, "cwd": s.project, "transcript_path": s.transcript,
		"hook_event_name": "PreToolUse", "permission_mode": "default", "agent_id": id, "agent_type": agentType,
		"tool_name": "StructuredOutput", "tool_input": input, "tool_use_id": "toolu_2"}), s.env...)
	if r.code != 0 || r.stderr != "" {
		s.t.Fatalf("workflow-step: %+v", r)
	}
	if r.stdout == "" {
		return nil
	}
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string
			UpdatedInput       map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.HookSpecificOutput.PermissionDecision != "allow" {
		s.t.Fatalf("workflow-step answered %q", r.stdout)
	}
	return out.HookSpecificOutput.UpdatedInput
}

// TestWorkflowLaunchGranted: the launch the start printed is allowed
// once; a second launch, garbled args or another form of the call are
// refused naming the block to run again; another saved workflow is the
// person's.
func TestWorkflowLaunchGranted(t *testing.T) {
	s, name, args := launching(t)
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		t.Fatal(err)
	}
	garbled := map[string]any{"workflow": obj["workflow"], "launch": "0"}
	if a := s.workflowCall(name, garbled); a.decision != "deny" || !strings.Contains(a.reason, `"## launched"`) {
		t.Errorf("garbled args: %+v, want refused naming ## launched", a)
	}
	if a := s.call("", "", "Workflow", map[string]any{"name": name, "args": obj, "resumeFromRunId": "wf_1"}); a.decision != "deny" {
		t.Errorf("a resume of Claude Code's cache: %+v, want refused", a)
	}
	if a := s.workflowCall("deep-research", obj); a.decision != "" {
		t.Errorf("another saved workflow: %+v, want nothing said", a)
	}
	if a := s.workflowCall(name, args); a.decision != "allow" {
		t.Fatalf("the launch printed, its args as a string: %+v, want allowed", a)
	}
	if a := s.workflowCall(name, obj); a.decision != "deny" || !strings.Contains(a.reason, "launched already") {
		t.Errorf("the launch again: %+v, want refused", a)
	}
	if a := s.call("", "", "Workflow", map[string]any{"name": name, "args": obj}, "plan"); a.decision != "" {
		t.Errorf("in plan mode: %+v, want nothing granted", a)
	}
}

// TestWorkflowStepsAnswered: the script's step agent, known by its
// type and its task (its transcript's first line, or the task it
// echoes when that cannot be read), gets the step: the workers with the
// prompts the command's task block gives; a second run of the launch is
// ended; the task notification of the launch's task ends it.
func TestWorkflowStepsAnswered(t *testing.T) {
	s, name, args := launching(t)
	var a struct{ Workflow, Launch string }
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatal(err)
	}
	if d := s.workflowCall(name, args); d.decision != "allow" {
		t.Fatalf("launch: %+v", d)
	}
	post := hook(t, s.project, "", "post-tool-use", payload(map[string]any{"session_id": s.id, "cwd": s.project, "transcript_path": s.transcript,
		"hook_event_name": "PostToolUse", "tool_name": "Workflow", "tool_input": map[string]any{"name": name, "args": args},
		"tool_response": map[string]any{"status": "async_launched", "taskId": "wtask1", "runId": "wf_run1"}}), s.env...)
	if post.code != 0 || post.stdout != "" {
		t.Fatalf("post-tool-use: %+v", post)
	}
	task := "FLOWSTATE_STEP kind=plan workflow=" + a.Workflow + " launch=" + a.Launch
	s.scripted("wf_run1", "astep1", task)
	res := s.step("flowstate:flowstate-step", "astep1", map[string]any{})
	workers, _ := res["workers"].([]any)
	if res["next"] != "work" || len(workers) != 1 {
		t.Fatalf("the plan step: %v", res)
	}
	w := workers[0].(map[string]any)
	want := "Topic: auth flows\nRead first: .flowstate/specs/" + a.Workflow + "/briefs/research-specialist.md\nWrite your result to: .flowstate/specs/" +
		a.Workflow + "/reports/001_auth_flows.md\nReturn exactly: REPORT_CREATED: reports/001_auth_flows.md"
	if w["agentType"] != "flowstate:research-specialist" || w["prompt"] != want || w["phase"] != "research" || w["id"] != "research_1" {
		t.Errorf("the worker handed out: %v, want the prompt\n%s", w, want)
	}
	if got := events(t, s.project, a.Workflow, "agent_launch"); len(got) != 1 || got[0].Get("worker_id").String() != "research_1" {
		t.Errorf("the worker's launch recorded as %v", got)
	}
	// The same launch's script run a second time: it ends at its first
	// step, starting no worker; the task echoed, no transcript.
	again := s.step("flowstate:flowstate-step", "astep2", map[string]any{"step": task})
	if again["next"] != "stopped" || !strings.Contains(again["message"].(string), "under way already") {
		t.Errorf("a second run of the launch: %v", again)
	}
	if res := s.step("flowstate:research-specialist", "aworker", map[string]any{"step": task}); res != nil {
		t.Errorf("another agent's StructuredOutput was answered: %v", res)
	}
	report := filepath.Join(s.project, ".flowstate", "specs", a.Workflow, "reports", "001_auth_flows.md")
	if err := os.WriteFile(report, []byte("# Auth\n\n## Executive Summary\n\nTokens.\n\n## Key Findings\n\n- one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.scripted("wf_run1", "astep3", strings.Replace(task, "kind=plan", "kind=verify", 1))
	if done := s.step("flowstate:flowstate-step", "astep3", map[string]any{}); done["next"] != "done" || done["state"] != "research" {
		t.Fatalf("the verify step: %v", done)
	}
	end := s.runIn(nil, "", "phase-launched")
	if !strings.Contains(end, "FINAL_STATE=research") || !strings.Contains(end, "NEXT=done") {
		t.Errorf("the block after the launch printed:\n%s", end)
	}
}

// TestLaunchEndedByItsNotification: a script whose steps never reached
// flowstate ends; Claude Code's notification of its task ends the
// launch, and the block after it goes on with the steps engine.
func TestLaunchEndedByItsNotification(t *testing.T) {
	s, name, args := launching(t)
	if d := s.workflowCall(name, args); d.decision != "allow" {
		t.Fatalf("launch: %+v", d)
	}
	hook(t, s.project, "", "post-tool-use", payload(map[string]any{"session_id": s.id, "cwd": s.project, "transcript_path": s.transcript,
		"hook_event_name": "PostToolUse", "tool_name": "Workflow", "tool_input": map[string]any{"name": name, "args": args},
		"tool_response": map[string]any{"status": "async_launched", "taskId": "wtask9", "runId": "wf_run9"}}), s.env...)
	if out := s.runIn([]string{"FLOWSTATE_WAIT=0s"}, "", "phase-launched"); !strings.Contains(out, "NEXT=launched") {
		t.Errorf("while the script runs, the block after the launch printed:\n%s", out)
	}
	s.typed("<task-notification>\n<task-id>wtask9</task-id>\n<status>completed</status>\n<result>{\"status\":\"failed\"}</result>\n</task-notification>")
	r := exe(t, []string{"CLAUDE_PROJECT_DIR=" + s.project, "CLAUDE_CODE_SESSION_ID=" + s.id, "PATH=/usr/bin:/bin"}, "", bin, "phase-launched")
	if r.code != 0 || !strings.Contains(r.stdout, "NEXT=work") || !strings.Contains(r.stderr, "steps engine") {
		t.Errorf("after a script whose steps never reached flowstate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAgentStartedAfterACancelEnded: once a person cancelled the
// workflow, an agent of it that starts does no work (its call denied,
// its loop ended, its stop recorded); one at work at the cancel goes
// on.
func TestAgentStartedAfterACancelEnded(t *testing.T) {
	s := orchestrating(t)
	id := value(s.run("", "sm-status"), "WORKFLOW_ID")
	start := func(agent string) {
		r := hook(t, s.project, "", "subagent-start", payload(map[string]any{"session_id": s.id, "cwd": s.project, "transcript_path": s.transcript,
			"hook_event_name": "SubagentStart", "agent_id": agent, "agent_type": "flowstate:research-specialist"}), s.env...)
		if r.code != 0 {
			t.Fatalf("subagent-start: %+v", r)
		}
	}
	start("abefore")
	r := exe(t, []string{"CLAUDE_PROJECT_DIR=" + s.project, "PATH=/usr/bin:/bin", "USER=ann"}, "", bin, "cancel", "--workflow", id, "--reason", "wrong")
	if r.code != 0 {
		t.Fatalf("cancel: %+v", r)
	}
	start("aafter")
	write := map[string]any{"file_path": filepath.Join(s.project, "notes.txt"), "content": "x"}
	if a := s.call("flowstate:research-specialist", "abefore", "Write", write); a.decision == "deny" {
		t.Errorf("the agent at work at the cancel was refused: %+v", a)
	}
	r = hook(t, s.project, "", "pre-tool-use", payload(map[string]any{"session_id": s.id, "cwd": s.project, "transcript_path": s.transcript,
		"hook_event_name": "PreToolUse", "permission_mode": "default", "agent_id": "aafter", "agent_type": "flowstate:research-specialist",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}), s.env...)
	var out struct {
		Continue           *bool `json:"continue"`
		HookSpecificOutput struct{ PermissionDecision string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Continue == nil || *out.Continue || out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("an agent started after the cancel: %q, want denied and ended", r.stdout)
	}
	stopped := false
	for _, e := range events(t, s.project, id, "agent_stop") {
		stopped = stopped || e.Get("agent_id").String() == "aafter"
	}
	if !stopped {
		t.Errorf("the ended agent's stop was not recorded")
	}
}
