package orchestrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/workers"
)

// Options steer a phase step.
type Options struct {
	Supervisor bool // the step runs inside a sub-supervisor agent
	Waiting    Waiting
}

// Verify checks and records the artifacts of the workers the last plan
// handed out, and of any other worker of the state an agent was launched
// for. While one of them is still at work (the model launched it in the
// background, or moved on early) it waits, as long as o.Waiting allows,
// then answers NEXT=verify to be run again. A worker that did not deliver
// fails the workflow with an error naming the file; failing tests spend
// one retry and lead to debug. In a sub-supervisor it never stops: it
// answers NEXT=workers until the state's workers are all recorded, then
// returns the sub-supervisor's signal.
//
// Run again, it answers as it did: what it recorded is not checked twice.
// A workflow a person holds ends the command (see guarded); what its
// agents deliver meanwhile is recorded by the next phase-plan.
func Verify(w *store.Workflow, o Options) (Output, error) { return guarded(w, o, true, verifyStep) }

func verifyStep(w *store.Workflow, o Options) (Output, error) {
	var out Output
	var v *view
	var runs agentrun.Runs
	var targets []phase.Worker
	var err error
	busy := o.Waiting.wait(func() bool {
		if v, runs, err = look(w); err != nil || !v.hasRole {
			return false
		}
		targets = v.targets(runs, o.Supervisor)
		return len(v.busy(runs, targets, o)) > 0
	})
	if err != nil {
		return out, err
	}
	if !v.hasRole || v.role.Kind == "" && o.Supervisor {
		if o.Supervisor {
			return out, fail.Usagef("workflow %s is in state %s, which has no sub-supervisor", w.ID, v.state)
		}
		out.add("NEXT", "phase")
		return out, nil
	}
	if busy {
		ids := v.busy(runs, targets, o)
		out.Warnings = append(out.Warnings, fmt.Sprintf("workflow %s, %s: still at work after %s: %s; checking again", w.ID, v.state, o.Waiting.For, strings.Join(ids, ", ")))
		out.add("RUNNING", len(ids))
		out.add("NEXT", "verify")
		return out, nil
	}
	recs, problems := check(v, runs, targets)
	// A sub-supervisor reports failed workers in its signal; the command
	// stops on them, with its aggregate left for the run that has them all.
	how := conclude
	switch {
	case o.Supervisor && len(problems) > 0:
		how = partial
	case o.Supervisor:
		how = supervise
	case len(problems) > 0:
		how = recordOnly
	}
	res, err := settle(v, changed(v, recs), how)
	if err != nil {
		return out, err
	}
	if how == recordOnly {
		if err := sm.Fail(w, problems[0].Error()); err != nil {
			return out, err
		}
		return out, fmt.Errorf("%w; run /flowstate:workflow-resume to re-run only the workers that did not deliver", errors.Join(problems...))
	}
	out.Warnings = append(out.Warnings, res.warnings...)
	switch {
	case res.left > 0 && len(problems) == 0:
		next := "phase"
		if o.Supervisor {
			next = "workers"
		}
		out.add("NEXT", next)
		return out, nil
	case o.Supervisor:
		out.Signal = res.signal
		return out, nil
	}
	if v.state == "test" {
		out.add("TESTS_FAILED", res.testsFailed)
	}
	out.add("NEXT", "phase")
	return out, nil
}

// look reads the workflow and what the hooks recorded of its agents.
func look(w *store.Workflow) (*view, agentrun.Runs, error) {
	v, err := load(w)
	if err != nil {
		return nil, agentrun.Runs{}, err
	}
	runs, err := agentRuns(w, v.session)
	return v, runs, err
}

// agentRuns folds what the hooks recorded of the session's agents in the
// workflow's current state.
func agentRuns(w *store.Workflow, session string) (agentrun.Runs, error) {
	data, err := fsx.ReadRegular(w.EventsPath(), limit.Max)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return agentrun.Runs{}, fmt.Errorf("workflow %s: read events: %w", w.ID, err)
	}
	return agentrun.Fold(agentrun.Parse(data), session), nil
}

// targets are the workers a verify checks: those the last plan handed out
// (every worker of the state when a sub-supervisor had them), and any
// other an agent was launched for, that are not recorded completed yet.
// Without a recorded plan (a checkpoint from before plans were recorded),
// the unfinished workers of the first batch.
func (v *view) targets(runs agentrun.Runs, inSupervisor bool) []phase.Worker {
	plan := v.planned(inSupervisor)
	if !plan.known {
		batch, _ := phase.Pending(v.workers, v.done, v.sequential)
		return batch
	}
	var out []phase.Worker
	for _, wk := range v.workers {
		if v.done(wk.ID) {
			continue
		}
		launched, _ := runs.Worker(wk.ID, v.w.P.Now(), time.Hour)
		if plan.Supervised || plan.has(wk.ID) || launched != agentrun.NotLaunched {
			out = append(out, wk)
		}
	}
	return out
}

// busy lists what a verify must wait for: target workers whose agent is
// at work, and, when no target is attributed but one has not delivered,
// agents of the state's kinds at work (a model that rewrote a prompt
// leaves its agent unattributed). A sub-supervisor does not wait for
// itself.
func (v *view) busy(runs agentrun.Runs, targets []phase.Worker, o Options) []string {
	now, stuck := v.w.P.Now(), o.Waiting.stuckAfter()
	var ids []string
	undelivered := false
	for _, wk := range targets {
		switch st, _ := runs.Worker(wk.ID, now, stuck); {
		case st == agentrun.Running:
			ids = append(ids, wk.ID)
		case !delivered(wk):
			undelivered = true
		}
	}
	if len(ids) > 0 || !undelivered {
		return ids
	}
	// Agents launched moments ago may not be on record yet: the hooks run
	// beside them, not before the next block.
	if plan := v.planned(o.Supervisor); runs.Empty() && plan.known && now.Sub(plan.At) < hookGrace {
		return []string{"agents launched " + now.Sub(plan.At).Round(time.Millisecond).String() + " ago"}
	}
	types := []string{v.role.Agent}
	if !o.Supervisor {
		types = append(types, v.role.Supervisor)
	}
	if runs.AnyRunning(now, stuck, types...) {
		return []string{v.role.Agent + " agents of " + v.state}
	}
	return nil
}

// hookGrace is how long after a plan a verify that has no agent on
// record yet waits for the hooks to record one.
const hookGrace = 3 * time.Second

// delivered reports whether a worker's artifact is there (valid or not:
// check decides that).
func delivered(wk phase.Worker) bool {
	_, err := os.Lstat(wk.Output)
	return err == nil
}

// check reads each worker's artifact and returns the record of every
// worker, completed or failed, and one error per worker that did not
// deliver; each names the file.
func check(v *view, runs agentrun.Runs, batch []phase.Worker) ([]supervisor.Record, []error) {
	var problems []error
	recs := make([]supervisor.Record, len(batch))
	for i, wk := range batch {
		var checked phase.Checked
		data, err := fsx.ReadRegular(wk.Output, limit.Max)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fail.Usagef("%s %s wrote no %s at %s%s", v.role.Agent, wk.ID, v.role.Artifact, wk.Output, notLaunched(runs, v, wk))
		case err != nil:
			err = fmt.Errorf("%s %s: %w", v.role.Agent, wk.ID, err)
		default:
			if checked, err = phase.Check(v.role, data); err != nil {
				err = fmt.Errorf("%s %s: %s is not a valid %s: %w", v.role.Agent, wk.ID, wk.Output, v.role.Artifact, err)
			}
		}
		if err != nil {
			problems = append(problems, err)
		}
		recs[i] = phase.Record(v.role, wk, checked, err)
		recs[i].DurationMs = runs.Duration(wk.ID).Milliseconds()
	}
	return recs, problems
}

// notLaunched explains a missing artifact whose worker no Agent call was
// seen for, when the hooks did see the state's other workers launched.
func notLaunched(runs agentrun.Runs, v *view, wk phase.Worker) string {
	now := v.w.P.Now()
	if st, _ := runs.Worker(wk.ID, now, time.Hour); st != agentrun.NotLaunched {
		return ""
	}
	for _, other := range v.workers {
		if st, _ := runs.Worker(other.ID, now, time.Hour); st != agentrun.NotLaunched {
			return " (no Agent call was made for it)"
		}
	}
	return ""
}

// settled is what recording a batch came to.
type settled struct {
	left        int // workers of the state not recorded completed
	signal      string
	warnings    []string
	testsFailed int64
}

// How settle ends a batch.
type settleMode int

const (
	// conclude: once every worker of the state is recorded completed,
	// aggregate them and, for a test run, act on failing tests.
	conclude settleMode = iota
	// supervise, in a sub-supervisor: aggregate once every worker is
	// recorded.
	supervise
	// partial, in a sub-supervisor whose workers did not all deliver:
	// aggregate what did; the signal reports the failures and the command
	// stops on them.
	partial
	// recordOnly records the batch and nothing more: the command stops.
	recordOnly
)

// settle records recs, workers of v's state that were checked, in one
// locked write with the state's artifacts and, as how says, their
// aggregate; a finished test run with failing tests then spends a retry,
// which sends the workflow to debug.
func settle(v *view, recs []supervisor.Record, how settleMode) (settled, error) {
	var res settled
	// The view is brought up to date in memory rather than loaded again:
	// what follows reads only the current state's records.
	for _, rec := range recs {
		v.records[v.role.Key][rec.WorkerID] = rec
	}
	_, res.left = phase.Pending(v.workers, v.done, false)
	complete := how == conclude && res.left == 0
	var agg []byte
	var aggErr error
	if complete || how == supervise && res.left == 0 || how == partial {
		res.signal, agg, res.warnings, aggErr = aggregate(v)
	}
	if err := record(v, recs, agg); err != nil {
		return res, err
	}
	if aggErr != nil || !complete || v.state != "test" {
		return res, aggErr
	}
	failed, fs := v.testResults(v.facts)
	res.testsFailed = failed
	if failed > 0 && !v.facts.Loop.OwesDebug() {
		if err := sm.Fail(v.w, phase.FailureLine(failed, fs)); err != nil {
			return res, err
		}
		if _, err := sm.Retry(v.w, sm.DefaultMaxRetries); err != nil {
			return res, err
		}
	}
	return res, nil
}

// changed leaves out the records that are stored already as they are: a
// failing verify run again records nothing new.
func changed(v *view, recs []supervisor.Record) []supervisor.Record {
	var out []supervisor.Record
	for _, rec := range recs {
		if old, ok := v.records[v.role.Key][rec.WorkerID]; !ok || old.Status != rec.Status || old.Error != rec.Error || old.OutputPath != rec.OutputPath {
			out = append(out, rec)
		}
	}
	return out
}

// record stores the batch's records, the state's artifacts in phase_data
// and, when the state's workers are all recorded, their
// aggregated_metadata (agg; nil for none), in one locked write.
func record(v *view, recs []supervisor.Record, agg []byte) error {
	if len(recs) == 0 && agg == nil {
		return nil
	}
	path := workers.Path(v.role.Key)
	return v.w.Update(func(tx *store.Tx) error {
		if err := workers.UpsertTx(tx, v.role.Key, recs...); err != nil {
			return fmt.Errorf("workflow %s: %w", v.w.ID, err)
		}
		for _, rec := range recs {
			tx.Event("worker", map[string]any{"state": v.state, "worker_id": rec.WorkerID, "status": rec.Status})
		}
		var artifacts []string
		for _, rec := range gjson.GetBytes(tx.Checkpoint, path).Array() {
			if rec.Get("status").String() == supervisor.Completed {
				artifacts = append(artifacts, rec.Get("output_path").String())
			}
		}
		if err := set(tx, "phase_data."+v.state+".artifacts", artifacts); err != nil {
			return err
		}
		if agg == nil {
			return nil
		}
		return setRaw(tx, "supervisor_state."+v.role.Key+".aggregated_metadata", agg)
	})
}

// aggregate returns the aggregated_metadata of the state's workers (nil
// when the state has none or no worker delivered), the supervisor's
// completion signal line and the warnings of reading the workers'
// outputs. It aggregates as `flowstate aggregate` does (capped reads,
// modified files counted from the project). All workers failed is not an
// error here: the signal says SUPERVISOR_FAILED and the orchestrator's
// phase-verify then stops on the missing files.
func aggregate(v *view) (signal string, agg []byte, warnings []string, err error) {
	if v.role.Kind == "" {
		return "", nil, nil, nil
	}
	var recs []supervisor.Record
	for _, wk := range v.workers {
		rec, ok := v.records[v.role.Key][wk.ID]
		if !ok {
			rec = supervisor.Record{WorkerID: wk.ID, Status: supervisor.Pending, OutputPath: wk.Output}
		}
		recs = append(recs, rec)
	}
	agg, warnings, err = workers.Aggregate(v.role.Kind, recs, workers.Dirs{Cwd: v.w.P.Dir, Project: v.w.P.Dir})
	var failed *supervisor.FailedError
	if errors.As(err, &failed) {
		return failed.Error(), nil, warnings, nil
	}
	if err != nil {
		return "", nil, warnings, err
	}
	return supervisor.SupervisorComplete + ": " + string(agg), agg, warnings, nil
}
