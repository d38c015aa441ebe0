package robust

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A cloned repository is untrusted input: it can carry anything in
// .claude/state (links committed with `git add -f`, unpacked from an
// archive, FIFOs, huge files). These tests plant each such thing where
// flowstate keeps a file and check that nothing is written outside the
// project, nothing hangs, and every refusal is one line with its code.

// outside returns a path outside the project, beside it under the test's
// root, where a planted link may point; with content it is a file that
// exists, else the link dangles.
func outside(t *testing.T, p *project, name, content string) string {
	t.Helper()
	path := filepath.Join(p.Root, "outside", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if content != "" {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// plant replaces path with a symlink to target.
func plant(t *testing.T, path, target string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// plantSpecial replaces path with a special file of kind: "fifo", "dir",
// or a device path such as /dev/zero, linked to.
func plantSpecial(t *testing.T, path, kind string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o600)
	case "dir":
		err = os.Mkdir(path, 0o700)
	default:
		err = os.Symlink(kind, path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestWritesNeverFollowLinks: a symlink where flowstate keeps a file of
// a workflow or of the project makes every command that would read or
// write it refuse (exit 2, naming the link), and the file the link names
// stays as it was, or absent: a dangling link at a lock path must not
// create its target.
func TestWritesNeverFollowLinks(t *testing.T) {
	sm := []string{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"}
	for _, tt := range []struct {
		file string // under the workflow's directory; "../../lock" is the project's lock
		cmds [][]string
	}{
		{"state", [][]string{{"state-append", "K", "v"}, {"state-load"}, {"state-get", "KEPT"}}},
		{"events.jsonl", [][]string{{"sm-transition", "plan"}, {"sm-fail", "--error", "x"}}},
		{"logs/metrics.jsonl", [][]string{{"log-append", "metrics", `{"ms":1}`}}},
		{"logs", [][]string{{"log-append", "metrics", `{"ms":1}`}}},
		{"checkpoint.json", [][]string{{"checkpoint-set", "phase_data.x.n", "1"}, {"checkpoint-load"}, {"sm-transition", "plan"}, {"state-load"}}},
		{"lock", [][]string{{"state-append", "K", "v"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"sm-transition", "plan"}, {"log-append", "m", "1"}}},
		{"../../lock", [][]string{sm}},
	} {
		for _, dangling := range []bool{false, true} {
			name := tt.file
			if dangling {
				name += "/dangling"
			}
			t.Run(name, func(t *testing.T) {
				p, id := victim(t)
				content := "the user's file\n"
				if dangling {
					content = ""
				}
				target := outside(t, p, "target", content)
				plant(t, filepath.Join(p.wfDir(id), tt.file), target)
				for _, c := range tt.cmds {
					refuse(t, p, args(c...), 2, "symlink")
				}
				if _, err := os.Lstat(target); dangling && !os.IsNotExist(err) {
					t.Errorf("the dangling link's target was created (%v)", err)
				}
			})
		}
	}
}

// TestLinkedSessionPointer: a session pointer that is a link is never
// read through, and sm-init replaces the link itself rather than write
// where it points.
func TestLinkedSessionPointer(t *testing.T) {
	p, _ := victim(t)
	target := outside(t, p, "pointer", "victim\n")
	plant(t, filepath.Join(p.stateDir(), "sessions", "s1"), target)
	session := []string{"CLAUDE_CODE_SESSION_ID=s1", "FLOWSTATE_WORKFLOW="}
	refuse(t, p, call{Args: []string{"state-load"}, Env: session}, 2, "symlink")
	p.okCall(call{Args: []string{"sm-init", "--workflow", "w2", "--description", "d", "--command", "c", "--scope", "research-only"}, Env: session})
	if got := string(p.readFile(target)); got != "victim\n" {
		t.Errorf("the link's target changed to %q", got)
	}
	if got := p.okCall(call{Args: []string{"sm-status"}, Env: session}); !strings.Contains(got, "WORKFLOW_ID=w2") {
		t.Errorf("the session does not point at the new workflow: %q", got)
	}
}

// TestSpecialFilesNeverHang: a FIFO, a device or a directory where
// flowstate keeps a file is refused at once (exit 2) by every command
// that would open it, reader or writer, and `flowstate list` shows the
// workflow as unreadable instead of hanging.
func TestSpecialFilesNeverHang(t *testing.T) {
	for _, tt := range []struct {
		file string
		kind string
		cmds [][]string
	}{
		{"checkpoint.json", "fifo", [][]string{{"state-load"}, {"checkpoint-load"}, {"sm-status"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"status"}}},
		{"checkpoint.json", "/dev/zero", [][]string{{"state-load"}, {"checkpoint-get", "workflow_id"}}},
		{"checkpoint.json", "dir", [][]string{{"sm-status"}}},
		{"state", "fifo", [][]string{{"state-load"}, {"state-get", "KEPT"}, {"state-append", "K", "v"}}},
		{"state", "/dev/zero", [][]string{{"state-load"}, {"state-append", "K", "v"}}},
		{"events.jsonl", "fifo", [][]string{{"sm-transition", "plan"}, {"status"}}},
		{"events.jsonl", "/dev/full", [][]string{{"sm-transition", "plan"}}},
		{"lock", "fifo", [][]string{{"state-append", "K", "v"}}},
		{"machine.json", "fifo", [][]string{{"sm-transition", "plan"}, {"sm-next"}}},
		{"lock", "dir", [][]string{{"state-append", "K", "v"}}},
	} {
		t.Run(tt.file+"/"+tt.kind, func(t *testing.T) {
			p, id := victim(t)
			path := filepath.Join(p.wfDir(id), tt.file)
			plantSpecial(t, path, tt.kind)
			for _, c := range tt.cmds {
				r := p.runWithin(args(c...))
				wantRefusal(t, strings.Join(c, " "), r, 2, path)
			}
			if tt.file == "checkpoint.json" {
				if r := p.runWithin(args("list")); r.Code != 0 || !strings.Contains(r.Stdout, "unreadable") {
					t.Errorf("list: %s", r)
				}
			}
		})
	}
}

// TestSessionPointerFIFO: a session pointer that is a FIFO does not hang
// the workflow lookup of a bash block.
func TestSessionPointerFIFO(t *testing.T) {
	p, _ := victim(t)
	if err := syscall.Mkfifo(filepath.Join(p.stateDir(), "sessions", "s1"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.runWithin(call{Args: []string{"state-load"}, Env: []string{"CLAUDE_CODE_SESSION_ID=s1", "FLOWSTATE_WORKFLOW="}})
	wantRefusal(t, "state-load", r, 2, "FIFO")
}

// TestHugeFilesCostBoundedMemory: sparse files of a gigabyte where the
// state, the checkpoint or the event log live are refused before they
// are read (exit 4, naming the bound), and an event log that is merely
// long still takes appends and is shown from its end.
func TestHugeFilesCostBoundedMemory(t *testing.T) {
	const huge = 1 << 30
	sparse := func(t *testing.T, path string, tail string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(tail), huge); err != nil {
			t.Fatal(err)
		}
	}
	bounded := func(t *testing.T, r result, what string) {
		t.Helper()
		if r.MaxRSSKB > 128<<10 {
			t.Errorf("%s: peak RSS %d MB for a 1 GB file", what, r.MaxRSSKB>>10)
		}
	}
	for _, tt := range []struct {
		file, tail string
		writer     []string
	}{
		{"state", "K=v", []string{"state-append", "K", "v"}},
		{"checkpoint.json", "}", []string{"checkpoint-set", "phase_data.x.n", "1"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			p, id := victim(t)
			sparse(t, filepath.Join(p.wfDir(id), tt.file), tt.tail)
			for _, c := range [][]string{{"state-load"}, tt.writer} {
				r := p.runWithin(args(c...))
				wantRefusal(t, c[0], r, 4, tt.file)
				bounded(t, r, c[0])
			}
		})
	}
	t.Run("events.jsonl", func(t *testing.T) {
		p, id := victim(t)
		sparse(t, filepath.Join(p.wfDir(id), "events.jsonl"), "\n")
		for _, c := range [][]string{{"sm-transition", "plan"}, {"status"}} {
			r := p.runWithin(args(c...))
			if r.Code != 0 {
				t.Fatalf("%s: %s", c[0], r)
			}
			bounded(t, r, c[0])
		}
	})
}

// TestHooksNeverBlock: `hook session-start` with CLAUDE_ENV_FILE naming a
// FIFO, a device, a directory or a link finishes at once, exits 0 like
// every hook, writes only to a regular file, and never through a link;
// a hooks.log that is a link is not written through either.
func TestHooksNeverBlock(t *testing.T) {
	session := func(t *testing.T, p *project, envFile string) result {
		t.Helper()
		r := p.runWithin(call{
			Args:  []string{"hook", "session-start"},
			Env:   []string{"CLAUDE_ENV_FILE=" + envFile},
			Stdin: strings.NewReader(`{"session_id":"s1","cwd":"` + p.Dir + `"}`),
		})
		if r.Code != 0 || r.MaxRSSKB > 128<<10 {
			t.Errorf("hook session-start with CLAUDE_ENV_FILE=%s: %s, peak RSS %d MB", envFile, r, r.MaxRSSKB>>10)
		}
		return r
	}
	for _, kind := range []string{"fifo", "/dev/full", "/dev/zero", "dir", "link", "dangling link"} {
		t.Run(kind, func(t *testing.T) {
			p, _ := victim(t)
			envFile := filepath.Join(p.Root, "home", ".claude", "session-env", "s1", "sessionstart-hook-0.sh")
			if err := os.MkdirAll(filepath.Dir(envFile), 0o700); err != nil {
				t.Fatal(err)
			}
			target := outside(t, p, "bashrc", "# the user's\n")
			var err error
			switch kind {
			case "fifo":
				err = syscall.Mkfifo(envFile, 0o600)
			case "dir":
				err = os.Mkdir(envFile, 0o700)
			case "link":
				err = os.Symlink(target, envFile)
			case "dangling link":
				target = outside(t, p, "missing", "")
				err = os.Symlink(target, envFile)
			default:
				envFile = kind
			}
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, filepath.Join(p.Root, "outside"))
			session(t, p, envFile)
			sameTree(t, "outside the project", before, snapshot(t, filepath.Join(p.Root, "outside")))
			log := string(p.readFile(filepath.Join(p.stateDir(), "hooks.log")))
			if !strings.Contains(log, "CLAUDE_ENV_FILE") {
				t.Errorf("hooks.log does not say what was wrong with CLAUDE_ENV_FILE:\n%s", log)
			}
		})
	}
	t.Run("hooks.log link", func(t *testing.T) {
		p, _ := victim(t)
		target := outside(t, p, "log", "the user's log\n")
		plant(t, filepath.Join(p.stateDir(), "hooks.log"), target)
		session(t, p, "") // CLAUDE_ENV_FILE unset: a problem to log
		if got := string(p.readFile(target)); got != "the user's log\n" {
			t.Errorf("the hook wrote through the hooks.log link: %q", got)
		}
	})
}

// TestNamedFilesNeverHang: a worker record (from a cloned checkpoint,
// say) whose output_path or files_modified names a FIFO or a device does
// not hang aggregate: the worker is reported as failed, or its file not
// counted.
func TestNamedFilesNeverHang(t *testing.T) {
	p := newProject(t)
	fifo := filepath.Join(p.Root, "tmp", "report.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	records := `[{"worker_id":"w1","topic":"a","status":"completed","output_path":"` + fifo + `","duration_ms":5},` +
		`{"worker_id":"w2","track":"b","status":"completed","output_path":"/dev/zero","duration_ms":5,"files_modified":["` + fifo + `","/dev/zero"]}]`
	for _, kind := range []string{"research", "implementation"} {
		r := p.runWithin(call{Args: []string{"aggregate", "--kind", kind, "-"}, Stdin: strings.NewReader(records)})
		if r.Code != 0 && r.Code != 3 {
			t.Errorf("aggregate --kind %s: %s", kind, r)
		}
	}
}

// TestNoCommandHangsOnSpecialFiles: whatever special file sits where
// flowstate keeps one of a workflow's files, every workflow command ends
// at once: it succeeds (it does not need that file) or refuses in one
// line (exit 2 for the file, or 3 or 6 for a reason of its own), and
// nothing outside the project changes. The table
// of TestSpecialFilesNeverHang names the expected refusals; this one
// sweeps every command over every file, so a command that learns to read
// a new file cannot skip the check (state-append reading the checkpoint
// for its status once hung on a FIFO).
func TestNoCommandHangsOnSpecialFiles(t *testing.T) {
	cmds := [][]string{
		{"state-load"}, {"state-get", "KEPT"}, {"state-append", "K", "v"},
		{"sm-status"}, {"sm-status", "--json"}, {"sm-next"}, {"sm-transition", "plan"}, {"sm-fail", "--error", "x"},
		{"sm-retry"}, {"rewind", "research"}, {"checkpoint-load"}, {"checkpoint-get", "workflow_id"},
		{"checkpoint-set", "phase_data.x.n", "1"}, {"log-append", "metrics", `{"ms":1}`}, {"status"}, {"history"},
		{"list"}, {"phase-plan"}, {"phase-verify"}, {"resume"}, {"supervisor-status", "s"},
		{"pause", "--reason", "r"}, {"unpause"}, {"approve"}, {"reject", "--reason", "r"}, {"cancel", "--reason", "r"},
	}
	for _, file := range []string{"checkpoint.json", "state", "events.jsonl", "lock", "machine.json", "logs/metrics.jsonl"} {
		for _, kind := range []string{"fifo", "/dev/zero", "dir"} {
			t.Run(file+"/"+kind, func(t *testing.T) {
				t.Parallel()
				p, id := victim(t)
				path := filepath.Join(p.wfDir(id), file)
				plantSpecial(t, path, kind)
				outsideBefore := snapshot(t, p.Root, "project")
				for _, c := range cmds {
					what := strings.Join(c, " ")
					r := p.runWithin(args(c...))
					switch r.Code {
					case 0:
					case 2, 3, 6: // the file, or a reason of its own
						wantRefusal(t, what, r, r.Code)
					default:
						t.Errorf("%s: %s", what, r)
					}
				}
				sameTree(t, "outside the project", outsideBefore, snapshot(t, p.Root, "project"))
			})
		}
	}
}
