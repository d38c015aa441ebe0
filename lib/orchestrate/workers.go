package orchestrate

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/flowstate-dev/flowstate/lib/kv"
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

// PlanID is the plan-architect's worker id; the plan it wrote is the one
// the later states build on.
const PlanID = "plan_1"

// DebugID is the worker id of debug attempt n.
func DebugID(n int) string { return fmt.Sprintf("debug_%d", n) }

// Worker is one agent invocation a state needs. ID is stable across
// resumes, so a worker recorded as completed is never run again.
type Worker struct {
	ID     string
	Label  string // the prompt's "Topic:" line: research topic, plan phase, test type, ...
	Output string // absolute path of the artifact the worker writes
	Batch  int    // 1-based; implementation waves, 1 for every other state
}

// Facts is what load read from the checkpoint for planning a state.
type Facts struct {
	SpecDir     string             // absolute <project>/SpecsDir/<workflow-id>
	Description string             // the workflow description
	Topics      []string           // classified research topics; may be empty
	TopicNotes  []string           // what the classifier said of each topic, when it said more than its name
	Plan        []supervisor.Phase // the plan's phases; nil when the scope has no plan
	Loop        Loop
	Failures    string // one line naming the failing tests a debug attempt works on
	// Version counts the rewinds of the workflow, plus one: after a rewind
	// workers write new files beside those of the work taken back, which
	// stay as history (plans/001_x.v2.md beside plans/001_x.md).
	Version  int
	Feedback string // what a person said sending the state's work back (see Feedback)
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

// Workers lists every worker of state, in batch order. A state without a
// role has none.
func Workers(state string, f Facts) ([]Worker, error) {
	one := func(id, label, rel string) []Worker {
		return []Worker{{ID: id, Label: label, Output: f.artifact(rel), Batch: 1}}
	}
	desc := kv.OneLine(f.Description)
	switch state {
	case "research":
		topics := f.Topics
		if len(topics) == 0 {
			// A scope given by the user carries no topics: research the request itself.
			topics = []string{desc}
		}
		ws := make([]Worker, len(topics))
		for i, t := range topics {
			n := i + 1
			ws[i] = Worker{ID: fmt.Sprintf("research_%d", n), Label: kv.OneLine(t), Batch: 1,
				Output: f.artifact(filepath.Join("reports", fmt.Sprintf("%03d_%s.md", n, slug(t))))}
		}
		return ws, nil
	case "plan":
		return one(PlanID, desc, filepath.Join("plans", "001_"+slug(desc)+".md")), nil
	case "implement":
		return implementers(f, desc)
	case "test":
		var ws []Worker
		for _, t := range TestTypes(f.Plan) {
			ws = append(ws, one(fmt.Sprintf("test_%s_r%d", t, f.Loop.TestRun()), t+" tests",
				filepath.Join("tests", fmt.Sprintf("r%d_%s_results.json", f.Loop.TestRun(), t)))...)
		}
		return ws, nil
	case "debug":
		label := kv.OneLine(f.Failures)
		if label == "" {
			label = desc
		}
		n := f.Loop.DebugAttempt()
		return one(DebugID(n), label, filepath.Join("debug", fmt.Sprintf("%03d_debug.md", n))), nil
	case "document":
		return one("document_1", desc, filepath.Join("summaries", "workflow_summary.md")), nil
	}
	return nil, nil
}

// implementers gives one executor per plan phase, batched by dependency
// wave; without a plan (implement-only scopes) one executor does the request.
func implementers(f Facts, desc string) ([]Worker, error) {
	if len(f.Plan) == 0 {
		return []Worker{{ID: "implement_1", Label: desc, Batch: 1,
			Output: f.artifact(filepath.Join("summaries", "001_implementation.md"))}}, nil
	}
	waves, err := supervisor.Waves(f.Plan)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	names := map[int]string{}
	for _, p := range f.Plan {
		names[p.Number] = p.Name
	}
	var ws []Worker
	for i, wave := range waves {
		for _, n := range wave {
			label := fmt.Sprintf("Phase %d: %s", n, kv.OneLine(names[n]))
			ws = append(ws, Worker{ID: fmt.Sprintf("phase_%d", n), Label: strings.TrimSuffix(label, ": "), Batch: i + 1,
				Output: f.artifact(filepath.Join("summaries", fmt.Sprintf("%03d_phase_%d.md", n, n)))})
		}
	}
	return ws, nil
}

// TestTypes are the test workers of a run: unit tests always, integration
// tests too when the plan has phases that build on each other (more than
// one wave), because that is where pieces meet.
func TestTypes(plan []supervisor.Phase) []string {
	if waves, err := supervisor.Waves(plan); err == nil && len(waves) > 1 {
		return []string{"unit", "integration"}
	}
	return []string{"unit"}
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

// Supervise decides, with the thresholds of docs/supervisors.md, whether the state's
// workers go through its sub-supervisor: never in sequential mode or for a
// single-agent state; otherwise by the size of the whole state, so that a
// resumed phase is coordinated the way it started.
func Supervise(r Role, ws []Worker, sequential bool) (bool, error) {
	if sequential || r.Supervisor == "" {
		return false, nil
	}
	var c supervisor.Counts
	switch r.Kind {
	case supervisor.Research:
		c.Topics = len(ws)
	case supervisor.Implementation:
		c.Domains = len(ws)
	case supervisor.Testing:
		c.TestTypes = len(ws)
	}
	return supervisor.ShouldSupervise(r.Kind, c)
}

// Loop is where a workflow stands in its test/debug loop: retries spent on
// the test state (error_state.retries.test), the state that failed, and the
// highest debug attempt completed. Test run k is followed, when it fails, by
// debug attempt k and then test run k+1, until sm-retry refuses.
type Loop struct {
	FailedState string
	Retries     int
	DebugDone   int
}

// TestRun is the number of the test run to work on: the failed run while
// its debug is owed, else the next one.
func (l Loop) TestRun() int {
	if l.OwesDebug() {
		return l.Retries
	}
	return l.Retries + 1
}

// DebugAttempt is the number of the debug attempt to work on; a debug-only
// workflow (no test failure) has attempt 1.
func (l Loop) DebugAttempt() int { return max(1, l.Retries) }

// OwesDebug reports that a failed test run has been recorded and retried
// but not yet debugged: the workflow must go to the recovery state next.
func (l Loop) OwesDebug() bool { return l.FailedState == "test" && l.Retries > l.DebugDone }

// slug makes a short file-name part from text: lower-case letters and
// digits joined by single underscores, at most 40 bytes, "untitled" if empty.
func slug(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			gap = false
			if b.Len() >= 40 {
				break
			}
			continue
		}
		gap = true
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return strings.TrimRight(b.String(), "_")
}
