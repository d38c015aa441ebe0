package robust

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

const stressWriters = 32

// stress is one run of many processes writing one workflow. Every write
// is recorded with its outcome, so the end state can be checked exactly:
// what reported success is there once, what failed is not there at all.
type stress struct {
	p  *project
	id string

	mu      sync.Mutex
	done    map[string]map[string]bool // op -> item -> reported success
	counts  map[string]int             // op -> successes
	incs    []int64                    // values printed by --increment
	lastSet map[int]int                // writer -> its last successful set
	bad     []string                   // unexpected exit codes and other failures
}

func (s *stress) record(op, item string, r result, okCodes ...int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done[op] == nil {
		s.done[op] = map[string]bool{}
	}
	ok := r.Code == 0
	if !ok && !slices.Contains(okCodes, r.Code) {
		s.bad = append(s.bad, op+": "+r.String())
	}
	if item != "" {
		s.done[op][item] = ok
	}
	if ok {
		s.counts[op]++
	}
	return ok
}

// stressOp is one kind of write. save marks the checkpoint-save modes:
// a plain save replaces the whole document and so, by design, undoes
// concurrent edits made between its load and its save; a save with
// --if-unchanged is refused (exit 3) instead.
type stressOp struct {
	name string
	save saveMode
	do   func(s *stress, w, n int)
}

// saveMode says which kind of checkpoint-save a stress pass mixes in.
type saveMode int

const (
	noSave    saveMode = iota
	plainSave          // may undo concurrent checkpoint edits
	casSave            // --if-unchanged: never undoes anything
)

func (m saveMode) String() string {
	return [...]string{"none", "plain", "if-unchanged"}[m]
}

// A value that means something to a shell, to check it is stored as data.
const stressValue = "line1\nline2 $(touch pwned) `id` 'q' \"dq\" \\ ${HOME}"

var stressOps = []stressOp{
	{name: "state-append", do: func(s *stress, w, n int) {
		key := fmt.Sprintf("S_%d_%d", w, n)
		s.record("state", key, s.p.run(args("state-append", key, stressValue+key)))
	}},
	{name: "state-append --stdin", do: func(s *stress, w, n int) {
		a, b := fmt.Sprintf("B_%d_%d_a", w, n), fmt.Sprintf("B_%d_%d_b", w, n)
		in := a + "=" + a + "\n" + b + "=" + b + "\n"
		r := s.p.run(call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader(in)})
		s.record("state", a, r)
		s.record("state", b, r)
	}},
	{name: "checkpoint-set --increment", do: func(s *stress, w, n int) {
		r := s.p.run(args("checkpoint-set", "--increment", "phase_data.stress.counter"))
		if s.record("increment", "", r) {
			v, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
			s.mu.Lock()
			defer s.mu.Unlock()
			if err != nil {
				s.bad = append(s.bad, "increment printed "+r.Stdout)
			}
			s.incs = append(s.incs, v)
		}
	}},
	{name: "checkpoint-set --append", do: func(s *stress, w, n int) {
		item := fmt.Sprintf("%d-%d", w, n)
		s.record("append", item, s.p.run(args("checkpoint-set", "--append", "phase_data.stress.items", strconv.Quote(item))))
	}},
	{name: "checkpoint-set", do: func(s *stress, w, n int) {
		if s.record("set", "", s.p.run(args("checkpoint-set", fmt.Sprintf("phase_data.stress.last.w%d", w), strconv.Itoa(n)))) {
			s.mu.Lock()
			s.lastSet[w] = n
			s.mu.Unlock()
		}
	}},
	{name: "log-append", do: func(s *stress, w, n int) {
		item := fmt.Sprintf(`{"w":%d,"n":%d}`, w, n)
		s.record("log", item, s.p.run(args("log-append", "stress", item)))
	}},
	{name: "sm-transition", do: func(s *stress, w, n int) {
		s.record("transition", "", s.p.run(args("sm-transition", []string{"test", "debug"}[rand.IntN(2)])))
	}},
	{name: "sm-fail", do: func(s *stress, w, n int) {
		msg := fmt.Sprintf("e-%d-%d", w, n)
		s.record("fail", msg, s.p.run(args("sm-fail", "--error", msg)))
	}},
	{name: "sm-retry", do: func(s *stress, w, n int) {
		s.record("retry", "", s.p.run(args("sm-retry")), 3) // 3: retries used up
	}},
	{name: "sm-init", do: func(s *stress, w, n int) {
		id := fmt.Sprintf("init-%d-%d", w, n)
		s.record("init", id, s.p.run(args("sm-init", "--workflow", id, "--description", "d", "--command", "c", "--scope", "research-only")))
	}},
	{name: "checkpoint-save", save: plainSave, do: func(s *stress, w, n int) { s.save(w, n) }},
	{name: "checkpoint-save --if-unchanged", save: casSave, do: func(s *stress, w, n int) { s.save(w, n, "--if-unchanged") }},
}

// save loads the checkpoint, changes one field and saves it whole. It runs
// in a worker goroutine, so a failure is recorded in s.bad, never fatal.
func (s *stress) save(w, n int, flags ...string) {
	fail := func(what string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.bad = append(s.bad, what)
	}
	r := s.p.run(args("checkpoint-load"))
	if r.Code != 0 {
		fail("checkpoint-load before a save: " + r.String())
		return
	}
	out, err := sjson.Set(r.Stdout, "phase_data.stress.saved", fmt.Sprintf("%d-%d", w, n))
	if err != nil {
		fail("save: cannot edit the loaded checkpoint: " + err.Error())
		return
	}
	a := append([]string{"checkpoint-save"}, flags...)
	s.record("save", "", s.p.run(call{Args: a, Stdin: strings.NewReader(out)}), 3) // 3: written meanwhile
}

// reads counts what the concurrent readers saw.
type reads struct {
	mu       sync.Mutex
	n        int
	warnings int
	failures []string
}

func (rd *reads) fail(format string, a ...any) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.failures = append(rd.failures, fmt.Sprintf(format, a...))
}

// assignments is what state-load prints, whole: KEY=WORD lines, each WORD
// bare, in double quotes (nothing inside them special) or in single
// quotes with \' between runs, which may hold newlines (statefile.Quote).
var assignments = regexp.MustCompile("^(?:[A-Za-z_][A-Za-z0-9_]*=(?:[A-Za-z0-9_@,./+%-]+|\"[^\"$`\\\\!]*\"|(?:'[^']*'|\\\\')+)\n)*$")

// read runs one of the readers and checks that what it printed is whole.
// lastCounter is this reader's previous view of the counter, which may
// only grow while nothing replaces the whole document.
func (rd *reads) read(p *project, which int, lastCounter *int64, monotonic bool) {
	var r result
	switch which {
	case 0:
		r = p.run(args("checkpoint-load"))
		if r.Code == 0 {
			if err := checkpoint.Validate([]byte(r.Stdout)); err != nil {
				rd.fail("checkpoint-load printed an invalid document: %v", err)
			}
		}
	case 1:
		r = p.run(args("state-load"))
		if !assignments.MatchString(r.Stdout) {
			rd.fail("state-load printed %q", r.Stdout)
		}
	case 2:
		r = p.run(args("checkpoint-get", "phase_data.stress.counter", "--default", "0"))
		v, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
		switch {
		case r.Code == 0 && err != nil:
			rd.fail("checkpoint-get printed %q", r.Stdout)
		case r.Code == 0 && monotonic && v < *lastCounter:
			rd.fail("counter went back from %d to %d", *lastCounter, v)
		}
		*lastCounter = v
	}
	if r.Code != 0 {
		rd.fail("reader %d: %s", which, r)
	}
	rd.mu.Lock()
	rd.n++
	rd.warnings += strings.Count(r.Stderr, "warning")
	rd.mu.Unlock()
}

// TestConcurrentWriters runs 32 processes at a time, each looping over
// random writing subcommands on one workflow while readers load it, then
// checks the books. It runs three times: without checkpoint-save, and
// with saves guarded by --if-unchanged, every counter in the checkpoint
// must be exact; with plain saves (a whole-document replace loses
// concurrent checkpoint edits by design) everything outside the
// checkpoint must still be exact and the checkpoint valid.
func TestConcurrentWriters(t *testing.T) {
	d := 4 * time.Second
	if testing.Short() {
		d = time.Second
	}
	for _, mode := range []saveMode{noSave, casSave, plainSave} {
		t.Run("checkpoint-save="+mode.String(), func(t *testing.T) {
			runStress(t, d, mode)
		})
	}
}

func runStress(t *testing.T, d time.Duration, mode saveMode) {
	withSave := mode == plainSave // only plain saves may undo edits
	p := newProject(t)
	p.setenv("FLOWSTATE_LOCK_WAIT=60s") // contention, not a deadline, is under test
	s := &stress{p: p, id: p.newWorkflow("stress"), done: map[string]map[string]bool{}, counts: map[string]int{}, lastSet: map[int]int{}}
	p.ok("sm-transition", "implement")
	p.ok("sm-transition", "test")
	var ops []stressOp
	for _, op := range stressOps {
		if op.save == noSave || op.save == mode {
			ops = append(ops, op)
		}
	}

	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	rd := &reads{}
	for w := range stressWriters {
		wg.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				ops[rand.IntN(len(ops))].do(s, w, n)
			}
		})
	}
	for which := range 3 {
		wg.Go(func() {
			var last int64
			for time.Now().Before(deadline) {
				rd.read(p, which, &last, !withSave)
			}
		})
	}
	wg.Wait()

	if len(s.bad) > 0 {
		t.Errorf("%d writes failed unexpectedly, e.g. %s", len(s.bad), s.bad[0])
	}
	if len(rd.failures) > 0 {
		t.Errorf("%d reads saw a broken file, e.g. %s", len(rd.failures), rd.failures[0])
	}
	p.checkIntact(s.id)
	s.checkState(t)
	s.checkLogs(t)
	s.checkEvents(t, withSave)
	s.checkInits(t)
	if !withSave {
		s.checkCheckpoint(t)
	}
	t.Logf("%d writes (%v), %d reads (%d warnings)", total(s.counts), s.counts, rd.n, rd.warnings)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// checkState: each appended key that reported success is in the state
// file exactly once (the file may not be compacted yet, so count lines)
// with its exact value; each failed one is absent.
func (s *stress) checkState(t *testing.T) {
	raw := s.p.readFile(filepath.Join(s.p.wfDir(s.id), "state"))
	lines := map[string]int{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if k, _, ok := bytes.Cut(line, []byte("=")); ok {
			lines[string(k)]++
		}
	}
	values := statefile.Parse(raw).Values
	for key, ok := range s.done["state"] {
		want := key
		if strings.HasPrefix(key, "S_") {
			want = stressValue + key
		}
		switch {
		case ok && (lines[key] != 1 || values[key] != want):
			t.Errorf("state %s: %d lines, value %q; want once with %q", key, lines[key], values[key], want)
		case !ok && lines[key] != 0:
			t.Errorf("state %s: stored although the append failed", key)
		}
	}
	// And through the binary, including shell quoting: eval must give back
	// the exact value.
	for key, ok := range s.done["state"] {
		if ok && strings.HasPrefix(key, "S_") {
			if got := s.p.ok("state-get", key); got != stressValue+key {
				t.Errorf("state-get %s = %q", key, got)
			}
			break
		}
	}
}

// checkOnce asserts that each item that reported success occurs exactly
// once in got and each failed one not at all, and that got holds nothing
// else.
func checkOnce(t *testing.T, what string, done map[string]bool, got []string) {
	t.Helper()
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	for item, ok := range done {
		if want := map[bool]int{true: 1, false: 0}[ok]; seen[item] != want {
			t.Errorf("%s %s: seen %d times, want %d", what, item, seen[item], want)
		}
		delete(seen, item)
	}
	for item := range seen {
		t.Errorf("%s %s: present but never written", what, item)
	}
}

func (s *stress) checkLogs(t *testing.T) {
	path := filepath.Join(s.p.wfDir(s.id), "logs", "stress.jsonl")
	var got []string
	if len(s.done["log"]) > 0 {
		for _, l := range checkJSONL(t, path, s.p.readFile(path)) {
			got = append(got, string(l))
		}
	}
	checkOnce(t, "log line", s.done["log"], got)
}

// checkEvents: one event per successful fail, retry and save; and,
// while nothing replaces the document, the transitions form one chain
// that ends in the current state.
func (s *stress) checkEvents(t *testing.T, withSave bool) {
	path := filepath.Join(s.p.wfDir(s.id), "events.jsonl")
	var errs []string
	kinds := map[string]int{}
	cur := "test"
	for _, line := range checkJSONL(t, path, s.p.readFile(path)) {
		ev := gjson.ParseBytes(line)
		kinds[ev.Get("event").String()]++
		switch ev.Get("event").String() {
		case "error":
			errs = append(errs, ev.Get("error").String())
		case "transition":
			if from := ev.Get("from").String(); !withSave && from != cur && kinds["transition"] > 2 {
				t.Errorf("transition from %s, but the workflow was in %s", from, cur)
			}
			cur = ev.Get("to").String()
		}
	}
	checkOnce(t, "error event", s.done["fail"], errs)
	for op, kind := range map[string]string{"retry": "retry", "save": "checkpoint-save"} {
		if kinds[kind] != s.counts[op] {
			t.Errorf("%d %s events for %d successful writes", kinds[kind], kind, s.counts[op])
		}
	}
	doc := s.p.readFile(filepath.Join(s.p.wfDir(s.id), "checkpoint.json"))
	if now := gjson.GetBytes(doc, "state_machine.current_state").String(); !withSave && now != cur {
		t.Errorf("the last transition event went to %s, the checkpoint is in %s", cur, now)
	}
}

func (s *stress) checkInits(t *testing.T) {
	for id, ok := range s.done["init"] {
		r := s.p.run(call{Args: []string{"checkpoint-get", "workflow_id"}, Env: []string{"FLOWSTATE_WORKFLOW=" + id}})
		switch {
		case ok && (r.Code != 0 || r.Stdout != id+"\n"):
			t.Errorf("workflow %s reported created: %s", id, r)
		case !ok && r.Code == 0:
			t.Errorf("workflow %s exists although sm-init failed", id)
		}
	}
}

// checkCheckpoint: the counter equals the number of increments, each
// increment printed a different value (no two saw the same count), and
// every appended item and per-writer value is there exactly.
func (s *stress) checkCheckpoint(t *testing.T) {
	doc := s.p.readFile(filepath.Join(s.p.wfDir(s.id), "checkpoint.json"))
	if got := gjson.GetBytes(doc, "phase_data.stress.counter").Int(); got != int64(s.counts["increment"]) {
		t.Errorf("counter %d after %d increments", got, s.counts["increment"])
	}
	slices.Sort(s.incs)
	for i, v := range s.incs {
		if v != int64(i+1) {
			t.Errorf("increments printed %v..., want 1..%d each once", s.incs[:min(len(s.incs), i+3)], len(s.incs))
			break
		}
	}
	var items []string
	for _, it := range gjson.GetBytes(doc, "phase_data.stress.items").Array() {
		items = append(items, it.String())
	}
	checkOnce(t, "appended item", s.done["append"], items)
	for w, n := range s.lastSet {
		if got := gjson.GetBytes(doc, fmt.Sprintf("phase_data.stress.last.w%d", w)).Int(); got != int64(n) {
			t.Errorf("writer %d last set %d, checkpoint has %d", w, n, got)
		}
	}
}
