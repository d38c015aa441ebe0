package hooktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeHook runs PreToolUse for a call of tool with input in session
// (inside agent when it is not ""), from cwd, and returns the reason of
// its refusal, "" when it lets the call through without a refusal.
func writeHook(t *testing.T, project, session, agent, cwd, tool string, input map[string]any) string {
	t.Helper()
	fields := map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool,
		"tool_input": input, "tool_use_id": "toolu_1", "permission_mode": "default"}
	if agent != "" {
		fields["agent_id"], fields["agent_type"] = "a1", agent
	}
	decision, reason := decided(t, hook(t, project, "", "pre-tool-use", payload(fields)))
	if decision == "deny" {
		return reason
	}
	return ""
}

// decided is the permission decision of a PreToolUse hook's answer and
// its reason; "" when it decided nothing.
func decided(t *testing.T, r result) (decision, reason string) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("pre-tool-use: exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout == "" {
		return "", ""
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName, PermissionDecision, PermissionDecisionReason string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Fatalf("stdout %q is not a PreToolUse answer", r.stdout)
	}
	if d := out.HookSpecificOutput.PermissionDecision; d != "" && out.HookSpecificOutput.PermissionDecisionReason == "" {
		t.Fatalf("%s without a reason: %s", d, r.stdout)
	}
	return out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason
}

// TestPreToolUseRefusesTheMainThreadsWriteOfAnAgentsFile: the write
// guard holds a worker's artifact to its worker: the main thread's write
// of it, however the path is spelled, and another agent's are refused;
// every other file is left to the person.
func TestPreToolUseRefusesTheMainThreadsWriteOfAnAgentsFile(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	rel, _ := filepath.Rel(project, output)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	write := func(path string) map[string]any { return map[string]any{"file_path": path, "content": "# report\n"} }
	edit := func(path string) map[string]any {
		return map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}
	}
	worker := "flowstate:research-specialist"
	for _, c := range []struct {
		name, session, agent, cwd, tool string
		input                           map[string]any
		refused                         bool
	}{
		{"the main thread writes the worker's report", "s1", "", project, "Write", write(output), true},
		{"by a relative path", "s1", "", project, "Edit", edit(rel), true},
		{"relative to another cwd", "s1", "", filepath.Join(project, ".flowstate"), "Write", write(strings.TrimPrefix(rel, ".flowstate/")), true},
		{"through ..", "s1", "", project, "MultiEdit", map[string]any{"file_path": filepath.Join(project, "docs", "..", rel), "edits": []any{}}, true},
		{"through a linked directory", "s1", "", project, "Write", write(filepath.Join(link, rel)), true},
		{"a notebook edit", "s1", "", project, "NotebookEdit", map[string]any{"notebook_path": output, "new_source": "x"}, true},
		{"the worker writes its report", "s1", worker, project, "Write", write(output), false},
		{"another agent of the session", "s1", "general-purpose", project, "Edit", edit(output), true},
		{"another file of the workflow", "s1", "", project, "Write", write(filepath.Join(filepath.Dir(output), "notes.md")), false},
		{"a file of the project", "s1", "", project, "Write", write("README.md"), false},
		{"a file outside the project", "s1", "", project, "Write", write(filepath.Join(t.TempDir(), "x.md")), false},
		{"another tool", "s1", "", project, "Read", map[string]any{"file_path": output}, false},
		{"a session without a workflow", "s2", "", project, "Write", write(output), false},
		{"no path", "s1", "", project, "Write", map[string]any{"content": "x"}, false},
	} {
		reason := writeHook(t, project, c.session, c.agent, c.cwd, c.tool, c.input)
		switch {
		case c.refused && reason == "":
			t.Errorf("%s: let through", c.name)
		case !c.refused && reason != "":
			t.Errorf("%s: refused: %s", c.name, reason)
		case c.refused:
			for _, want := range []string{"Only the research-specialist worker research_1 writes " + rel, "do not write it yourself", "next bash block"} {
				if !strings.Contains(reason, want) {
					t.Errorf("%s: the reason %q lacks %q", c.name, reason, want)
				}
			}
		}
	}
	if _, err := os.Stat(output); err == nil {
		t.Errorf("the hook wrote %s", output)
	}

	// While the classifier is asked for, its file is its own.
	r := exe(t, []string{"CLAUDE_PROJECT_DIR=" + project, "CLAUDE_CODE_SESSION_ID=s3", "PATH=/usr/bin:/bin"},
		"research auth flows", bin, "phase-start", "--command", "coordinate")
	class := value(r.stdout, "CLASSIFICATION_PATH")
	if r.code != 0 || class == "" || value(r.stdout, "NEXT") != "classify" {
		t.Fatalf("phase-start: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if reason := writeHook(t, project, "s3", "", project, "Write", write(class)); !strings.Contains(reason, "Only the workflow-classifier agent writes") {
		t.Errorf("the main thread's classification: %q", reason)
	}
	if reason := writeHook(t, project, "s3", "flowstate:workflow-classifier", project, "Write", write(class)); reason != "" {
		t.Errorf("the classifier's own classification refused: %s", reason)
	}

	// A finished workflow's files are anyone's.
	flowstate(t, project, "s1", "sm-finish", "--status", "complete")
	if list := flowstate(t, project, "s1", "list"); !strings.Contains(list, id) || !strings.Contains(list, "complete") {
		t.Fatalf("workflow %s is not complete after sm-finish:\n%s", id, list)
	}
	if reason := writeHook(t, project, "s1", "", project, "Write", write(output)); reason != "" {
		t.Errorf("a finished workflow's report: refused: %s", reason)
	}
}
