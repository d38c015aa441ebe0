package robust

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// Real faults: a lock file deleted while held, no HOME, a full disk, an
// I/O error, read-only files, a hook whose stdin stays open. The rule
// they check is docs/architecture.md's: a non-zero exit changes nothing,
// or exactly what its message says.

// skipUnless skips a test the machine cannot do, or fails it when the
// environment variable require is set: test.sh sets
// FLOWSTATE_REQUIRE_STRACE once strace is there and
// FLOWSTATE_REQUIRE_ROOT_FAULTS when it runs as root, so that a fault
// test that could not run there fails instead of passing unseen.
func skipUnless(t *testing.T, require, format string, a ...any) {
	t.Helper()
	if os.Getenv(require) != "" {
		t.Fatalf(format+" ("+require+" is set)", a...)
	}
	t.Skipf(format, a...)
}

// straceOrSkip returns strace, which injects faults into one file's
// system calls (test.sh installs it), or skips where it cannot trace
// (fails with FLOWSTATE_REQUIRE_STRACE set).
func straceOrSkip(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("strace")
	if err != nil {
		skipUnless(t, "FLOWSTATE_REQUIRE_STRACE", "strace is not installed (test.sh installs it): no way to inject an I/O error")
	}
	if out, err := exec.Command(path, "-f", "-qq", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		skipUnless(t, "FLOWSTATE_REQUIRE_STRACE", "strace cannot trace here (%v: %s)", err, out)
	}
	return path
}

// inject makes every later run of p fail the system calls of set
// (strace's syntax: "write,fsync") on the files at paths with errno, all
// others running as usual; inject with no paths ends it. A file that
// does not exist yet is matched once it does: by name.
func (p *project) inject(set, errno string, paths ...string) {
	p.t.Helper()
	if len(paths) == 0 {
		p.bin = bin
		return
	}
	script := `exec strace -f -qq -o /dev/null`
	for _, path := range paths {
		script += " -P " + shellQuote(path)
	}
	p.wrap(script + " -e inject=" + set + ":error=" + errno + ` "$flowstate" "$@"`)
}

// renames are the ways a file is renamed into place (Go uses renameat).
const renames = "rename,renameat,renameat2"

// TestLockFileRemovedWhileHeld: four writers increment one counter while
// the workflow's lock file is deleted over and over. Every increment
// that reported success is counted: before, a writer that created a new
// lock file while another held the deleted one got in beside it, and
// 120 increments left a counter of 85 to 88.
func TestLockFileRemovedWhileHeld(t *testing.T) {
	p, id := victim(t)
	lock := filepath.Join(p.wfDir(id), "lock")
	stop := make(chan struct{})
	var deleter sync.WaitGroup
	deleter.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = os.Remove(lock)
				time.Sleep(100 * time.Microsecond) // many times a command, without taking a core
			}
		}
	})
	const writers, each = 4, 30
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				r := p.run(args("checkpoint-set", "phase_data.demo.count", "--increment"))
				mu.Lock()
				if r.Code == 0 {
					acked++
				} else {
					t.Errorf("increment: %s", r)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	deleter.Wait()
	if got := strings.TrimSpace(p.ok("checkpoint-get", "phase_data.demo.count")); got != strconv.Itoa(acked) {
		t.Errorf("%d increments acknowledged with the lock file deleted throughout, counter is %s", acked, got)
	}
}

// TestTransitionIsAllOrNothing: a transition whose event cannot be
// appended (a full disk) changes nothing, nor does one whose checkpoint
// cannot be written: its event is cut off again. Before, the checkpoint
// was replaced first, so a failed append left the transition made with
// exit 1 and missing from history. If even the cut fails, the event
// stays at the end of the log naming a revision the checkpoint never
// reached: history leaves it out and the next write removes it.
func TestTransitionIsAllOrNothing(t *testing.T) {
	straceOrSkip(t)
	p, id := victim(t)
	events, cp := filepath.Join(p.wfDir(id), "events.jsonl"), filepath.Join(p.wfDir(id), "checkpoint.json")
	for _, f := range []struct{ what, set, errno, path string }{
		{"event append", "write", "ENOSPC", events},
		{"checkpoint write", renames, "ENOSPC", cp},
		{"checkpoint write", renames, "EIO", cp},
	} {
		before := snapshot(t, p.Dir)
		p.inject(f.set, f.errno, f.path)
		r := p.run(args("sm-transition", "plan"))
		p.inject("", "")
		wantRefusal(t, "sm-transition with a failing "+f.what, r, 1, errnoText[f.errno], "nothing was written")
		sameTree(t, "sm-transition with a failing "+f.what, before, snapshot(t, p.Dir))
	}

	logged := p.readFile(events)
	p.inject(renames+",ftruncate", "EIO", cp, events)
	r := p.run(args("sm-transition", "plan"))
	p.inject("", "")
	if r.Code != 1 {
		t.Fatalf("sm-transition with a failing checkpoint write and cut: %s", r)
	}
	if strings.Contains(p.ok("history"), "research → plan") {
		t.Errorf("history shows a transition that did not happen:\n%s", p.ok("history"))
	}
	p.ok("checkpoint-set", "phase_data.research.n", "4")
	if got := p.readFile(events); string(got) != string(logged) {
		t.Errorf("the next write left the failed transition's event in the log:\n%s", got)
	}
	p.ok("sm-transition", "plan")
	if n := strings.Count(p.ok("history"), "research → plan"); n != 1 {
		t.Errorf("history shows research → plan %d times, want once", n)
	}
}

// errnoText is how an error number reads in a message.
var errnoText = map[string]string{"ENOSPC": "no space left on device", "EIO": "input/output error"}

// TestStateAppendFsyncFails: when the state file's fsync fails (EIO),
// state-append K V exits 1 and K keeps its value, as the batch form
// (state-append --stdin) always did. Before, the line stayed in the
// file, so state-get returned the value the command said it failed to
// store.
func TestStateAppendFsyncFails(t *testing.T) {
	straceOrSkip(t)
	p, id := victim(t)
	before := snapshot(t, p.Dir)
	// The batch form writes a temp file and renames it over the state.
	p.inject("fsync,"+renames, "EIO", filepath.Join(p.wfDir(id), "state"))
	for _, c := range []call{args("state-append", "KEPT", "new"), {Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("KEPT=new\nOTHER=x\n")}} {
		r := p.run(c)
		wantRefusal(t, strings.Join(c.Args, " ")+" with fsync failing", r, 1, "input/output error")
	}
	p.inject("", "")
	sameTree(t, "state-append with fsync failing", before, snapshot(t, p.Dir))
	if got := p.ok("state-get", "KEPT"); got != "value with $(rm -rf /) in it" {
		t.Errorf("state-get KEPT = %q after a state-append that failed", got)
	}
}

// TestHomeUnset: with HOME unset, a bash block in a directory under the
// home (found in /etc/passwd) that is in no project keeps its state
// there, never in the home's .claude, Claude Code's configuration; with
// no home in /etc/passwd either, it refuses (exit 2) and says why. A
// private mount namespace gives the run a passwd naming a test home.
func TestHomeUnset(t *testing.T) {
	p := newProject(t)
	home := filepath.Join(p.Root, "home")
	work := filepath.Join(home, "code", "tool")
	for _, d := range []string{filepath.Join(home, ".claude"), work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func(passwd string) result {
		t.Helper()
		file := filepath.Join(p.Root, "passwd")
		if err := os.WriteFile(file, []byte(passwd), 0o644); err != nil {
			t.Fatal(err)
		}
		// Inside a user namespace (when not root) the uid is 0 too.
		ns := []string{"-m"}
		if os.Geteuid() != 0 {
			ns = []string{"-r", "-m"}
		}
		const mount = `mount --bind "$0" /etc/passwd && exec "$@"`
		cmd := exec.Command("unshare", append(ns, "sh", "-c", mount, file, bin, "sm-init", "--description", "d", "--command", "c", "--scope", "research-only")...)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(p.Root, "tmp")}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := result{Stdout: stdout.String(), Stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.Stderr, "unshare:") || strings.Contains(r.Stderr, "mount:") {
			skipUnless(t, "FLOWSTATE_REQUIRE_ROOT_FAULTS", "no private mount namespace here to give flowstate another /etc/passwd: %s", r.Stderr)
		}
		return r
	}
	r := run("root:x:0:0:root:" + home + ":/bin/sh\n")
	if r.Code != 0 {
		t.Fatalf("sm-init with HOME unset: %s", r)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "state")); err == nil {
		t.Errorf("state went to the home's .claude/state")
	}
	if _, err := os.Stat(filepath.Join(work, ".claude", "state", "workflows", strings.TrimSpace(r.Stdout), "checkpoint.json")); err != nil {
		t.Errorf("the workflow is not in the working directory's project: %v", err)
	}
	r = run("nobody:x:65534:65534::/nonexistent:/bin/sh\n")
	wantRefusal(t, "sm-init with no HOME and no home in /etc/passwd", r, 2, "HOME is not set", "CLAUDE_PROJECT_DIR")
}

// TestHookStdinLeftOpen: a hook reads the one JSON value on its stdin
// and acts on it, whether or not stdin is ever closed. Before, it waited
// for the end of stdin, gave up after 5 s and dropped the payload: here
// the prompt a user typed would not have been recorded.
func TestHookStdinLeftOpen(t *testing.T) {
	p := newProject(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // only after the hook returned: it never sees the end of its input
	b, _ := json.Marshal(map[string]string{"session_id": "s9", "cwd": p.Dir, "hook_event_name": "UserPromptSubmit", "prompt": "/workflow-approve looks good"})
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	res := p.runWithin(call{Args: []string{"hook", "user-prompt-submit"}, Stdin: r})
	if res.Code != 0 {
		t.Fatalf("hook: %s", res)
	}
	got, err := os.ReadFile(filepath.Join(p.stateDir(), "prompts", "s9"))
	if err != nil || gjson.GetBytes(got, "command").String() != "workflow-approve" {
		t.Errorf("the hook did not act on its payload with stdin left open: %q, %v; hooks.log: %s", got, err, readOr(filepath.Join(p.stateDir(), "hooks.log")))
	}
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestClockSteppedBack: events whose times go back (the clock was
// stepped back between two commands; here the log is edited so) give no
// negative duration in history --json, and keep the order written.
// Before: -7198269 ms, which history printed as 0s.
func TestClockSteppedBack(t *testing.T) {
	p, id := victim(t)
	p.ok("sm-transition", "plan")
	events := filepath.Join(p.wfDir(id), "events.jsonl")
	lines := strings.SplitAfter(string(p.readFile(events)), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"to":"plan"`) { // the last transition, two hours before the one it follows
			lines[i] = regexp.MustCompile(`"ts":"[^"]*"`).ReplaceAllString(l, `"ts":"2000-01-01T00:00:00Z"`)
		}
	}
	if err := os.WriteFile(events, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Events []struct {
			Seq        int    `json:"seq"`
			Event      string `json:"event"`
			DurationMs *int64 `json:"duration_ms"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(p.ok("history", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, e := range doc.Events {
		kinds = append(kinds, e.Event)
		if e.Seq != i+1 {
			t.Errorf("event %d has seq %d", i+1, e.Seq)
		}
		if e.DurationMs != nil && *e.DurationMs < 0 {
			t.Errorf("event %d, %s, took %d ms", i+1, e.Event, *e.DurationMs)
		}
	}
	if want := "init transition transition"; strings.Join(kinds, " ") != want {
		t.Errorf("events %q, want %q in the order written", kinds, want)
	}
}
