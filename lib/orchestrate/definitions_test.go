package orchestrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The property `graph` promises: a definition it accepts (graph and
// phase-start read a definition with the same machine.Parse) never fails
// a run for a reason of its own. Definitions are generated, the
// plausible and the broken mixed; each one accepted is run through the
// real phase loop (Start, Plan, Verify, a sub-supervisor's steps where it
// has one), its workers writing what the definition asks of them, and
// must end complete, every worker's file its own and counted once.

// TestAcceptedDefinitionsRun is the property over generated definitions,
// in batches of a seed each run at once: the runs wait on fsync more than
// they compute.
func TestAcceptedDefinitionsRun(t *testing.T) {
	batches, size := 6, 40
	if testing.Short() {
		batches = 2
	}
	errs := make([]error, batches)
	var wg sync.WaitGroup
	for seed := range batches {
		wg.Go(func() { errs[seed] = runBatch(t, uint64(seed), size) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// runBatch generates size definitions from seed and runs each accepted
// one.
func runBatch(t *testing.T, seed uint64, size int) error {
	rng := rand.New(rand.NewPCG(35, seed))
	accepted := 0
	for i := range size {
		data, err := json.MarshalIndent(genDefinition(rng), "", " ")
		if err != nil {
			return err
		}
		m, err := machine.Parse(data)
		if err != nil {
			continue
		}
		accepted++
		scope := m.ScopeNames()[rng.IntN(len(m.Scopes))]
		if err := runDefinition(t, m, data, scope, rng); err != nil {
			return fmt.Errorf("seed %d, definition %d, scope %s: accepted, but its run failed: %w\n%s", seed, i, scope, err, data)
		}
	}
	// A generator whose definitions are all refused would prove nothing.
	if accepted < size/4 {
		return fmt.Errorf("seed %d: only %d of %d generated definitions were accepted", seed, accepted, size)
	}
	return nil
}

// pick is one of xs.
func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// chance is true with probability p.
func chance(rng *rand.Rand, p float64) bool { return rng.Float64() < p }

// genDefinition draws a definition: a route of one to four states with
// work, sometimes a check-and-recover loop, a second scope or a route
// that passes a state twice, and work whose every field is drawn from
// values that are right, and a few that are wrong.
func genDefinition(rng *rand.Rand) map[string]any {
	names := slices.Clone([]string{"review", "check", "sum-up", "sum_up", "plan", "draft", "a"})
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	states := names[:1+rng.IntN(4)]
	route := append([]string{"initialize"}, states...)
	terminal := "complete"
	if chance(rng, 0.2) {
		terminal = states[len(states)-1] // the last state with work ends the scope
	} else {
		route = append(route, terminal)
	}
	transitions := map[string][]string{}
	for i := 0; i+1 < len(route); i++ {
		transitions[route[i]] = append(transitions[route[i]], route[i+1])
	}
	transitions[terminal] = append(transitions[terminal], []string{}...)
	work := map[string]any{}
	for _, s := range states {
		if chance(rng, 0.85) {
			work[s] = genWork(rng, s, states)
		}
	}
	def := map[string]any{"name": "gen", "initial": "initialize", "transitions": transitions, "work": work}
	scopes := map[string]any{"full": map[string]any{"terminal": terminal, "route": route}}
	if chance(rng, 0.05) && len(states) >= 2 {
		// A route through a state twice.
		transitions[states[1]] = append(transitions[states[1]], states[0])
		twice := slices.Concat(route[:3], []string{states[0]}, route[2:])
		scopes["full"] = map[string]any{"terminal": terminal, "route": twice}
	}
	if chance(rng, 0.2) {
		scopes["first"] = map[string]any{"terminal": states[0], "route": []string{"initialize", states[0]}}
	}
	def["scopes"] = scopes
	if chance(rng, 0.3) {
		addLoop(rng, def, states)
	}
	if chance(rng, 0.1) {
		def["arguments"] = or(rng, []string{"[a-z]+", "[a-z]+|[0-9]+"}, "file", "[")
	}
	return def
}

// addLoop makes one state's check fail-able, repaired by a state of its
// own off the route.
func addLoop(rng *rand.Rand, def map[string]any, states []string) {
	checked := pick(rng, states...)
	transitions := def["transitions"].(map[string][]string)
	transitions[checked] = append(transitions[checked], "fix")
	transitions["fix"] = []string{checked}
	def["recovery"] = map[string]string{checked: "fix"}
	work := def["work"].(map[string]any)
	work[checked] = map[string]any{"agent": "checker", "id": or(rng, []string{"check_{run}"}, "check"), "output": or(rng, []string{"checks/{run}_check.json"}, "checks/check.json"),
		"format": pick(rng, "json", "test-results"), "fields": []any{"verdict"}, "fail_when": "tests_failed"}
	if w := work[checked].(map[string]any); w["format"] == "test-results" {
		delete(w, "fields")
	}
	if chance(rng, 0.9) {
		work["fix"] = map[string]any{"agent": "fixer", "each": "failures", "id": "fix_{run}", "output": or(rng, []string{"fix/{run:3}_fix.md"}, "fix/fix.md"), "format": "report"}
	}
}

// or is one of good, or, now and then, one of bad: most definitions
// drawn are right, and each wrong one is wrong in one place or two.
func or[T any](rng *rand.Rand, good []T, bad ...T) T {
	if len(bad) > 0 && chance(rng, 0.06) {
		return pick(rng, bad...)
	}
	return pick(rng, good...)
}

// genWork draws the work of state s.
func genWork(rng *rand.Rand, s string, states []string) map[string]any {
	w := map[string]any{
		"agent": pick(rng, "reviewer", "writer", "x_y"),
		"output": or(rng, []string{"{state}/{n:3}_{item}.md", "out/{n}.json", "{state}_{n}.md", "{state}/{n}", "{state}/{n}/x.md", "{state}/x_{n}.md", "results/{state}-{n}.md", "r/{n}_{item}.md", "out/{n}_{item}.md"},
			"briefs/{n}.md", "classification.json", "out/{item}.md", "{state}.md"),
		"format": pick(rng, "report", "report", "markdown", "json", "json", "test-results", "plan"),
	}
	if chance(rng, 0.7) {
		w["each"] = or[any](rng, []any{"request", "arguments", "topics", "failures", "plan", []any{"alpha", "beta"}, []any{"one", map[string]any{"item": "two", "min_waves": 2}}, []any{"x"}},
			[]any{"alpha", "Alpha"}, []any{"beta gamma", "beta-gamma", "x"}, items(51), []any{})
	}
	if chance(rng, 0.4) {
		w["id"] = or(rng, []string{"{state}_{n}", "w_{n}", "{state}-{item}-{n}"}, "{n}\n", "{run}", "{item}")
	}
	if chance(rng, 0.3) {
		w["label"] = pick(rng, "{text}", "Topic {n}: {text}")
	}
	switch w["format"] {
	case "markdown", "report":
		if chance(rng, 0.5) || w["format"] == "markdown" {
			w["sections"] = or[any](rng, []any{[]any{"Overview"}, []any{"## Findings", "Verdict"}, []any{"### Notes"}, []any{"**Risks**:"}}, []any{"# Title"}, []any{"1."}, []any{""})
		}
	case "json":
		w["fields"] = or[any](rng, []any{[]any{"verdict"}, []any{"verdict", map[string]any{"name": "severity", "values": []any{"low", "high"}}},
			[]any{map[string]any{"name": "score", "type": "number"}, map[string]any{"name": "tags", "type": "array"}, map[string]any{"name": "where", "type": "object"}},
			[]any{map[string]any{"name": "ok", "type": "boolean"}, map[string]any{"name": "n", "type": "string", "values": []any{"a"}}}},
			[]any{""}, []any{map[string]any{"name": "n", "type": "number", "values": []any{"a"}}}, []any{"a", "a"})
	}
	if chance(rng, 0.3) {
		w["min_delivered"] = or[any](rng, []any{0, 1, 2, "50%", "100%"}, 3, "150%", -1)
	}
	if chance(rng, 0.15) {
		w["records"] = or(rng, []string{"own_" + strings.ReplaceAll(s, "-", "_")}, "shared", "a.b")
	}
	if chance(rng, 0.15) {
		w["supervisor"] = map[string]any{"agent": "sub-supervisor", "from": pick(rng, 2, 3)}
	}
	if chance(rng, 0.15) {
		w["aggregate"] = or(rng, []string{map[string]string{"report": "research", "test-results": "testing"}[w["format"].(string)]}, "implementation", "testing")
		if w["aggregate"] == "" {
			delete(w, "aggregate")
		}
	}
	if chance(rng, 0.3) {
		w["reads"] = []string{pick(rng, states...)}
	}
	return w
}

// items is a fixed list of n items.
func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = "item " + strconv.Itoa(i+1)
	}
	return out
}

// runDefinition runs a workflow of m through the phase loop to its end,
// as its command would, with every worker delivering its file.
func runDefinition(t *testing.T, m *machine.Machine, data []byte, scope string, rng *rand.Rand) error {
	p := project(t)
	r := Request{Command: "gen", Scope: scope, Description: pick(rng, "alpha beta", "one, two, three", "the login handler"), Session: "s1",
		Machine: m, MachineJSON: data, Definition: filepath.Join(p.Dir, ".claude", "flows", "gen.json"), Sequential: chance(rng, 0.1)}
	out, err := Start(p, r)
	var refused requestError
	switch ids, _ := p.List(); {
	case errors.As(err, &refused) && len(ids) == 0:
		return nil // the request's fault, refused before anything exists
	case err != nil:
		return fmt.Errorf("start: %w", err)
	}
	if ids, _ := p.List(); len(ids) != 1 {
		return fmt.Errorf("start: workflows %v, want one", ids)
	}
	ids, _ := p.List()
	w, err := p.Workflow(ids[0].ID)
	if err != nil {
		return err
	}
	d := &deliverer{w: w, m: m, written: map[string]bool{}}
	for range 200 {
		switch next := outValue(out, "NEXT"); next {
		case "done":
			return d.finished(out, m.Scopes[scope].Terminal)
		case "work":
			if err := d.deliver(out); err != nil {
				return err
			}
			out, err = Verify(w, Options{})
		case "supervised":
			if err := d.supervise(); err != nil {
				return err
			}
			out, err = Verify(w, Options{})
		default:
			return fmt.Errorf("NEXT=%s:\n%s", next, out)
		}
		if err != nil {
			return fmt.Errorf("after %d files: %w", len(d.written), err)
		}
	}
	return fmt.Errorf("no end after 200 steps")
}

// deliverer writes the workers' files of a workflow as good agents
// would: each once, in its state's format, failing a state's check once.
type deliverer struct {
	w       *store.Workflow
	m       *machine.Machine
	written map[string]bool
	failed  bool // the check of the loop failed once
}

// deliver writes the file of each worker a plan handed out; each must be
// a file nobody wrote before.
func (d *deliverer) deliver(out Output) error {
	doc, err := d.w.ReadCheckpoint()
	if err != nil {
		return err
	}
	state := checkpoint.ViewOf(doc).CurrentState
	role, ok := RoleOf(d.m, state)
	if !ok {
		return fmt.Errorf("workers handed out in %s, which has no work", state)
	}
	n, _ := strconv.Atoi(outValue(out, "WORKER_COUNT"))
	for i := 1; i <= n; i++ {
		path := filepath.Join(outValue(out, "SPEC_DIR"), outValue(out, "OUTPUT_"+strconv.Itoa(i)))
		if _, err := os.Lstat(path); err == nil || d.written[path] {
			return fmt.Errorf("worker %d of %s is sent to write %s, which is there already", i, state, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		data, err := d.artifact(role, outValue(out, "SPEC_DIR"))
		if err != nil {
			return fmt.Errorf("worker %d of %s: %w", i, state, err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		d.written[path] = true
	}
	return nil
}

// supervise runs a sub-supervisor's steps until it signals.
func (d *deliverer) supervise() error {
	o := Options{Supervisor: true}
	out, err := Plan(d.w, o)
	for range 50 {
		switch {
		case err != nil:
			return fmt.Errorf("sub-supervisor: %w", err)
		case out.Signal != "":
			return nil
		}
		if err := d.deliver(out); err != nil {
			return err
		}
		out, err = Verify(d.w, o)
	}
	return fmt.Errorf("sub-supervisor: no signal after 50 steps")
}

// finished checks the end: the scope's terminal state, every file
// written counted once.
func (d *deliverer) finished(out Output, terminal string) error {
	if got := outValue(out, "FINAL_STATE"); got != terminal {
		return fmt.Errorf("finished in %s, want %s", got, terminal)
	}
	if got := outValue(out, "ARTIFACT_COUNT"); got != strconv.Itoa(len(d.written)) {
		return fmt.Errorf("ARTIFACT_COUNT=%s for the %d files written", got, len(d.written))
	}
	return nil
}

// artifact is the file a literal-minded worker of r writes: the
// template the brief of its state gives, filled in, failing its state's
// check the first time a state with one is run.
func (d *deliverer) artifact(r Role, specDir string) ([]byte, error) {
	brief, err := os.ReadFile(BriefPath(specDir, r))
	if err != nil {
		return nil, err
	}
	file, err := filled(string(brief))
	if err != nil || r.FailWhen == "" || d.failed {
		return []byte(file), err
	}
	d.failed = true
	data, err := sjson.SetBytes([]byte(file), gjson.Escape(r.FailWhen), 1)
	if err == nil && r.Format == machine.FormatTestResults {
		data, err = sjson.SetBytes(data, "total_tests", 1)
	}
	return data, err
}

// outValue is the value of key in out, "" when it has none.
func outValue(out Output, key string) string {
	for _, p := range out.Pairs {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}
