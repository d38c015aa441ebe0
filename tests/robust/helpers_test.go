package robust

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// project is a throwaway project directory with its own HOME and TMPDIR,
// so a test can see everything flowstate touches.
type project struct {
	t    testing.TB
	Root string // holds project/, home/ and tmp/
	Dir  string // CLAUDE_PROJECT_DIR
	env  []string
	bin  string // what runs as flowstate: the binary, or a wrapper around it
}

func newProject(t testing.TB) *project {
	t.Helper()
	root := t.TempDir()
	p := &project{t: t, Root: root, Dir: filepath.Join(root, "project"), bin: bin}
	for _, d := range []string{p.Dir, filepath.Join(root, "home"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"CLAUDE_PROJECT_DIR=" + p.Dir,
		"FLOWSTATE_LOCK_WAIT=10s",
	}
	return p
}

// setenv sets a variable for every later run of this project.
func (p *project) setenv(kv string) { p.env = append(p.env, kv) }

// call is one flowstate invocation.
type call struct {
	Args  []string
	Env   []string // added to the project's; later entries win
	Stdin io.Reader
}

func args(a ...string) call { return call{Args: a} }

// result is what a finished flowstate process left behind.
type result struct {
	Code     int
	Stdout   string
	Stderr   string
	Elapsed  time.Duration
	MaxRSSKB int64
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.Code) + ", stdout " + quote(r.Stdout) + ", stderr " + quote(r.Stderr)
}

func (p *project) command(c call) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(p.bin, c.Args...)
	cmd.Dir = p.Dir
	cmd.Env = append(append([]string{}, p.env...), c.Env...)
	cmd.Stdin = c.Stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// run runs c to completion. Only a failure to start is fatal: exit codes
// are the caller's to judge.
func (p *project) run(c call) result {
	p.t.Helper()
	cmd, stdout, stderr := p.command(c)
	start := time.Now()
	err := cmd.Run()
	return finish(p.t, cmd, err, start, stdout, stderr)
}

// hangLimit is how long runWithin lets a command run. A hang is what it
// catches, not slowness: the commands it runs take milliseconds, and a
// loaded CI machine must not turn them into failures.
const hangLimit = 30 * time.Second

// runWithin is run for a command that might block forever (on a FIFO, on
// a device that never ends): it is killed after hangLimit and the test
// fails saying so.
func (p *project) runWithin(c call) result {
	p.t.Helper()
	cmd, stdout, stderr := p.command(c)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	timer := time.AfterFunc(hangLimit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		p.t.Fatalf("flowstate %s still ran after %v; killed it", strings.Join(c.Args, " "), hangLimit)
	}
	return finish(p.t, cmd, err, start, stdout, stderr)
}

func finish(t testing.TB, cmd *exec.Cmd, err error, start time.Time, stdout, stderr *bytes.Buffer) result {
	t.Helper()
	r := result{Elapsed: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String()}
	var runErr error
	if r.Code, runErr = testenv.ExitCode(err); runErr != nil {
		t.Fatalf("running %v: %v", cmd.Args, runErr)
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSSKB = ru.Maxrss
		}
	}
	return r
}

// ok runs flowstate and fails the test unless it exits 0; it returns stdout.
func (p *project) ok(a ...string) string {
	p.t.Helper()
	return p.okCall(args(a...))
}

func (p *project) okCall(c call) string {
	p.t.Helper()
	r := p.run(c)
	if r.Code != 0 {
		p.t.Fatalf("flowstate %s: %s", strings.Join(c.Args, " "), r)
	}
	return r.Stdout
}

// newWorkflow creates workflow id (scope full-implementation) and makes
// it the one every later run acts on.
func (p *project) newWorkflow(id string) string {
	p.t.Helper()
	p.ok("sm-init", "--workflow", id, "--description", "robustness", "--command", "robust", "--scope", "full-implementation")
	p.setenv("FLOWSTATE_WORKFLOW=" + id)
	return id
}

// wrap makes every later run go through a shell script that ends in
// `exec flowstate "$@"`, to change what a plain exec cannot (umask,
// mount namespace).
func (p *project) wrap(script string) {
	p.t.Helper()
	path := filepath.Join(p.Root, "wrapper.sh")
	body := "#!/bin/sh\nflowstate='" + strings.ReplaceAll(bin, "'", `'\''`) + "'\n" + script + "\n"
	if err := os.WriteFile(path, []byte(body), 0o700); err != nil {
		p.t.Fatal(err)
	}
	p.bin = path
}

func (p *project) stateDir() string { return filepath.Join(p.Dir, ".claude", "state") }

func (p *project) wfDir(id string) string { return filepath.Join(p.stateDir(), "workflows", id) }

func (p *project) readFile(path string) []byte {
	p.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// checkIntact asserts what a crash may never break: the checkpoint is
// complete and valid, the state parses with at most a torn last line,
// every complete line of every JSONL file is JSON, and the binary's own
// readers load it all.
func (p *project) checkIntact(id string) {
	p.t.Helper()
	dir := p.wfDir(id)
	if err := checkpoint.Validate(p.readFile(filepath.Join(dir, "checkpoint.json"))); err != nil {
		p.t.Fatalf("checkpoint invalid: %v", err)
	}
	for _, w := range statefile.Parse(p.readFile(filepath.Join(dir, "state"))).Warnings {
		if !strings.Contains(w, "torn last line") {
			p.t.Fatalf("state file damaged beyond a torn tail: %s", w)
		}
	}
	jsonl, _ := filepath.Glob(filepath.Join(dir, "logs", "*.jsonl"))
	for _, f := range append(jsonl, filepath.Join(dir, "events.jsonl")) {
		checkJSONL(p.t, f, p.readFile(f))
	}
	for _, c := range []string{"checkpoint-load", "state-load"} {
		r := p.run(call{Args: []string{c}, Env: []string{"FLOWSTATE_LOCK_WAIT=2s"}})
		if r.Code != 0 {
			p.t.Fatalf("%s after a crash: %s", c, r)
		}
	}
}

// checkJSONL requires every newline-terminated line to be one JSON value;
// only a final unterminated (torn) line may be garbage.
func checkJSONL(t testing.TB, name string, data []byte) (lines [][]byte) {
	t.Helper()
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		if !complete {
			break
		}
		if !json.Valid(line) {
			t.Fatalf("%s: line is not JSON: %q", name, line)
		}
		lines = append(lines, line)
		data = rest
	}
	return lines
}

// snapshot records every file, directory and link under root (path ->
// kind, permissions and content), to prove a refused command changed
// nothing; skip names paths (relative to root) to leave out.
func snapshot(t testing.TB, root string, skip ...string) map[string]string {
	t.Helper()
	return testenv.Snapshot(t, root, skip...)
}

// sameTree fails the test with the paths that differ between two snapshots.
func sameTree(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	if diff := testenv.TreeDiff(before, after); len(diff) > 0 {
		t.Fatalf("%s: %s", what, strings.Join(diff, ", "))
	}
}

// wantRefusal checks the contract for a refused command: the documented
// exit code, nothing on stdout, and exactly one `flowstate: ...` line on
// stderr containing each of wants.
func wantRefusal(t testing.TB, what string, r result, code int, wants ...string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("%s: got %s; want exit %d", what, r, code)
	}
	if r.Stdout != "" {
		t.Errorf("%s: stdout must stay empty on failure, got %q", what, r.Stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "flowstate: ") || !strings.HasSuffix(r.Stderr, "\n") {
		t.Errorf("%s: want one `flowstate: ...` line on stderr, got %q", what, r.Stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("%s: stderr %q does not mention %q", what, r.Stderr, w)
		}
	}
}

func quote(s string) string {
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}
