package app

import (
	"bytes"
	"os"
	"path/filepath"
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
	if code != 0 || !strings.Contains(out, "SPEC_DIR=.flowstate/specs/other1\n") {
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

// TestErrorMessages: mistakes get one line that says what was wrong with
// what, without repeating a prefix (`checkpoint-save: checkpoint: ...`),
// and a message about a document being saved gives no repair advice for
// the stored checkpoint, which it did not touch.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := run(t, dir, "sm-init", "--workflow", "w1", "--description", "d", "--command", "orchestrate", "--scope", "research-only"); code != 0 {
		t.Fatalf("sm-init: exit %d: %s", code, stderr)
	}
	machine := filepath.Join(dir, "machine.json")
	if err := os.WriteFile(machine, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"{bad", []string{"checkpoint-save"}, 4, "flowstate: the document on stdin is not valid JSON; nothing was written, the checkpoint of workflow w1 is unchanged\n"},
		{"", []string{"sm-init", "--description", "d", "--command", "c", "--classification", `{"workflow_type":"x"}`}, 4, "flowstate: classification: workflow_type \"x\" is not one of"},
		{"", []string{"sm-init", "--description", "d", "--command", "c", "--scope", "s", "--machine", machine}, 4, "flowstate: " + machine + ": machine: not valid machine JSON"},
		{"", []string{"--workflow", "../x", "sm-status"}, 4, "flowstate: workflow id: \"../x\": only letters"},
		{"", []string{"sm-init", "--description", "d", "--command", "a b", "--scope", "research-only"}, 4, "flowstate: --command: \"a b\": a name is lower-case letters"},
		{"nope", []string{"checkpoint-get", "a", "--from", "-"}, 4, "flowstate: --from -: checkpoint: not valid JSON\n"},
		{"", []string{"state-append", "K"}, 2, "flowstate: state-append takes 2 argument(s): KEY VALUE; got 1 (see `flowstate state-append --help`)\n"},
	} {
		var out, errb bytes.Buffer
		env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CLAUDE_CODE_SESSION_ID": "s1"}
		code := Main(append([]string{"flowstate"}, c.args...), IO{Stdin: strings.NewReader(c.stdin), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }, Cwd: dir})
		msg := errb.String()
		if code != c.code || !strings.HasPrefix(msg, c.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and one line starting %q", c.args, code, msg, c.code, c.want)
		}
		if p := repeatedPrefix(msg); p != "" {
			t.Errorf("%v: %q repeats the prefix %q", c.args, msg, p)
		}
		if strings.Contains(msg, "backup") || strings.Contains(msg, "by hand") {
			t.Errorf("%v: %q gives repair advice for a file it did not touch", c.args, msg)
		}
	}
}

// repeatedPrefix finds a message part that names again what the part
// before it named ("checkpoint-save: checkpoint:", "--machine f:
// machine:", "workflow id: id ..."), and returns it.
func repeatedPrefix(msg string) string {
	parts := strings.Split(strings.TrimSpace(msg), ": ")
	word := func(s string, last bool) string {
		f := strings.Fields(s)
		if len(f) == 0 {
			return ""
		}
		w := f[0]
		if last {
			w = f[len(f)-1]
		}
		return strings.Trim(w, "-`\"'")
	}
	related := func(a, b string) bool {
		if a == "the" || a == "a" || a == "an" {
			return false
		}
		return a != "" && b != "" && (a == b || strings.HasPrefix(a, b+"-") || strings.HasPrefix(b, a+"-"))
	}
	for i := 1; i < len(parts); i++ {
		next := word(parts[i], false)
		if related(word(parts[i-1], false), next) || related(word(parts[i-1], true), next) {
			return parts[i-1] + ": " + parts[i]
		}
	}
	return ""
}

func TestRepeatedPrefix(t *testing.T) {
	for msg, want := range map[string]bool{
		"flowstate: checkpoint-save: checkpoint: cannot migrate":            true,
		"flowstate: --classification: classification: workflow_type":        true,
		"flowstate: --machine m.json: machine: not valid machine JSON":      true,
		"flowstate: workflow id: id \"../x\": only letters":                 true,
		"flowstate: workflow w1: unknown state \"x\"; states are: a, b":     false,
		"flowstate: the document on stdin: checkpoint: state: must be text": false,
	} {
		if got := repeatedPrefix(msg) != ""; got != want {
			t.Errorf("repeatedPrefix(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestFilesFromCwd: a file a person names is found from the working
// directory Main was given, not the process's: flags, --from and FILE
// arguments alike.
func TestFilesFromCwd(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := run(t, dir, "sm-init", "--workflow", "w1", "--description", "d", "--command", "orchestrate", "--scope", "research-only"); code != 0 {
		t.Fatalf("sm-init: exit %d: %s", code, stderr)
	}
	doc, _, _ := run(t, dir, "checkpoint-load")
	for name, body := range map[string]string{"doc.json": doc, "patch.json": `{"phase_data": {"x": {"a": 1}}}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"checkpoint-get", "--from", "doc.json", "workflow_id"},
		{"sm-transition", "research", "--checkpoint", "@patch.json"},
		{"checkpoint-save", "doc.json"},
	} {
		if _, stderr, code := run(t, dir, args...); code != 0 {
			t.Errorf("%v in %s: exit %d: %s", args, dir, code, stderr)
		}
	}
	if _, stderr, code := run(t, dir, "checkpoint-get", "--from", "missing.json", "x"); code != 2 || !strings.Contains(stderr, "--from: file missing.json not found") {
		t.Errorf("a missing file: exit %d, %s; want exit 2 naming it", code, stderr)
	}
}
