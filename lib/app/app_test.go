package app

import (
	"bytes"
	"strings"
	"testing"
)

// run runs flowstate in-process in project dir, as session s1.
func run(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CLAUDE_CODE_SESSION_ID": "s1"}
	code = Main(append([]string{"flowstate"}, args...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Cwd: dir})
	return out.String(), errb.String(), code
}

// TestResumeGlobalWorkflow: the global --workflow picks the workflow to
// resume over the session's current one, as it does for every command.
func TestResumeGlobalWorkflow(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"other1", "other2"} {
		if _, stderr, code := run(t, dir, "sm-init", "--workflow", id, "--description", "d", "--command", "orchestrate", "--scope", "research-only"); code != 0 {
			t.Fatalf("sm-init %s: exit %d: %s", id, code, stderr)
		}
	}
	// other2, created last, is the session's current workflow.
	out, stderr, code := run(t, dir, "--workflow", "other1", "resume")
	if code != 0 || !strings.Contains(out, "WORKFLOW_ID=other1\n") {
		t.Errorf("--workflow other1 resume: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := run(t, dir, "--workflow", "other1", "resume", "other2"); code != 2 || !strings.Contains(stderr, "contradicts --workflow other1") {
		t.Errorf("--workflow other1 resume other2: exit %d, %s; want a usage error", code, stderr)
	}
}

// TestStatusLines: sm-status and supervisor-status print through the
// KEY=VALUE writer, a line per key.
func TestStatusLines(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := run(t, dir, "sm-init", "--workflow", "w1", "--description", "d", "--command", "orchestrate", "--scope", "research-only"); code != 0 {
		t.Fatalf("sm-init: exit %d: %s", code, stderr)
	}
	want := "WORKFLOW_ID=w1\nCOMMAND_NAME=orchestrate\nWORKFLOW_SCOPE=research-only\nCURRENT_STATE=initialize\nTERMINAL_STATE=research\nCOMPLETED_STATES=\nIS_TERMINAL=false\n"
	if out, stderr, code := run(t, dir, "sm-status"); code != 0 || out != want {
		t.Errorf("sm-status: exit %d, %s\n got %q\nwant %q", code, stderr, out, want)
	}
	want = "WORKERS_COMPLETED=\nWORKERS_FAILED=\nWORKERS_PENDING=a,b\nWORKERS_TO_RUN=a,b\nWORKERS_TO_RUN_COUNT=2\n"
	if out, stderr, code := run(t, dir, "supervisor-status", "--expect", "a,b", "research_supervisor"); code != 0 || out != want {
		t.Errorf("supervisor-status: exit %d, %s\n got %q\nwant %q", code, stderr, out, want)
	}
}
