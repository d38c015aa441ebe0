package robust

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/tidwall/sjson"
)

// victim makes a project with a workflow that already holds data of
// every kind, so that a test can prove a refused command lost nothing.
func victim(t *testing.T) (*project, string) {
	p := newProject(t)
	id := p.newWorkflow("victim")
	p.ok("sm-transition", "research")
	p.ok("state-append", "KEPT", "value with $(rm -rf /) in it")
	p.ok("checkpoint-set", "phase_data.research.n", "3")
	p.ok("log-append", "metrics", `{"ms":12}`)
	return p, id
}

// refuse runs c against a victim workflow and checks the contract for
// hostile input: the exit code, one clear line, and a project (and HOME)
// exactly as it was.
func refuse(t *testing.T, p *project, c call, code int, wants ...string) result {
	t.Helper()
	before := snapshot(t, p.Root)
	r := p.run(c)
	what := strings.Join(c.Args, " ")
	if len(what) > 200 {
		what = what[:200] + "..."
	}
	wantRefusal(t, what, r, code, wants...)
	sameTree(t, "after a refused command", before, snapshot(t, p.Root))
	return r
}

func TestHostileIDs(t *testing.T) {
	p, _ := victim(t)
	long := strings.Repeat("a", 10<<10)
	prose := strings.Repeat("ten kilobytes of prose. ", 10<<10/24)
	ids := map[string]string{
		"dot-dot":      "../victim",
		"deep dot-dot": "../../../../../../etc",
		"slash":        "a/b",
		"absolute":     "/etc",
		"newline":      "vic\ntim",
		"control":      "vic\x01tim",
		"10KB":         long,
		"10KB prose":   prose,
		"dot":          ".",
		"dash":         "-rf",
	}
	// NUL cannot reach a process through argv or the environment (execve
	// takes C strings); Go refuses to even try, which is what we check.
	if err := exec.Command(bin, "--workflow", "a\x00b").Run(); err == nil {
		t.Error("a NUL in argv reached the process")
	}
	for name, id := range ids {
		for _, cmd := range [][]string{{"state-append", "K", "v"}, {"state-load"}, {"sm-transition", "plan"}} {
			t.Run(name+"/"+cmd[0], func(t *testing.T) {
				flag := append([]string{cmd[0], "--workflow", id}, cmd[1:]...)
				if cmd[0] == "state-append" { // its arguments are verbatim: flags first
					flag = append([]string{"--workflow", id}, cmd...)
				}
				r := refuse(t, p, args(flag...), 4, "id")
				if len(r.Stderr) > 400 {
					t.Errorf("message of %d bytes: quote less of the id", len(r.Stderr))
				}
				refuse(t, p, call{Args: cmd, Env: []string{"FLOWSTATE_WORKFLOW=" + id}}, 4, "FLOWSTATE_WORKFLOW")
			})
		}
	}
}

func TestHostileKeysAndValues(t *testing.T) {
	p, _ := victim(t)
	for _, key := range []string{"1abc", "a-b", "a b", "", "K=V", "$(touch pwned)", "é", "K\n", "WORKFLOW_ID", "CURRENT_STATE"} {
		refuse(t, p, args("state-append", key, "v"), 4, "")
		if !strings.Contains(key, "=") && !strings.Contains(key, "\n") { // else stdin reads another, valid, line
			refuse(t, p, call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("OK=1\n" + key + "=v\n")}, 4)
		}
		if key != "WORKFLOW_ID" && key != "CURRENT_STATE" { // derived keys can be read
			refuse(t, p, args("state-get", key), 4, "key")
		}
	}
	refuse(t, p, call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("OK=1\nNUL=a\x00b\n")}, 4, "NUL")
	refuse(t, p, call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("OK=1\nno equals sign\n")}, 4, "line 2")
	for _, path := range []string{"a..b", ".a", "a.", "a[0]", "a.#", "a.*", "phase_data.x|y", strings.Repeat("a.", 400) + "a"} {
		refuse(t, p, args("checkpoint-set", path, "1"), 4, "path")
		refuse(t, p, args("checkpoint-get", path), 4, "path")
	}
	for _, v := range []string{"not json", "{", `"unterminated`, "", "1 2"} {
		refuse(t, p, args("checkpoint-set", "phase_data.x", v), 4, "JSON")
	}
	// Valid JSON that would make the checkpoint invalid.
	refuse(t, p, args("checkpoint-set", "state_machine.current_state", `"nowhere"`), 4)
	refuse(t, p, args("checkpoint-set", "schema_version", `"9.9"`), 4)
	refuse(t, p, args("checkpoint-set", "--increment", "workflow_id"), 4)
}

func TestHostileCheckpoints(t *testing.T) {
	p, id := victim(t)
	doc := p.readFile(filepath.Join(p.wfDir(id), "checkpoint.json"))
	with := func(path string, v any) io.Reader {
		b, err := sjson.SetBytes(doc, path, v)
		if err != nil {
			t.Fatal(err)
		}
		return strings.NewReader(string(b))
	}
	save := func(in io.Reader) call { return call{Args: []string{"checkpoint-save"}, Stdin: in} }
	for _, bad := range []string{"", "{", `{"schema_version":`, "[]", "null", `"text"`, "{}", string(doc[:len(doc)/2])} {
		refuse(t, p, save(strings.NewReader(bad)), 4)
	}
	refuse(t, p, save(with("schema_version", "3.0")), 4, "3.0")
	refuse(t, p, save(with("workflow_id", "someone-else")), 4, "workflow_id")
	refuse(t, p, save(with("state_machine.current_state", "nowhere")), 4)
	refuse(t, p, save(with("phase_data", "not an object")), 4)

	// 100 MB of JSON on stdin: refused after reading at most the limit,
	// in bounded memory. The time bound only catches a refusal that hangs
	// or crawls; it is generous, since test.sh runs this next to every
	// other test package on a loaded 2-core runner.
	r := refuse(t, p, save(hugeJSON(100<<20)), 4, "MiB")
	if r.Elapsed > 30*time.Second {
		t.Errorf("100 MB input refused after %v", r.Elapsed)
	}
	if r.MaxRSSKB > 128<<10 {
		t.Errorf("100 MB input: peak RSS %d MB", r.MaxRSSKB>>10)
	}
	t.Logf("100 MB checkpoint refused in %v, peak RSS %d MB", r.Elapsed.Round(time.Millisecond), r.MaxRSSKB>>10)
}

// hugeJSON streams {"x":"aaa..."} of n bytes without holding it in memory.
func hugeJSON(n int) io.Reader {
	return io.MultiReader(strings.NewReader(`{"x":"`), io.LimitReader(repeatReader('a'), int64(n)), strings.NewReader(`"}`))
}

type repeatReader byte

func (r repeatReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(r)
	}
	return len(b), nil
}

// TestBadCheckpointOnDisk: a checkpoint of a future schema version, or a
// damaged one, is reported and left exactly as it is for a human.
func TestBadCheckpointOnDisk(t *testing.T) {
	p, id := victim(t)
	path := filepath.Join(p.wfDir(id), "checkpoint.json")
	doc := p.readFile(path)
	future, _ := sjson.SetBytes(doc, "schema_version", "3.0")
	for name, content := range map[string][]byte{"future version": future, "truncated": doc[:len(doc)/3], "empty": nil} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, c := range [][]string{{"checkpoint-load"}, {"checkpoint-get", "workflow_id"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"sm-transition", "plan"}, {"sm-status"}, {"state-load"}} {
				refuse(t, p, args(c...), 4, "checkpoint")
			}
		})
	}
}

func TestBadEnvironmentAndUsage(t *testing.T) {
	p, _ := victim(t)
	refuse(t, p, call{Args: []string{"state-append", "K", "v"}, Env: []string{"FLOWSTATE_LOCK_WAIT=banana"}}, 2, "FLOWSTATE_LOCK_WAIT")
	refuse(t, p, args("no-such-command"), 2, "no-such-command")
	refuse(t, p, args("state-load", "--no-such-flag"), 2)
	refuse(t, p, args("state-get"), 2, "KEY")
	refuse(t, p, args("state-get", "MISSING"), 2, "MISSING")
	refuse(t, p, args("checkpoint-save", filepath.Join(p.Root, "missing.json")), 2, "not found")
	refuse(t, p, call{Args: []string{"state-load"}, Env: []string{"FLOWSTATE_WORKFLOW=nosuch"}}, 2, "nosuch")
	refuse(t, p, args("sm-transition", "frobnicate"), 3, "frobnicate")
	refuse(t, p, args("sm-transition", "document"), 3, "research")
}

// TestSymlinkedStateDir: a state directory (or workflow directory) that
// is a symlink to somewhere else is refused by every command, and the
// place it points to is not touched.
func TestSymlinkedStateDir(t *testing.T) {
	elsewhere, id := victim(t)
	target := elsewhere.stateDir()
	for name, link := range map[string]func(p *project) string{
		"state dir": func(p *project) string { return p.stateDir() },
		"workflow dir": func(p *project) string {
			if err := os.MkdirAll(filepath.Join(p.stateDir(), "workflows"), 0o700); err != nil {
				t.Fatal(err)
			}
			return p.wfDir(id)
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t)
			to := target
			if name == "workflow dir" {
				to = elsewhere.wfDir(id)
			}
			if err := os.MkdirAll(filepath.Join(p.Dir, ".claude"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(to, link(p)); err != nil {
				t.Fatal(err)
			}
			p.setenv("FLOWSTATE_WORKFLOW=" + id)
			before := snapshot(t, elsewhere.Root)
			cmds := [][]string{
				{"state-append", "K", "v"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"sm-transition", "plan"},
				{"log-append", "m", "1"}, {"sm-fail", "--error", "x"}, {"state-load"}, {"checkpoint-load"},
			}
			if name == "state dir" { // a new workflow would be created through the link too
				cmds = append(cmds, []string{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"})
			}
			for _, c := range cmds {
				refuse(t, p, args(c...), 2, "symlink")
			}
			sameTree(t, "the symlink's target", before, snapshot(t, elsewhere.Root))
		})
	}
}

// TestUnwritableStateDir: writes into a read-only state directory fail
// with one line (exit 1) and change nothing; reads still work. Root
// ignores permission bits, so as root the directory is made read-only
// by a bind mount in a private mount namespace around each run.
func TestUnwritableStateDir(t *testing.T) {
	p, _ := victim(t)
	readOnly(t, p, p.stateDir())
	for _, c := range [][]string{
		{"state-append", "K", "v"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"sm-transition", "plan"}, {"log-append", "m", "1"},
		{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"},
	} {
		refuse(t, p, args(c...), 1, p.stateDir())
	}
	if got := p.ok("state-get", "KEPT"); !strings.Contains(got, "rm -rf") {
		t.Errorf("state-get on a read-only state dir: %q", got)
	}
}

func readOnly(t *testing.T, p *project, dir string) {
	if os.Geteuid() != 0 {
		chmodTree(dir, 0o500)
		t.Cleanup(func() { chmodTree(dir, 0o700) })
		return
	}
	const mount = `mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"`
	if out, err := exec.Command("unshare", "-m", "sh", "-c", mount, dir).CombinedOutput(); err != nil {
		skipUnless(t, "FLOWSTATE_REQUIRE_ROOT_FAULTS", "root, and no read-only bind mount possible (%v: %s): the unwritable-directory case needs a non-root user or CAP_SYS_ADMIN", err, out)
	}
	p.wrap(`exec unshare -m sh -c '` + mount + ` && shift && exec "$@"' ` + shellQuote(dir) + ` x "$flowstate" "$@"`)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func chmodTree(dir string, mode os.FileMode) {
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			_ = os.Chmod(path, mode)
		}
		return nil
	})
}

// TestLockHeldTooLong: a writer that cannot get the workflow's lock
// within FLOWSTATE_LOCK_WAIT gives up with exit 5 naming the lock file.
func TestLockHeldTooLong(t *testing.T) {
	p, id := victim(t)
	p.setenv("FLOWSTATE_LOCK_WAIT=300ms")
	for name, lockPath := range map[string]string{
		"workflow": filepath.Join(p.wfDir(id), "lock"),
		"project":  filepath.Join(p.stateDir(), "lock"),
	} {
		t.Run(name, func(t *testing.T) {
			fl := flock.New(lockPath)
			if err := fl.Lock(); err != nil {
				t.Fatal(err)
			}
			defer fl.Unlock()
			cmds := [][]string{{"state-append", "K", "v"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"sm-transition", "plan"}, {"log-append", "m", "1"}, {"sm-retry"}}
			if name == "project" {
				cmds = [][]string{{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"}}
			}
			for _, c := range cmds {
				r := refuse(t, p, args(c...), 5, lockPath)
				// At least FLOWSTATE_LOCK_WAIT is the contract; the upper
				// bound only catches a wait that ignores the setting, with
				// room for a loaded CI machine.
				if r.Elapsed < 300*time.Millisecond || r.Elapsed > 10*time.Second {
					t.Errorf("%s gave up after %v; want 300ms..10s", c[0], r.Elapsed)
				}
			}
			// Readers do not need the lock.
			p.ok("state-load")
		})
	}
}
