package orchestrate

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// The workers a state needs, in which batch, and whether a sub-supervisor
// coordinates them. Pure: no I/O.

// SpecsDir is where agents write a workflow's artifacts, relative to the
// project: <project>/.flowstate/specs/<workflow-id>/{reports,plans,...}.
// Not .claude/specs as the bash libraries had it: Claude Code 2.1.328 treats every
// file under .claude/ as sensitive and asks before the Write tool touches
// it, whatever --allowedTools, Write(...) rules or acceptEdits say, so
// agents could never write their reports there without a person.
const SpecsDir = ".flowstate/specs"

// Worker is one agent invocation a state needs. ID is stable across
// resumes, so a worker recorded as completed is never run again.
type Worker struct {
	ID     string
	Label  string // the prompt's "Topic:" line: research topic, plan phase, test type, ...
	Output string // absolute path of the artifact the worker writes
	Batch  int    // 1-based; a plan's dependency waves, 1 for every other fan-out
}

// Facts is what load read from the checkpoint for planning a state.
type Facts struct {
	SpecDir     string             // absolute <project>/SpecsDir/<workflow-id>
	Description string             // the workflow description
	Topics      []string           // classified research topics; may be empty
	TopicNotes  []string           // what the classifier said of each topic, when it said more than its name
	Plan        []supervisor.Phase // the plan's phases; nil while there is no plan
	Loop        Loop
	Failures    string // one line naming what failed the check a recovery state works on
	// Version counts the rewinds of the workflow, plus one: after a rewind
	// workers write new files beside those of the work taken back, which
	// stay as history (plans/001_x.v2.md beside plans/001_x.md).
	Version  int
	Feedback string // what a person said sending the state's work back (see Feedback)
	// Conflicts are what the workers that run again after a merge
	// conflict met, one line each (isolate.go).
	Conflicts []string
}

// artifact is where a worker writes the file rel of the spec directory,
// in the workflow's current version.
func (f Facts) artifact(rel string) string {
	if f.Version > 1 {
		ext := filepath.Ext(rel)
		rel = fmt.Sprintf("%s.v%d%s", strings.TrimSuffix(rel, ext), f.Version, ext)
	}
	return filepath.Join(f.SpecDir, rel)
}

// item is one entry of a fan-out: its number (a plan phase's own), the
// text a worker's label shows, the part its file names take, and its
// dependency wave.
type item struct {
	n     int
	text  string
	slug  string
	batch int
}

// Workers lists every worker of r's state, in batch order: one per item
// of its fan-out, named, labelled and placed by its templates. Two
// workers that would share an id or a file are an error naming them.
func Workers(r Role, f Facts) ([]Worker, error) {
	items, err := fanOut(r, f)
	if err != nil {
		return nil, err
	}
	if len(items) > limit.MaxWorkers {
		return nil, fail.Invalidf("state %s: %d workers (one per item of its %q fan-out) are more than the %d a state may run; give fewer items",
			r.State, len(items), r.Source(), limit.MaxWorkers)
	}
	ws := make([]Worker, len(items))
	ids, outs := map[string]int{}, map[string]int{}
	for i, it := range items {
		v := machine.Vars{State: r.State, N: it.n, Run: f.Loop.RunOf(r.State), Item: it.slug, Text: it.text}
		ws[i] = Worker{ID: machine.Render(r.IDTemplate(), v), Label: kv.OneLine(machine.Render(r.LabelTemplate(), v)),
			Output: f.artifact(machine.Render(r.Output, v)), Batch: it.batch}
		for _, seen := range []struct {
			m     map[string]int
			key   string
			field string
		}{{ids, ws[i].ID, "id"}, {outs, ws[i].Output, "output"}} {
			if j, dup := seen.m[seen.key]; dup {
				return nil, fail.Invalidf("state %s: workers %d (%s) and %d (%s) get the same %s %s; put {n} in the state's %s template",
					r.State, j+1, items[j].text, i+1, it.text, seen.field, seen.key, seen.field)
			}
			seen.m[seen.key] = i
		}
	}
	return ws, nil
}

// fanOut lists the items of r's fan-out from its source.
func fanOut(r Role, f Facts) ([]item, error) {
	desc := kv.OneLine(f.Description)
	request := []item{{n: 1, text: desc, slug: machine.Slug(desc), batch: 1}}
	list := func(texts []string) []item {
		out := make([]item, len(texts))
		for i, t := range texts {
			out[i] = item{n: i + 1, text: kv.OneLine(t), slug: machine.Slug(t), batch: 1}
		}
		return out
	}
	switch r.Source() {
	case machine.SourceTopics:
		if len(f.Topics) > 0 {
			return list(f.Topics), nil
		}
	case machine.SourceArguments:
		return list(ArgumentItems(f.Description)), nil
	case machine.SourceFailures:
		if line := kv.OneLine(f.Failures); line != "" {
			return []item{{n: 1, text: line, slug: machine.Slug(line), batch: 1}}, nil
		}
	case machine.SourcePlan:
		if len(f.Plan) > 0 {
			return phases(f.Plan)
		}
	case machine.SourceItems:
		waves := planWaves(f.Plan)
		var texts []string
		for _, it := range r.Each.Items {
			if waves >= it.MinWaves {
				texts = append(texts, it.Name)
			}
		}
		return list(texts), nil
	}
	return request, nil
}

// phases gives one item per plan phase, numbered as the plan numbers
// them and batched by dependency wave.
func phases(plan []supervisor.Phase) ([]item, error) {
	waves, err := supervisor.Waves(plan)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	names := map[int]string{}
	for _, p := range plan {
		names[p.Number] = p.Name
	}
	var out []item
	for i, wave := range waves {
		for _, n := range wave {
			text := strings.TrimSuffix(fmt.Sprintf("Phase %d: %s", n, kv.OneLine(names[n])), ": ")
			out = append(out, item{n: n, text: text, slug: machine.Slug(names[n]), batch: i + 1})
		}
	}
	return out, nil
}

// planWaves counts the plan's dependency waves (0 without a plan, or
// with one that does not sort).
func planWaves(plan []supervisor.Phase) int {
	if waves, err := supervisor.Waves(plan); err == nil {
		return len(waves)
	}
	return 0
}

// ArgumentItems are the items a request lists for an "each": "arguments"
// fan-out: separated by newlines or commas when it has any, else by
// white space; empty items are dropped.
func ArgumentItems(request string) []string {
	sep := func(r rune) bool { return r == '\n' || r == ',' }
	if !strings.ContainsAny(request, "\n,") {
		sep = unicode.IsSpace
	}
	var out []string
	for _, f := range strings.FieldsFunc(request, sep) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Pending returns the workers to run now: the unfinished workers of the
// lowest batch that has any (a later wave waits for the earlier one), only
// the first of them when sequential. remaining counts every unfinished
// worker of the state, this batch included.
func Pending(ws []Worker, done func(id string) bool, sequential bool) (batch []Worker, remaining int) {
	for _, w := range ws {
		if done(w.ID) {
			continue
		}
		remaining++
		if len(batch) == 0 || batch[0].Batch == w.Batch && !sequential {
			batch = append(batch, w)
		}
	}
	return batch, remaining
}

// Supervise decides whether the state's workers go through its
// sub-supervisor: never in sequential mode or for a state without one;
// otherwise when the whole state (not the batch: a resumed phase is
// coordinated the way it started) has at least the definition's number of
// workers.
func Supervise(r Role, ws []Worker, sequential bool) bool {
	return !sequential && r.Supervisor != nil && len(ws) >= r.Supervisor.From
}

// Loop is where a workflow stands in a check-and-recover loop: a state
// whose check can fail (Checked, test in the default machine), the
// retries spent on it, the state that failed, and how many runs of its
// recovery state (debug) completed. Run k of the checked state is
// followed, when its check fails, by recovery run k and then run k+1 of
// the checked state, until sm-retry refuses.
type Loop struct {
	Checked      string
	Recovery     string
	FailedState  string
	Retries      int
	RecoveryDone int
}

// CheckRun is the number of the checked state's run to work on: the
// failed run while its recovery is owed, else the next one.
func (l Loop) CheckRun() int {
	if l.OwesRecovery() {
		return l.Retries
	}
	return l.Retries + 1
}

// RecoveryRun is the number of the recovery run to work on; a workflow
// that starts its recovery state without a failed check (debug-only) has
// run 1.
func (l Loop) RecoveryRun() int { return max(1, l.Retries) }

// RunOf is a template's {run} for state: the run of the loop it belongs
// to, 1 for a state outside the loop.
func (l Loop) RunOf(state string) int {
	switch {
	case state == "" || l.Checked == "":
		return 1
	case state == l.Checked:
		return l.CheckRun()
	case state == l.Recovery:
		return l.RecoveryRun()
	}
	return 1
}

// OwesRecovery reports that a failed check has been recorded and retried
// but not yet recovered from: the workflow must go to the recovery state
// next.
func (l Loop) OwesRecovery() bool {
	return l.Checked != "" && l.FailedState == l.Checked && l.Retries > l.RecoveryDone
}
