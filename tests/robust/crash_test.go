package robust

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/statefile"
)

// crashOp is one kind of write the crash test interrupts. Each iteration
// i has a new value the write tries to store; after a kill the watched
// value must be the old one or the new one, nothing else.
type crashOp struct {
	name string
	// write returns the invocation that stores iteration i's value.
	write func(p *project, id string, i int) call
	// watched reads the values the write changes, straight from disk.
	watched func(p *project, id string) []string
	// want is what watched returns once iteration i's write completed.
	want func(i int) []string
}

// bigValue makes state appends large enough (several pages) that a kill
// can land in the middle of the write itself, not only around it.
var bigValue = strings.Repeat("x", 48<<10)

var crashOps = []crashOp{
	{
		name: "checkpoint-set",
		write: func(p *project, id string, i int) call {
			return args("checkpoint-set", "phase_data.crash.set", strconv.Itoa(i))
		},
		watched: func(p *project, id string) []string { return cpValues(p, id, "phase_data.crash.set") },
		want:    func(i int) []string { return []string{strconv.Itoa(i)} },
	},
	{
		name: "checkpoint-save",
		write: func(p *project, id string, i int) call {
			doc := p.readFile(filepath.Join(p.wfDir(id), "checkpoint.json"))
			doc, err := sjson.SetBytes(doc, "phase_data.crash.save", i)
			if err != nil {
				p.t.Fatal(err)
			}
			return call{Args: []string{"checkpoint-save"}, Stdin: bytes.NewReader(doc)}
		},
		watched: func(p *project, id string) []string { return cpValues(p, id, "phase_data.crash.save") },
		want:    func(i int) []string { return []string{strconv.Itoa(i)} },
	},
	{
		// Two keys in one append: each must be old or new. The big one
		// comes last so that a torn write tears it, not the marker.
		name: "state-append",
		write: func(p *project, id string, i int) call {
			in := "CRASH_MARK=" + strconv.Itoa(i) + "\nCRASH_BIG=" + strconv.Itoa(i) + bigValue + "\n"
			return call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader(in)}
		},
		watched: func(p *project, id string) []string {
			v := statefile.Parse(p.readFile(filepath.Join(p.wfDir(id), "state"))).Values
			return []string{v["CRASH_MARK"], v["CRASH_BIG"]}
		},
		want: func(i int) []string { return []string{strconv.Itoa(i), strconv.Itoa(i) + bigValue} },
	},
	{
		// test and debug may follow each other forever: every iteration
		// is a real transition.
		name: "sm-transition",
		write: func(p *project, id string, i int) call {
			return args("sm-transition", transitionTarget(i), "--reason", "crash "+strconv.Itoa(i))
		},
		watched: func(p *project, id string) []string { return cpValues(p, id, "state_machine.current_state") },
		want:    func(i int) []string { return []string{transitionTarget(i)} },
	},
}

func transitionTarget(i int) string {
	if i%2 == 0 {
		return "debug"
	}
	return "test"
}

func cpValues(p *project, id, path string) []string {
	doc := p.readFile(filepath.Join(p.wfDir(id), "checkpoint.json"))
	return []string{gjson.GetBytes(doc, path).String()}
}

// TestCrashAnywhere SIGKILLs each kind of write at a random moment, many
// times, and checks after every kill that nothing is lost or corrupt,
// that each value is old or new, and that the next write gets the lock.
func TestCrashAnywhere(t *testing.T) {
	kills := 100 // per op: 400 kills in all
	if testing.Short() {
		kills = 15
	}
	for _, op := range crashOps {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			id := p.newWorkflow("crash")
			p.ok("sm-transition", "implement")
			p.ok("sm-transition", "test")
			p.ok("log-append", "crash", `{"start":true}`)
			window := killWindow(p, op, id)
			var landed, torn int
			for i := 1; i <= kills; i++ {
				old := op.watched(p, id)
				killAfter(p, op.write(p, id, i), time.Duration(rand.Int64N(int64(window))))
				p.checkIntact(id)
				got := op.watched(p, id)
				want := op.want(i)
				for k := range got {
					if got[k] != old[k] && got[k] != want[k] {
						t.Fatalf("kill %d: value %d is neither old nor new: %.40q", i, k, got[k])
					}
				}
				if got[0] == want[0] {
					landed++
				}
				if got[0] == want[0] && got[len(got)-1] != want[len(want)-1] {
					torn++ // a batch cut by the kill: each value still old or new
				}
				// The next write must not meet a stale lock.
				again := op.write(p, id, i)
				again.Env = []string{"FLOWSTATE_LOCK_WAIT=2s"}
				r := p.run(again)
				if r.Code != 0 {
					t.Fatalf("kill %d: the write after the kill failed: %s", i, r)
				}
				if got := op.watched(p, id); !equal(got, want) {
					t.Fatalf("kill %d: after the retry got %.40q, want %.40q", i, got, want)
				}
			}
			t.Logf("%d kills within %v of the start: %d after the value landed, %d in between, %d batches cut; %d temp files left behind",
				kills, window.Round(time.Microsecond), landed, kills-landed, torn, len(strayFiles(t, p.wfDir(id))))
		})
	}
}

// killWindow is how long after its start a write may be killed: at least
// 0-3 ms, stretched to a bit more than the write's own duration on this
// machine, so kills land before, during and after the write alike. The
// calibration runs use iteration 0, which the loop never reuses.
func killWindow(p *project, op crashOp, id string) time.Duration {
	p.t.Helper()
	var runs []time.Duration
	for range 5 {
		r := p.run(op.write(p, id, 0))
		if r.Code != 0 {
			p.t.Fatalf("%s: %s", op.name, r)
		}
		runs = append(runs, r.Elapsed)
	}
	slices.Sort(runs)
	return max(3*time.Millisecond, runs[len(runs)/2]*5/4)
}

// killAfter starts c and SIGKILLs it after delay (if still running).
func killAfter(p *project, c call, delay time.Duration) {
	p.t.Helper()
	cmd, _, _ := p.command(c)
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// strayFiles lists what a killed writer left in a workflow directory
// besides the files flowstate owns (temp files of an unfinished rename).
func strayFiles(t testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"lock": true, "state": true, "checkpoint.json": true, "events.jsonl": true, "machine.json": true, "logs": true}
	var stray []string
	for _, e := range entries {
		if !known[e.Name()] {
			stray = append(stray, e.Name())
		}
	}
	return stray
}

// TestTornLinesAreSkipped injects what a killed writer can leave (a
// torn last line) and damaged lines into the append-only files: readers
// warn and go on, and the next append cuts the torn tail instead of
// gluing onto it.
func TestTornLinesAreSkipped(t *testing.T) {
	p := newProject(t)
	id := p.newWorkflow("torn")
	p.ok("state-append", "KEEP", "kept")
	p.ok("log-append", "metrics", `{"n":1}`)
	dir := p.wfDir(id)
	appendRaw(t, filepath.Join(dir, "state"), "not a record\nBAD=esc\\qape\nTORN=partial")
	appendRaw(t, filepath.Join(dir, "events.jsonl"), `{"event":"transi`)
	appendRaw(t, filepath.Join(dir, "logs", "metrics.jsonl"), `{"n":`)

	r := p.run(args("state-load"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "\nKEEP=kept\n") || strings.Contains(r.Stdout, "TORN") || strings.Contains(r.Stdout, "BAD") {
		t.Fatalf("state-load over damaged lines: %s", r)
	}
	for _, w := range []string{"torn last line", "not a KEY=value record", "bad escape"} {
		if !strings.Contains(r.Stderr, "flowstate: warning: ") || !strings.Contains(r.Stderr, w) {
			t.Errorf("state-load: no warning %q in %q", w, r.Stderr)
		}
	}
	if got := p.ok("state-get", "TORN", "--default", "unset"); got != "unset" {
		t.Errorf("a torn line was read as a value: %q", got)
	}

	p.ok("state-append", "NEXT", "1")
	p.ok("sm-transition", "research")
	p.ok("log-append", "metrics", `{"n":2}`)
	if got := p.ok("state-get", "NEXT"); got != "1" {
		t.Errorf("append after a torn tail: NEXT=%q", got)
	}
	if state := string(p.readFile(filepath.Join(dir, "state"))); strings.Contains(state, "partial") {
		t.Errorf("the torn tail survived the next append:\n%s", state)
	}
	events := checkJSONL(t, "events", p.readFile(filepath.Join(dir, "events.jsonl")))
	if last := gjson.GetBytes(events[len(events)-1], "event").String(); last != "transition" {
		t.Errorf("last event %q, want the transition", last)
	}
	if logs := checkJSONL(t, "log", p.readFile(filepath.Join(dir, "logs", "metrics.jsonl"))); len(logs) != 2 {
		t.Errorf("log has %d lines, want 2", len(logs))
	}
}

func appendRaw(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
