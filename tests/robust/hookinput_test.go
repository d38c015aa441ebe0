package robust

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHookInputsNeverBlock: what Claude Code hands a hook is input too.
// A transcript path naming a FIFO, a device, a gigabyte or a link, a
// payload of 100 MB or of garbage, a session id that is a path: every
// hook exits 0 at once in bounded memory, and nothing outside the
// project changes.
func TestHookInputsNeverBlock(t *testing.T) {
	p, _ := victim(t)
	p.setenv("CLAUDE_CODE_SESSION_ID=s1")
	p.ok("sm-init", "--workflow", "w1", "--description", "d", "--command", "coordinate", "--scope", "research-only")
	p.ok("--workflow", "w1", "phase-plan")
	dir := filepath.Join(p.Root, "tmp")
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	if err := os.WriteFile(huge, nil, 0o600); err != nil || os.Truncate(huge, 1<<30) != nil {
		t.Fatal("cannot make a sparse file", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(outside(t, p, "transcript.jsonl", `{"type":"user","message":{"content":"x"}}`+"\n"), link); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, p.Root, "project", "tmp")
	payload := func(transcript, session string) io.Reader {
		b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": p.Dir, "agent_id": "a1",
			"agent_type": "flowstate:research-specialist", "agent_transcript_path": transcript})
		return strings.NewReader(string(b))
	}
	runHook := func(what, event string, stdin io.Reader) {
		t.Helper()
		r := p.runWithin(call{Args: []string{"hook", event}, Stdin: stdin, Env: []string{"CLAUDE_ENV_FILE="}})
		if r.Code != 0 || r.MaxRSSKB > 128<<10 || strings.Contains(r.Stdout, "\n{") {
			t.Errorf("hook %s with %s: %s, peak RSS %d MB", event, what, r, r.MaxRSSKB>>10)
		}
	}
	for _, tr := range []string{fifo, "/dev/zero", "/dev/urandom", huge, link, dir} {
		runHook("transcript "+tr, "subagent-stop", payload(tr, "s1"))
	}
	for _, event := range []string{"session-start", "pre-tool-use", "subagent-stop", "stop", "user-prompt-submit", "session-end"} {
		runHook("100 MB of stdin", event, hugeJSON(100<<20))
		runHook("garbage", event, strings.NewReader("\xff\x00{{"))
		for _, session := range []string{"../../../outside/x", strings.Repeat("s", 10<<10), "/etc/passwd"} {
			runHook("session "+session[:min(len(session), 20)], event, payload(huge, session))
		}
	}
	sameTree(t, "outside the project", before, snapshot(t, p.Root, "project", "tmp"))
}

// TestHooksLogStaysBounded: hooks.log is rotated to hooks.log.1 past
// its bound; with a directory planted at hooks.log.1, the log is not
// written on (the hook logs to ~/.claude instead), so it cannot grow
// without bound.
func TestHooksLogStaysBounded(t *testing.T) {
	p, _ := victim(t)
	log := filepath.Join(p.stateDir(), "hooks.log")
	if err := os.WriteFile(log, []byte(strings.Repeat("an old line\n", 50_000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(log+".1", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(log)
	for range 3 {
		if r := hook(p, "stop", "not json"); r.Code != 0 {
			t.Fatalf("hook stop: %s", r)
		}
	}
	if after, _ := os.Stat(log); after.Size() != before.Size() {
		t.Errorf("hooks.log grew from %d to %d bytes past its bound", before.Size(), after.Size())
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, "home", ".claude", "flowstate-hooks.log")); err != nil || !strings.Contains(string(b), "stop: hook payload") {
		t.Errorf("the hook did not log to the fallback log: %v %q", err, b)
	}
}
