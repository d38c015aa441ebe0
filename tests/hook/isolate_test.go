package hooktest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The hooks of a state whose workers run each in a git worktree of its
// own: the Agent call asks for the worktree whatever the model sent, the
// agent's start and stop name where it worked, its artifact reaches the
// project as it stops, and the call's return says where Claude Code kept
// its worktree and whether it ran shell commands.

// reviews is a definition whose review state runs two reviewers, each in
// a worktree of its own.
const reviews = `{"name": "reviews", "initial": "start",
 "transitions": {"start": ["review"], "review": ["done"], "done": []},
 "scopes": {"all": {"terminal": "done", "route": ["start", "review", "done"]}},
 "work": {"review": {"agent": "reviewer", "each": ["left", "right"], "output": "reviews/{n:3}_{item}.md",
   "format": "report", "isolation": "worktree"}}}`

// isolatedWorkflow starts /reviews in a git repository for session s1 and
// plans its isolated batch; it returns the plan's output.
func isolatedWorkflow(t *testing.T, project string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.email=p@example.com", "-c", "user.name=p", "commit", "-q", "--allow-empty", "-m", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", project}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	def := filepath.Join(t.TempDir(), "reviews.json")
	if err := os.WriteFile(def, []byte(reviews), 0o644); err != nil {
		t.Fatal(err)
	}
	r := exe(t, []string{"CLAUDE_PROJECT_DIR=" + project, "CLAUDE_CODE_SESSION_ID=s1", "PATH=/usr/bin:/bin"}, "the login handler",
		bin, "phase-start", "--command", "reviews", "--machine", def)
	if r.code != 0 || value(r.stdout, "ISOLATED_COUNT") != "2" || value(r.stdout, "WORKER_COUNT") != "0" {
		t.Fatalf("phase-start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func TestIsolatedWorkersHooks(t *testing.T) {
	project := newProject(t, "p")
	plan := isolatedWorkflow(t, project)
	id := value(flowstate(t, project, "s1", "sm-status"), "WORKFLOW_ID")
	spec, brief := value(plan, "SPEC_DIR"), value(plan, "BRIEF")
	if spec != filepath.Join(".flowstate", "specs", id) || brief != filepath.Join(project, spec, "briefs", "reviewer.md") {
		t.Fatalf("SPEC_DIR %q (want it from the project's root, which a worktree mirrors), BRIEF %q (want the project's)", spec, brief)
	}
	prompt := func(i string) string {
		out := spec + "/" + value(plan, "OUTPUT_"+i)
		return "Topic: " + value(plan, "TOPIC_"+i) + "\nRead first: " + brief + "\nWrite your result to: " + out + "\nReturn exactly: REPORT_CREATED: " + out
	}
	call := func(input map[string]any) map[string]any {
		t.Helper()
		r := hook(t, project, "", "pre-tool-use", payload(map[string]any{
			"session_id": "s1", "cwd": project, "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": input}))
		if r.code != 0 {
			t.Fatal(r)
		}
		if r.stdout == "" {
			return nil
		}
		var out struct {
			HookSpecificOutput struct{ UpdatedInput map[string]any }
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out.HookSpecificOutput.UpdatedInput
	}
	// A model that dropped the block's isolation line: the hook puts it back.
	got := call(map[string]any{"subagent_type": "reviewer", "description": "d", "prompt": prompt("1"), "run_in_background": false})
	if got["isolation"] != "worktree" || got["run_in_background"] != false {
		t.Errorf("a worker of an isolated batch launched without isolation: updatedInput %v", got)
	}
	if got := call(map[string]any{"subagent_type": "reviewer", "description": "d", "prompt": prompt("2"), "run_in_background": false, "isolation": "worktree"}); got != nil {
		t.Errorf("a call as the block gives it was rewritten: %v", got)
	}
	// Never for an agent that is not an isolated worker: the workflow's
	// own agent handed no worker loses it, another agent keeps its input.
	if got := call(map[string]any{"subagent_type": "reviewer", "description": "d", "prompt": "Read first: " + brief, "run_in_background": false, "isolation": "worktree"}); got == nil || got["isolation"] != nil {
		t.Errorf("the workflow's agent with no worker of an isolated batch keeps isolation: %v", got)
	}
	if got := call(map[string]any{"subagent_type": "Explore", "description": "d", "prompt": prompt("1"), "isolation": "worktree"}); got != nil {
		t.Errorf("an agent not the workflow's was rewritten: %v", got)
	}

	// The worker works in its worktree and writes its artifact there, at
	// the path its prompt gives from the project's root.
	wt := filepath.Join(project, ".claude", "worktrees", "agent-a1")
	artifact := filepath.Join(spec, value(plan, "OUTPUT_1"))
	if err := os.MkdirAll(filepath.Join(wt, filepath.Dir(artifact)), 0o755); err != nil {
		t.Fatal(err)
	}
	report := "# Left\n\n## Executive Summary\n\nFine.\n\n## Key Findings\n\n- one\n"
	if err := os.WriteFile(filepath.Join(wt, artifact), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	// Its transcript, where Claude Code keeps it beside the session's.
	session := filepath.Join(t.TempDir(), "s1.jsonl")
	transcript := filepath.Join(strings.TrimSuffix(session, ".jsonl"), "subagents", "agent-a1.jsonl")
	first := payload(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt("1")}})
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(transcript, []byte(first+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := func(event string, fields map[string]any) result {
		t.Helper()
		base := map[string]any{"session_id": "s1", "transcript_path": session, "cwd": wt, "agent_id": "a1", "agent_type": "reviewer"}
		for k, v := range fields {
			base[k] = v
		}
		r := hook(t, project, "", event, payload(base))
		if r.code != 0 {
			t.Fatal(r)
		}
		return r
	}
	// Its write of the other worker's artifact, in its worktree, is that
	// file of the project's: refused.
	other := filepath.Join(wt, spec, value(plan, "OUTPUT_2"))
	r := agent("pre-tool-use", map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": map[string]any{"file_path": other, "content": "x"}})
	if gjson.Get(r.stdout, "hookSpecificOutput.permissionDecision").String() != "deny" {
		t.Errorf("an isolated worker's write of another worker's artifact in its worktree: %q", r.stdout)
	}
	agent("subagent-start", nil)
	agent("subagent-stop", map[string]any{"agent_transcript_path": transcript})
	if b, err := os.ReadFile(filepath.Join(project, artifact)); err != nil || string(b) != report {
		t.Errorf("the artifact did not reach the project as the agent stopped: %q, %v", b, err)
	}
	if exists(filepath.Join(wt, artifact)) {
		t.Errorf("the artifact is left in the worktree, which Claude Code would then keep for it")
	}
	for _, kind := range []string{"agent_start", "agent_stop"} {
		if evs := events(t, project, id, kind); len(evs) != 1 || evs[0].Get("worktree").String() != wt {
			t.Errorf("%s: %v, want the worktree %s", kind, evs, wt)
		}
	}
	if w := events(t, project, id, "agent_stop")[0].Get("worker_id").String(); w != "review_1" {
		t.Errorf("the stop is attributed to %q", w)
	}
	// Its Agent call returns: where Claude Code kept its worktree, and
	// that it ran shell commands.
	returned := payload(map[string]any{"session_id": "s1", "cwd": project, "hook_event_name": "PostToolUse", "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "reviewer", "description": "d", "prompt": prompt("1")},
		"tool_response": map[string]any{"status": "completed", "agentId": "a1", "agentType": "reviewer", "totalDurationMs": 10,
			"toolsUsed": []string{"Read", "Bash", "Write"}, "worktreePath": wt, "worktreeBranch": "worktree-agent-a1"}})
	if r := hook(t, project, "", "post-tool-use", returned); r.code != 0 {
		t.Fatal(r)
	}
	used := events(t, project, id, "agent_usage")
	if len(used) != 1 || used[0].Get("worktree").String() != wt || used[0].Get("branch").String() != "worktree-agent-a1" || !used[0].Get("shell").Bool() {
		t.Errorf("agent_usage %v: want the worktree, its branch and shell", used)
	}
	// The other worker's Agent call fails before its agent runs (its
	// worktree could not be made): its launch ends, recorded.
	failed := payload(map[string]any{"session_id": "s1", "cwd": project, "hook_event_name": "PostToolUseFailure", "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "reviewer", "description": "d", "prompt": prompt("2"), "isolation": "worktree"},
		"error":      "Failed to create worktree: fatal: failed to read commondir: Success"})
	if r := hook(t, project, "", "post-tool-use-failure", failed); r.code != 0 || r.stdout != "" {
		t.Fatal(r)
	}
	if evs := events(t, project, id, "agent_failed"); len(evs) != 1 || evs[0].Get("worker_id").String() != "review_2" || !strings.Contains(evs[0].Get("error").String(), "Failed to create worktree") {
		t.Errorf("agent_failed %v: want review_2's, with the error", evs)
	}
	if !strings.Contains(flowstate(t, project, "s1", "checkpoint-get", "phase_data.review.planned"), `"isolated":true`) {
		t.Errorf("the plan is not recorded isolated")
	}
}
