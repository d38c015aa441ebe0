package robust

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// docs/architecture.md, "What a non-zero exit means": nothing stored
// changed, or exactly what the message says changed. These tests hold
// every command that writes to it under every fault the suite can
// inject (a full disk at each point, an I/O error on each file it
// writes, read-only files), on a fresh copy of one project each time.

// writeCase is one command that writes, as a bash block runs it.
type writeCase struct {
	name  string
	args  []string
	stdin string
}

// ruleLab is a project holding a workflow of every kind the write
// commands act on, and a copy of it to start each run from.
type ruleLab struct {
	t        *testing.T
	p        *project
	template string
	cases    []writeCase
}

// newRuleLab builds the project in p.Dir (which may be a mount).
func newRuleLab(t *testing.T, p *project) *ruleLab {
	p.setenv("CLAUDE_CODE_SESSION_ID=s1")
	create := func(id string, extra ...string) {
		p.ok(append([]string{"sm-init", "--workflow", id, "--description", "d", "--command", "coordinate", "--scope", "full-implementation"}, extra...)...)
	}
	create("w")
	p.ok("--workflow", "w", "sm-transition", "research")
	p.ok("--workflow", "w", "state-append", "K", "v")
	p.ok("--workflow", "w", "log-append", "m", `{"a":1}`)
	create("g", "--gate", "implement=Approve the plan")
	p.ok("--workflow", "g", "sm-transition", "research")
	p.ok("--workflow", "g", "sm-transition", "plan")
	if r := p.run(args("--workflow", "g", "sm-transition", "implement")); r.Code != 6 {
		t.Fatalf("gated transition: %s", r)
	}
	create("pz")
	p.ok("--workflow", "pz", "pause", "--reason", "r")
	create("f")
	p.ok("--workflow", "f", "sm-fail", "--error", "boom")
	// The session's workflow, started as a command starts it, with its
	// worker's report written.
	out := p.okCall(call{Args: []string{"phase-start", "--command", "orchestrate", "--require-scope"}, Stdin: strings.NewReader("--scope research-only Study auth")})
	report := filepath.Join(p.Dir, value(out, "SPEC_DIR"), value(out, "OUTPUT_1")) // relative to the project, where blocks run
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(report, []byte("# Study auth\n\n## Summary\nAuth uses tokens.\n\n## Findings\n- one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := p.ok("--workflow", "w", "checkpoint-load")
	l := &ruleLab{t: t, p: p, template: filepath.Join(p.Root, "template")}
	if out, err := exec.Command("cp", "-a", p.Dir, l.template).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	w := func(a ...string) []string { return append([]string{"--workflow", "w"}, a...) }
	l.cases = []writeCase{
		{"sm-init", []string{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"}, ""},
		{"sm-transition", w("sm-transition", "plan", "--reason", "r"), ""},
		{"sm-transition --checkpoint", w("sm-transition", "plan", "--checkpoint", `{"phase_data":{"research":{"n":1}}}`), ""},
		{"sm-fail", w("sm-fail", "--error", "boom"), ""},
		{"sm-retry", []string{"--workflow", "f", "sm-retry"}, ""},
		{"sm-finish", w("sm-finish", "--status", "abandoned"), ""},
		{"state-append", w("state-append", "K", "v2"), ""},
		{"state-append --stdin", w("state-append", "--stdin"), "K=v2\nJ=x\n"},
		{"log-append", w("log-append", "m", `{"b":2}`), ""},
		{"checkpoint-set", w("checkpoint-set", "phase_data.research.n", "1"), ""},
		{"checkpoint-set --increment", w("checkpoint-set", "phase_data.research.count", "--increment"), ""},
		{"checkpoint-set --append", w("checkpoint-set", "phase_data.research.list", `"x"`, "--append"), ""},
		{"checkpoint-save", w("checkpoint-save", "-"), doc},
		{"checkpoint-replan", w("checkpoint-replan", "1", "too big"), ""},
		{"supervisor-record", w("supervisor-record", "--supervisor", "research", "-"), `{"worker_id":"r1","topic":"t","status":"completed","output_path":"x.md"}`},
		{"pause", w("pause", "--reason", "r"), ""},
		{"unpause", []string{"--workflow", "pz", "unpause"}, ""},
		{"cancel", w("cancel", "--reason", "r"), ""},
		{"rewind", w("rewind", "research", "--reason", "r"), ""},
		{"approve", []string{"--workflow", "g", "approve"}, ""},
		{"reject", []string{"--workflow", "g", "reject", "--reason", "r"}, ""},
		{"phase-start", []string{"phase-start", "--command", "orchestrate", "--require-scope"}, "--scope research-only Another study"},
		{"phase-plan", []string{"phase-plan"}, ""},
		{"phase-verify", []string{"phase-verify"}, ""},
		{"resume", []string{"resume"}, ""},
	}
	return l
}

// value is the value of KEY= in a command's output.
func value(out, key string) string {
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			return v
		}
	}
	return ""
}

// restore puts the project back as the template has it.
func (l *ruleLab) restore() {
	l.t.Helper()
	entries, err := os.ReadDir(l.p.Dir)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(l.p.Dir, e.Name())); err != nil {
			l.t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-a", l.template+"/.", l.p.Dir).CombinedOutput(); err != nil {
		l.t.Fatalf("cp: %v %s", err, out)
	}
}

// filler is a file the ENOSPC test fills the disk with; not the project's.
const filler = "filler"

func (l *ruleLab) snapshot() map[string]string { return snapshot(l.t, l.p.Dir, filler) }

func (c writeCase) call() call {
	return call{Args: c.args, Stdin: strings.NewReader(c.stdin)}
}

// check runs c from a fresh copy, after prepare (which sets the fault),
// and holds the rule: a non-zero exit leaves the project as it was.
// With exit 0 the files ok names are the ones allowed to change.
func (l *ruleLab) check(c writeCase, fault string, prepare func(), ok func(before, after map[string]string) []string) result {
	l.t.Helper()
	l.restore()
	prepare()
	before := l.snapshot()
	r := l.p.run(c.call())
	after := l.snapshot()
	if r.Code != 0 {
		if diff := unexplained(r.Stderr, diffPaths(before, after)); len(diff) > 0 {
			l.t.Errorf("%s with %s: exit %d, yet it changed %s, which its message does not say\n%s", c.name, fault, r.Code, strings.Join(diff, ", "), r.Stderr)
		}
		return r
	}
	if bad := ok(before, after); len(bad) > 0 {
		l.t.Errorf("%s with %s: exit 0, and it changed %s", c.name, fault, strings.Join(bad, ", "))
	}
	return r
}

// unexplained lists the changed paths that a failed command's message
// does not account for. It may change the session's run record, which
// notes for the hooks that the command's step failed; any other change
// must be one of the writes the message says it recorded and keeps: of
// the workflow it names, or the session pointer it names.
func unexplained(stderr string, changed []string) []string {
	const kept = "before that, this command recorded (and keeps): "
	_, recorded, _ := strings.Cut(stderr, kept)
	var out []string
	for _, path := range changed {
		parts := strings.Split(path, string(filepath.Separator))
		switch {
		case len(parts) > 3 && parts[2] == "runs":
		case len(parts) > 3 && parts[2] == "workflows" && strings.Contains(recorded, "workflow "+parts[3]):
		case len(parts) > 3 && parts[2] == "sessions" && strings.Contains(recorded, "session "+parts[3]+" "):
		default:
			out = append(out, path)
		}
	}
	return out
}

// diffPaths lists the paths that differ between two snapshots.
func diffPaths(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func anyChange(_, _ map[string]string) []string { return nil }

// loadable is a check of a command that exited 0: every workflow of the
// project is whole and loadable, its checkpoint-load and history --json
// succeeding with JSON (on the disk as the command left it, still full).
func (l *ruleLab) loadable(what string) func(before, after map[string]string) []string {
	return func(_, _ map[string]string) []string {
		entries, err := os.ReadDir(filepath.Join(l.p.stateDir(), "workflows"))
		if err != nil {
			return []string{"workflows: " + err.Error()}
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			for _, c := range [][]string{{"checkpoint-load"}, {"history", "--json"}} {
				r := l.p.run(args(append([]string{"--workflow", e.Name()}, c...)...))
				if r.Code != 0 || !json.Valid([]byte(r.Stdout)) {
					l.t.Errorf("%s: exit 0, yet %s of workflow %s: %s", what, strings.Join(c, " "), e.Name(), r)
				}
			}
		}
		return nil
	}
}

// TestEveryWriteSucceedsUnfaulted: the cases of the rule tests are all
// commands that succeed and write: a fault test on a command that fails
// anyway, or writes nothing, would prove nothing.
func TestEveryWriteSucceedsUnfaulted(t *testing.T) {
	l := newRuleLab(t, newProject(t))
	for _, c := range l.cases {
		l.restore()
		before := l.snapshot()
		if r := l.p.run(c.call()); r.Code != 0 {
			t.Errorf("%s: %s", c.name, r)
		}
		if len(diffPaths(before, l.snapshot())) == 0 {
			t.Errorf("%s wrote nothing", c.name)
		}
	}
}

// TestReadOnlyFilesRefused: with every file of the project's state and
// specs made read-only (0400), every write command refuses the same way
// (exit 1, naming a file and chmod u+w) and changes nothing, for root
// too; none replaces a read-only file. Before, checkpoint-set and
// state-append --stdin replaced them (0600 again) and appends failed
// only when not root.
func TestReadOnlyFilesRefused(t *testing.T) {
	l := newRuleLab(t, newProject(t))
	var frozen []string
	freeze := func() {
		frozen = frozen[:0]
		for _, dir := range []string{l.p.stateDir(), filepath.Join(l.p.Dir, ".flowstate")} {
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && d.Name() != "lock" {
					frozen = append(frozen, path)
					return os.Chmod(path, 0o400)
				}
				return err
			})
		}
	}
	unchanged := func(before, after map[string]string) []string {
		var bad []string
		for _, f := range frozen {
			rel, _ := filepath.Rel(l.p.Dir, f)
			if before[rel] != after[rel] {
				bad = append(bad, rel+" (read-only)")
			}
		}
		return bad
	}
	for _, c := range l.cases {
		r := l.check(c, "read-only files", freeze, unchanged)
		if r.Code != 0 && (r.Code != 1 || !strings.Contains(r.Stderr, "is read-only (mode 0400)") || !strings.Contains(r.Stderr, "chmod u+w")) {
			t.Errorf("%s with read-only files: %s; want exit 1 naming the read-only file", c.name, r)
		}
	}
}

// TestIOErrorAnywhere: an I/O error (EIO) on any write, fsync or rename
// of any file a command writes leaves the project as it was when the
// command exits non-zero.
func TestIOErrorAnywhere(t *testing.T) {
	straceOrSkip(t)
	l := newRuleLab(t, newProject(t))
	cases := l.cases
	if testing.Short() {
		cases = cases[:8]
	}
	for _, c := range cases {
		l.restore()
		before := l.snapshot()
		l.p.run(c.call())
		failed := 0 // runs the injected EIO made exit non-zero
		for _, rel := range diffPaths(before, l.snapshot()) {
			path := filepath.Join(l.p.Dir, rel)
			if r := l.check(c, "EIO on "+rel, func() { l.p.inject("write,pwrite64,fsync,fdatasync,"+renames, "EIO", path) }, anyChange); r.Code != 0 {
				failed++
			}
			l.p.inject("", "")
		}
		// An injection that never made the command fail proves nothing
		// (strace not injecting, or the wrong files).
		if failed == 0 {
			t.Errorf("%s never failed with EIO injected on the files it writes", c.name)
		}
	}
}

// TestDiskFullAnywhere: the disk full at every point of every write
// command (a small tmpfs filled up to k free pages, for k from 0 until
// the command succeeds) leaves the project as it was whenever the
// command exits non-zero, and a whole, loadable workflow when it exits
// 0. Needs root (or CAP_SYS_ADMIN) to mount the tmpfs; skips without,
// fails with FLOWSTATE_REQUIRE_ROOT_FAULTS set.
func TestDiskFullAnywhere(t *testing.T) {
	p := newProject(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "flowstate-test", p.Dir).CombinedOutput(); err != nil {
		skipUnless(t, "FLOWSTATE_REQUIRE_ROOT_FAULTS", "cannot mount a tmpfs here (%v: %s): the full-disk test needs root", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", p.Dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", p.Dir, err, out)
		}
	})
	l := newRuleLab(t, p)
	page := os.Getpagesize()
	for _, c := range l.cases {
		succeeded := 0
		for free := 0; succeeded < 2 && free < 64; free++ {
			fill := func() { fillUp(t, filepath.Join(p.Dir, filler), free, page) }
			fault := fmt.Sprintf("%d pages free", free)
			if r := l.check(c, fault, fill, l.loadable(c.name+" with "+fault)); r.Code == 0 {
				succeeded++
			}
		}
		if succeeded < 2 {
			t.Errorf("%s never succeeded with up to 64 pages free", c.name)
		}
	}
}

// fillUp fills the file system holding path with a file there, leaving
// free pages of page bytes.
func fillUp(t *testing.T, path string, free, page int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, page)
	size := int64(0)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errorsIsNoSpace(err) {
				t.Fatal(err)
			}
			break
		}
		size += int64(page)
	}
	if err := f.Truncate(max(size-int64(free*page), 0)); err != nil {
		t.Fatal(err)
	}
}

func errorsIsNoSpace(err error) bool {
	var errno syscall.Errno
	for e := err; e != nil; {
		if pe, ok := e.(*fs.PathError); ok {
			e = pe.Err
			continue
		}
		errno, _ = e.(syscall.Errno)
		break
	}
	return errno == syscall.ENOSPC
}
