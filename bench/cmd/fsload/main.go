// Command fsload is flowstate's load benchmark: clients run the blocks of
// a command against several workflows of one project at once, as
// concurrent Claude Code sessions would, and some blocks are killed with
// SIGKILL at a random moment. It prints the throughput, the median and
// 99th percentile of each command's time and of its wait for locks
// (FLOWSTATE_LOCK_TIMING), and checks the store against what the clients
// saw: every write acknowledged (exit 0) is there exactly once, none that
// failed is there at all, and a killed one is there whole or not at all.
// It exits 1 when a check fails. A benchmark, not a test: the figures
// are reported, never judged.
//
//	go run ./bench/cmd/fsload [-clients 12] [-workflows 3] [-duration 20s] [-kill 0.05]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/statefile"
)

func main() {
	clients := flag.Int("clients", 12, "concurrent clients")
	workflows := flag.Int("workflows", 3, "workflows the clients share (client i works on workflow i mod N)")
	duration := flag.Duration("duration", 20*time.Second, "how long the clients run")
	kill := flag.Float64("kill", 0.05, "share of commands killed with SIGKILL at a random moment")
	flag.Parse()
	if err := run(*clients, *workflows, *duration, *kill); err != nil {
		fmt.Fprintln(os.Stderr, "fsload:", err)
		os.Exit(1)
	}
}

// load is one run: the binary, the project and what every client saw.
type load struct {
	bin, dir string
	env      []string
	kill     float64

	mu      sync.Mutex
	samples map[string][]sample // command -> completed runs
	writes  []write
	killed  int
	failed  []string
	typical time.Duration // a command's recent wall time, for when to kill one
}

// sample is one completed run of a command.
type sample struct{ wall, lockWait time.Duration }

// write is one write a client made and how it ended.
type write struct {
	workflow string
	kind     string // key, item, log, worker, count
	token    string // what it stored: a key, an item, a worker id; the counter's path
	outcome  outcome
}

type outcome int

const (
	acked  outcome = iota // exit 0
	failed                // exit non-zero: must not be there
	killed                // SIGKILL: there whole, or not at all
)

func run(clients, workflows int, duration time.Duration, kill float64) error {
	tmp, err := os.MkdirTemp("", "fsload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	l := &load{bin: filepath.Join(tmp, "flowstate"), dir: filepath.Join(tmp, "project"), kill: kill, samples: map[string][]sample{}}
	build := exec.Command("sh", "scripts/build", l.bin)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("scripts/build: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(l.dir, ".claude"), 0o700); err != nil {
		return err
	}
	l.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "CLAUDE_PROJECT_DIR=" + l.dir, "FLOWSTATE_LOCK_TIMING=1", "FLOWSTATE_LOCK_WAIT=60s"}
	ids := make([]string, workflows)
	for i := range ids {
		ids[i] = fmt.Sprintf("load-%d", i)
		if _, _, err := l.must("sm-init", "--workflow", ids[i], "--description", "load", "--command", "coordinate", "--scope", "full-implementation"); err != nil {
			return err
		}
	}
	start := time.Now()
	deadline := start.Add(duration)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() { l.client(c, ids[c%workflows], deadline) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	l.report(clients, workflows, duration, elapsed)
	return l.verify(ids)
}

// client runs the blocks of one command, over and over, until deadline:
// each block loads the state, stores a value, adds an item and a worker
// record to the checkpoint, logs, counts, and reads the status back.
func (l *load) client(c int, wf string, deadline time.Time) {
	counter := fmt.Sprintf("phase_data.load.c%d", c)
	for n := 0; time.Now().Before(deadline); n++ {
		token := fmt.Sprintf("c%d-%d", c, n)
		key := fmt.Sprintf("K_c%d_%d", c, n)
		worker, _ := json.Marshal(map[string]any{"worker_id": token, "topic": "load", "status": "completed", "output_path": token + ".md"})
		logged, _ := json.Marshal(map[string]string{"token": token})
		l.read(wf, "state-load")
		l.write(wf, "key", key, "", "state-append", key, token)
		l.write(wf, "item", token, "", "checkpoint-set", "phase_data.load.items", `"`+token+`"`, "--append")
		l.write(wf, "log", token, "", "log-append", "load", string(logged))
		l.write(wf, "worker", token, string(worker), "supervisor-record", "--supervisor", "load", "-")
		l.write(wf, "count", counter, "", "checkpoint-set", counter, "--increment")
		l.read(wf, "sm-status")
	}
}

func (l *load) read(wf string, args ...string) { l.spawn(wf, "", args) }

// write runs a writing command and records how it ended.
func (l *load) write(wf, kind, token, stdin string, args ...string) {
	o := l.spawn(wf, stdin, args)
	l.mu.Lock()
	l.writes = append(l.writes, write{workflow: wf, kind: kind, token: token, outcome: o})
	l.mu.Unlock()
}

// spawn runs flowstate once on workflow wf, killing it with probability
// l.kill at a random moment of what a command takes now (twice the
// recent average): from its start to its end, its writes included.
func (l *load) spawn(wf, stdin string, args []string) outcome {
	cmd := exec.Command(l.bin, append([]string{"--workflow", wf}, args...)...)
	cmd.Env = l.env
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		l.fail(fmt.Sprintf("start %s: %v", args[0], err))
		return failed
	}
	if rand.Float64() < l.kill {
		l.mu.Lock()
		window := 2*l.typical + time.Millisecond
		l.mu.Unlock()
		time.AfterFunc(time.Duration(rand.Int64N(int64(window))), func() { _ = cmd.Process.Kill() })
	}
	err := cmd.Wait()
	wall := time.Since(start)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
		l.mu.Lock()
		l.killed++
		l.mu.Unlock()
		return killed
	case err != nil:
		l.fail(fmt.Sprintf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String())))
		return failed
	}
	s := sample{wall: wall}
	for line := range strings.Lines(stderr.String()) {
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "flowstate: waited "); ok {
			s.lockWait, _ = time.ParseDuration(strings.TrimSuffix(d, " for locks"))
		}
	}
	l.mu.Lock()
	l.samples[args[0]] = append(l.samples[args[0]], s)
	l.typical += (wall - l.typical) / 8
	l.mu.Unlock()
	return acked
}

func (l *load) fail(msg string) {
	l.mu.Lock()
	l.failed = append(l.failed, msg)
	l.mu.Unlock()
}

// must runs flowstate (not under load) and fails on a non-zero exit.
func (l *load) must(args ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.Command(l.bin, args...)
	cmd.Env = l.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("flowstate %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out, errb.String(), nil
}

// report prints throughput and the percentiles of each command.
func (l *load) report(clients, workflows int, duration, elapsed time.Duration) {
	total := 0
	var all []sample
	for _, s := range l.samples {
		total += len(s)
		all = append(all, s...)
	}
	fmt.Printf("fsload: %d clients on %d workflows for %s, %.0f%% of commands killed at random\n", clients, workflows, duration, l.kill*100)
	fmt.Printf("%d commands completed in %s: %.0f commands/s; %d killed, %d failed\n\n", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), l.killed, len(l.failed))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\truns\tp50\tp99\tlock wait p50\tp99\t")
	for _, name := range slices.Sorted(maps.Keys(l.samples)) {
		row(tw, name, l.samples[name])
	}
	row(tw, "all", all)
	_ = tw.Flush()
	for _, f := range l.failed {
		fmt.Println("failed:", f)
	}
}

func row(tw *tabwriter.Writer, name string, s []sample) {
	walls := make([]time.Duration, len(s))
	waits := make([]time.Duration, len(s))
	for i, x := range s {
		walls[i], waits[i] = x.wall, x.lockWait
	}
	fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", name, len(s), pct(walls, 50), pct(walls, 99), pct(waits, 50), pct(waits, 99))
}

// pct is the p-th percentile of ds, rounded for reading.
func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	d := ds[min(len(ds)-1, len(ds)*p/100)]
	return d.Round(10 * time.Microsecond).String()
}

// verify compares each workflow's store with what the clients saw.
func (l *load) verify(ids []string) error {
	var bad []string
	counts := map[outcome]int{}
	for _, wf := range ids {
		st, err := l.stored(wf)
		if err != nil {
			return err
		}
		incs, killedIncs := map[string]int{}, map[string]int{}
		for _, w := range l.writes {
			if w.workflow != wf {
				continue
			}
			counts[w.outcome]++
			if w.kind == "count" {
				switch w.outcome {
				case acked:
					incs[w.token]++
				case killed:
					killedIncs[w.token]++
				}
				continue
			}
			if msg := st.check(w); msg != "" {
				bad = append(bad, wf+": "+msg)
			}
		}
		for path, n := range incs {
			if got := st.counters[path]; got < n || got > n+killedIncs[path] {
				bad = append(bad, fmt.Sprintf("%s: %s is %d after %d acknowledged increments and %d killed", wf, path, got, n, killedIncs[path]))
			}
		}
	}
	fmt.Printf("\nchecked %d acknowledged writes: each stored exactly once; %d failed: none stored; %d killed: each whole or not at all\n", counts[acked], counts[failed], counts[killed])
	if len(bad) > 0 {
		for _, b := range bad[:min(len(bad), 20)] {
			fmt.Println("VIOLATION", b)
		}
		return fmt.Errorf("%d writes are not stored as acknowledged", len(bad))
	}
	fmt.Println("no violations")
	return nil
}

// store is what a workflow holds, read after the run: state keys, the
// checkpoint's items, workers and counters, the logged tokens, and the
// worker ids the committed events name.
type store struct {
	keys     map[string]string
	items    map[string]int
	workers  map[string]int
	events   map[string]int
	logged   map[string]int
	counters map[string]int
}

func (l *load) stored(wf string) (*store, error) {
	st := &store{keys: map[string]string{}, items: map[string]int{}, workers: map[string]int{}, events: map[string]int{}, logged: map[string]int{}, counters: map[string]int{}}
	wdir := filepath.Join(l.dir, ".claude", "state", "workflows", wf)
	state, err := os.ReadFile(filepath.Join(wdir, "state"))
	if err != nil {
		return nil, err
	}
	st.keys = statefile.Parse(state).Values
	cp, _, err := l.must("--workflow", wf, "checkpoint-load")
	if err != nil {
		return nil, err
	}
	for _, it := range gjson.GetBytes(cp, "phase_data.load.items").Array() {
		st.items[it.String()]++
	}
	gjson.GetBytes(cp, "phase_data.load").ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Number {
			st.counters["phase_data.load."+k.String()] = int(v.Int())
		}
		return true
	})
	for _, w := range gjson.GetBytes(cp, "supervisor_state.load.workers").Array() {
		st.workers[w.Get("worker_id").String()]++
	}
	// Through history, which leaves out the events of an uncommitted change.
	hist, _, err := l.must("--workflow", wf, "history", "--json")
	if err != nil {
		return nil, err
	}
	for _, e := range gjson.GetBytes(hist, "events").Array() {
		if e.Get("event").String() == "supervisor-record" {
			st.events[e.Get("fields.worker_id").String()]++
		}
	}
	logs, err := os.ReadFile(filepath.Join(wdir, "logs", "load.jsonl"))
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(string(logs)) {
		if t := gjson.Get(line, "token"); t.Exists() {
			st.logged[t.String()]++
		}
	}
	return st, nil
}

// check says what is wrong with how w is stored, "" when nothing is.
func (st *store) check(w write) string {
	switch w.kind {
	case "key":
		v, ok := st.keys[w.token]
		return present(w, ok && v != "", 1)
	case "item":
		return present(w, st.items[w.token] > 0, st.items[w.token])
	case "log":
		return present(w, st.logged[w.token] > 0, st.logged[w.token])
	case "worker":
		if st.workers[w.token] != st.events[w.token] {
			return fmt.Sprintf("worker %s: %d records but %d events: a change half made", w.token, st.workers[w.token], st.events[w.token])
		}
		return present(w, st.workers[w.token] > 0, st.workers[w.token])
	}
	return ""
}

// present checks one write stored n times (there says whether at all).
func present(w write, there bool, n int) string {
	switch {
	case n > 1:
		return fmt.Sprintf("%s %s stored %d times", w.kind, w.token, n)
	case w.outcome == acked && !there:
		return fmt.Sprintf("%s %s acknowledged but not stored", w.kind, w.token)
	case w.outcome == failed && there:
		return fmt.Sprintf("%s %s failed but stored", w.kind, w.token)
	}
	return ""
}
