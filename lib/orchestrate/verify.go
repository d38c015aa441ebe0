package orchestrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/workers"
)

// Verify checks and records the artifacts of the batch Plan returned.
// A worker that did not deliver fails the workflow with an error naming
// the file; failing tests spend one retry and lead to debug. inSupervisor
// never stops: it answers NEXT=workers until the state's workers are all
// recorded, then returns the sub-supervisor's signal.
func Verify(w *store.Workflow, inSupervisor bool) (Output, error) {
	var out Output
	v, err := load(w)
	if err != nil {
		return out, err
	}
	if !v.hasRole || v.role.Kind == "" && inSupervisor {
		if inSupervisor {
			return out, fail.Usagef("workflow %s is in state %s, which has no sub-supervisor", w.ID, v.state)
		}
		out.add("NEXT", "phase")
		return out, nil
	}
	batch, remaining := phase.Pending(v.workers, v.done, v.sequential)
	recs, problems := check(v, batch)
	left := remaining - len(batch) + len(problems)
	stop := len(problems) > 0 && !inSupervisor
	waiting := left > 0 && len(problems) == 0
	// The view is brought up to date in memory rather than loaded again:
	// what follows reads only the current state's records.
	for _, rec := range recs {
		v.records[v.role.Key][rec.WorkerID] = rec
	}
	var signal string
	var agg []byte
	var aggErr error
	if !stop && !waiting {
		var warnings []string
		signal, agg, warnings, aggErr = aggregate(v)
		out.Warnings = append(out.Warnings, warnings...)
	}
	if err := record(v, recs, agg); err != nil {
		return out, err
	}
	if aggErr != nil {
		return out, aggErr
	}
	if stop {
		if err := sm.Fail(w, problems[0].Error()); err != nil {
			return out, err
		}
		return out, fmt.Errorf("%w; run /flowstate:workflow-resume to re-run only the workers that did not deliver", errors.Join(problems...))
	}
	if waiting {
		next := "phase"
		if inSupervisor {
			next = "workers"
		}
		out.add("NEXT", next)
		return out, nil
	}
	if inSupervisor {
		out.Signal = signal
		return out, nil
	}
	if v.state == "test" {
		failed, fs := v.testResults(v.facts)
		if failed > 0 && !v.facts.Loop.OwesDebug() {
			if err := sm.Fail(w, phase.FailureLine(failed, fs)); err != nil {
				return out, err
			}
			if _, err := sm.Retry(w, sm.DefaultMaxRetries); err != nil {
				return out, err
			}
		}
		out.add("TESTS_FAILED", failed)
	}
	out.add("NEXT", "phase")
	return out, nil
}

// check reads each worker's artifact and returns the record of every
// worker, completed or failed, and one error per worker that did not
// deliver; each names the file.
func check(v *view, batch []phase.Worker) ([]supervisor.Record, []error) {
	var problems []error
	recs := make([]supervisor.Record, len(batch))
	for i, wk := range batch {
		var checked phase.Checked
		data, err := os.ReadFile(wk.Output)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fail.Usagef("%s %s wrote no %s at %s", v.role.Agent, wk.ID, v.role.Artifact, wk.Output)
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
	}
	return recs, problems
}

// record stores the batch's records, the state's artifacts in phase_data
// and, when the state's workers are all recorded, their
// aggregated_metadata (agg; nil for none), in one locked write.
func record(v *view, recs []supervisor.Record, agg []byte) error {
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
