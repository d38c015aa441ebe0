// Command fsbench measures flowstate the way Claude Code pays for it: each
// subcommand as a whole process, started N times, against a no-op Go
// binary started the same way (interleaved, so machine noise hits both
// alike). It prints median wall time, the ratio to the no-op, the
// in-process time of the same call (app.Main in a loop: the work itself,
// without process start-up) and peak RSS. Ratios are reported, not judged:
// the README states the one target (scaling), and that row says whether it
// is met.
//
//	go run ./bench/cmd/fsbench [-n 200]     (or bench/bench.sh)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flowstate-dev/flowstate/lib/app"
)

func main() {
	n := flag.Int("n", 200, "runs per command")
	large := flag.Int("keys", 10000, "keys of the large workflow in the scaling rows")
	build := flag.String("build", "", "extra go build flags after scripts/build's, e.g. -ldflags=-X=x=y to measure an unstripped binary")
	libs := flag.String("bash-libs", "", "the bash libraries' .claude/lib directory, to time the same workflow with them too")
	flag.Parse()
	b, err := setup(strings.Fields(*build))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fsbench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(b.tmp)
	b.libs = *libs
	if err := b.run(*n, *large); err != nil {
		fmt.Fprintln(os.Stderr, "fsbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	tmp, flowstate, noop string
	idle                 string // bench/cmd/fsidle: flowstate's packages, no work
	libs                 string // the bash libraries, when given
	time                 string // /usr/bin/time, for peak RSS; "" if absent
	out                  *tabwriter.Writer
}

// setup builds flowstate and its idle twin with scripts/build (what users
// run) and the no-op binary into a temp dir.
func setup(build []string) (*bench, error) {
	tmp, err := os.MkdirTemp("", "fsbench-")
	if err != nil {
		return nil, err
	}
	b := &bench{tmp: tmp, flowstate: filepath.Join(tmp, "flowstate"), noop: filepath.Join(tmp, "noop"), idle: filepath.Join(tmp, "fsidle")}
	for out, pkg := range map[string]string{b.flowstate: "./cmd/flowstate", b.idle: "./bench/cmd/fsidle"} {
		cmd := exec.Command("sh", append([]string{"scripts/build", out}, build...)...)
		cmd.Env = append(os.Environ(), "PKG="+pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("scripts/build %s: %w", pkg, err)
		}
	}
	src := filepath.Join(tmp, "noop-src")
	files := map[string]string{"go.mod": "module noop\n\ngo 1.25\n", "main.go": "package main\n\nfunc main() {}\n"}
	if err := os.MkdirAll(src, 0o700); err != nil {
		return nil, err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	if t, err := exec.LookPath("/usr/bin/time"); err == nil {
		b.time = t
	}
	return b, goBuild(src, b.noop, ".")
}

func goBuild(dir, out, pkg string, flags ...string) error {
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// project is a project dir with one workflow that every run acts on.
type project struct {
	dir string
	env []string
}

func (b *bench) newProject(name, workflow string) (*project, error) {
	p := &project{dir: filepath.Join(b.tmp, name)}
	if err := os.MkdirAll(filepath.Join(p.dir, ".claude"), 0o700); err != nil {
		return nil, err
	}
	p.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.tmp, "CLAUDE_PROJECT_DIR=" + p.dir, "FLOWSTATE_WORKFLOW=" + workflow}
	if workflow == "" {
		return p, nil
	}
	_, err := b.exec(p, call{args: []string{"sm-init", "--workflow", workflow, "--description", "benchmark", "--command", "bench", "--scope", "full-implementation"}})
	return p, err
}

type call struct {
	args  []string
	stdin []byte
}

func argv(a ...string) call { return call{args: a} }

type sample struct {
	wall   time.Duration
	output []byte
	stderr string
}

// exec runs flowstate once and fails on a non-zero exit.
func (b *bench) exec(p *project, c call) (sample, error) {
	s, err := spawn(b.flowstate, p, c)
	if err != nil {
		return s, fmt.Errorf("flowstate %s: %w", strings.Join(c.args, " "), err)
	}
	return s, nil
}

func spawn(bin string, p *project, c call) (sample, error) {
	cmd := exec.Command(bin, c.args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start), output: out.Bytes(), stderr: errOut.String()}
	if err != nil {
		return s, fmt.Errorf("%v: %s", err, errOut.Bytes())
	}
	return s, nil
}

// row is one measured command.
type row struct {
	name      string
	p         *project
	call      func(i int) call
	inProcess bool // also time app.Main in a loop (not for commands that create)
}

type result struct {
	cmd, noop, inproc time.Duration
	rssKB             int64
}

// measure runs r n times, each run paired with a no-op run.
func (b *bench) measure(r row, n int) (result, error) {
	var cmd, noop []time.Duration
	var res result
	for i := range n {
		ns, err := spawn(b.noop, r.p, call{})
		if err != nil {
			return res, err
		}
		s, err := b.exec(r.p, r.call(i))
		if err != nil {
			return res, err
		}
		noop, cmd = append(noop, ns.wall), append(cmd, s.wall)
	}
	var err error
	if res.rssKB, err = b.peakRSS(r); err != nil {
		return res, err
	}
	res.cmd, res.noop = median(cmd), median(noop)
	if r.inProcess {
		res.inproc = inProcess(r, n)
	}
	return res, nil
}

// peakRSS runs r a few times under /usr/bin/time -f %M. The child's own
// rusage is no good here: Go starts children with vfork semantics, and
// Linux counts the parent's memory at exec time into the child's maxrss.
func (b *bench) peakRSS(r row) (int64, error) {
	if b.time == "" {
		return -1, nil
	}
	var peak int64
	for i := range 5 {
		c := r.call(1_000_000 + i)
		s, err := spawn(b.time, r.p, call{args: append([]string{"-f", "%M", "-o", "/dev/stderr", b.flowstate}, c.args...), stdin: c.stdin})
		if err != nil {
			return 0, fmt.Errorf("peak RSS of %s: %w", strings.Join(c.args, " "), err)
		}
		var kb int64
		if _, err := fmt.Sscan(lastLine(s.stderr), &kb); err != nil {
			return 0, fmt.Errorf("peak RSS: /usr/bin/time printed %q", s.stderr)
		}
		peak = max(peak, kb)
	}
	return peak, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func rss(kb int64) string {
	if kb < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", float64(kb)/1024)
}

// inProcess times app.Main itself, after one warm-up call: the cost of
// the work without exec, runtime start and package init.
func inProcess(r row, n int) time.Duration {
	env := map[string]string{}
	for _, kv := range r.p.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var ds []time.Duration
	for i := range n + 1 {
		c := r.call(i)
		io := app.IO{Stdin: bytes.NewReader(c.stdin), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }, Cwd: r.p.dir}
		start := time.Now()
		app.Main(append([]string{"flowstate"}, c.args...), io)
		if i > 0 {
			ds = append(ds, time.Since(start))
		}
	}
	return median(ds)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func (b *bench) run(n, large int) error {
	p, err := b.newProject("main", "bench")
	if err != nil {
		return err
	}
	for _, st := range []string{"implement", "test"} {
		if _, err := b.exec(p, argv("sm-transition", st)); err != nil {
			return err
		}
	}
	if _, err := b.exec(p, call{args: []string{"state-append", "--stdin"}, stdin: keys(10)}); err != nil {
		return err
	}
	doc, err := b.exec(p, argv("checkpoint-load"))
	if err != nil {
		return err
	}
	inits, err := b.newProject("inits", "")
	if err != nil {
		return err
	}
	rows := []row{
		{name: "state-get", p: p, inProcess: true, call: func(int) call { return argv("state-get", "KEY_00001") }},
		{name: "state-append", p: p, inProcess: true, call: func(i int) call { return argv("state-append", "BENCH", fmt.Sprint("value ", i)) }},
		{name: "state-load", p: p, inProcess: true, call: func(int) call { return argv("state-load") }},
		{name: "sm-transition", p: p, inProcess: true, call: func(i int) call { return argv("sm-transition", []string{"debug", "test"}[i%2]) }},
		{name: "sm-status", p: p, inProcess: true, call: func(int) call { return argv("sm-status") }},
		{name: "checkpoint-get", p: p, inProcess: true, call: func(int) call { return argv("checkpoint-get", "state_machine.current_state") }},
		{name: "checkpoint-set", p: p, inProcess: true, call: func(i int) call { return argv("checkpoint-set", "phase_data.bench.n", fmt.Sprint(i)) }},
		{name: "sm-init", p: inits, call: func(i int) call {
			return argv("sm-init", "--workflow", fmt.Sprintf("w%d-%d", i, time.Now().UnixNano()), "--description", "d", "--command", "c", "--scope", "full-implementation")
		}},
		{name: "checkpoint-save", p: p, inProcess: true, call: func(int) call { return call{args: []string{"checkpoint-save"}, stdin: doc.output} }},
		{name: "checkpoint-load", p: p, inProcess: true, call: func(int) call { return argv("checkpoint-load") }},
		{name: "log-append", p: p, inProcess: true, call: func(i int) call { return argv("log-append", "bench", fmt.Sprintf(`{"i":%d}`, i)) }},
		{name: "version", p: p, inProcess: true, call: func(int) call { return argv("version") }},
	}
	b.out = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(b.out, "command\tmedian\tno-op\tratio\tin-process\tpeak RSS\t\n")
	var noops []time.Duration
	for _, r := range rows {
		res, err := b.measure(r, n)
		if err != nil {
			return err
		}
		noops = append(noops, res.noop)
		inproc := "-"
		if r.inProcess {
			inproc = ms(res.inproc)
		}
		fmt.Fprintf(b.out, "%s\t%s\t%s\t%.2f×\t%s\t%s\t\n", r.name, ms(res.cmd), ms(res.noop),
			float64(res.cmd)/float64(res.noop), inproc, rss(res.rssKB))
	}
	b.out.Flush()
	fmt.Printf("\nno-op Go binary: median %s over all rows (%d runs each, interleaved with the command)\n", ms(median(noops)), n)
	if err := b.scaling(n, large); err != nil {
		return err
	}
	return b.workflow(max(n/10, 5))
}

// keys renders n KEY=value lines for state-append --stdin.
func keys(n int) []byte {
	var s strings.Builder
	for i := range n {
		fmt.Fprintf(&s, "KEY_%05d=/home/user/project/specs/%03d/report-%d.md\n", i, i%100, i)
	}
	return []byte(s.String())
}

// bulkDoc adds n keys under phase_data.bulk to a checkpoint.
func bulkDoc(doc []byte, n int) []byte {
	var s strings.Builder
	s.WriteString(`"phase_data": {"bulk": {`)
	for i := range n {
		if i > 0 {
			s.WriteByte(',')
		}
		fmt.Fprintf(&s, `"k%d": "/home/user/project/specs/%03d/report-%d.md"`, i, i%100, i)
	}
	s.WriteString("}},")
	return bytes.Replace(doc, []byte(`"phase_data": {},`), []byte(s.String()), 1)
}

// scalingTarget is the README's one performance target: state-load and
// checkpoint-get on 10,000 keys within this factor of 10 keys.
const scalingTarget = 3.0

// scaling compares state-load and checkpoint-get on 10 and on many keys.
func (b *bench) scaling(n, large int) error {
	fmt.Printf("\nscaling from 10 to %d keys (target, as the README states: within %.0f× of the small case)\n", large, scalingTarget)
	b.out = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(b.out, "command\t10 keys\t%d keys\tratio\t\tpeak RSS\t\n", large)
	times := map[string][2]result{}
	for i, k := range []int{10, large} {
		p, err := b.newProject(fmt.Sprint("keys", k), "scale")
		if err != nil {
			return err
		}
		if _, err := b.exec(p, call{args: []string{"state-append", "--stdin"}, stdin: keys(k)}); err != nil {
			return err
		}
		doc, err := b.exec(p, argv("checkpoint-load"))
		if err != nil {
			return err
		}
		if _, err := b.exec(p, call{args: []string{"checkpoint-save"}, stdin: bulkDoc(doc.output, k)}); err != nil {
			return err
		}
		for name, c := range map[string]call{"state-load": argv("state-load"), "checkpoint-get": argv("checkpoint-get", "phase_data.bulk.k5")} {
			res, err := b.measure(row{p: p, call: func(int) call { return c }}, max(n/2, 10))
			if err != nil {
				return err
			}
			t := times[name]
			t[i] = res
			times[name] = t
		}
	}
	for _, name := range []string{"state-load", "checkpoint-get"} {
		t := times[name]
		ratio := float64(t[1].cmd) / float64(t[0].cmd)
		verdict := "ok"
		if ratio > scalingTarget {
			verdict = "MISS"
		}
		fmt.Fprintf(b.out, "%s\t%s\t%s\t%.2f×\t%s\t%s\t\n", name, ms(t[0].cmd), ms(t[1].cmd), ratio, verdict, rss(t[1].rssKB))
	}
	return b.out.Flush()
}
