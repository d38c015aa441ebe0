package orchestrate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// advance moves the workflow past every finished state and returns a view
// of the first state with work left, or, with done, of the finished
// workflow's last state.
func advance(w *store.Workflow) (v *view, done bool, err error) {
	for steps := 0; ; steps++ {
		if v, err = load(w); err != nil || !v.complete() {
			return v, false, err
		}
		// A workflow passes each state once on its way, and a state of a
		// check-and-recover loop at most twice (back from its recovery);
		// more than that is a definition whose loop cannot end.
		if limit := 2*len(v.m.States()) + 2; steps >= limit {
			return nil, false, fail.Invalidf("workflow %s: its definition %q went through %d states in one step and is at %s again with nothing to do; its check-and-recover loop cannot end (flowstate graph --machine checks a definition)", w.ID, v.m.Name, steps, v.state)
		}
		next, err := sm.Next(w, v.role.FailWhen != "" && v.facts.Loop.OwesRecovery())
		if err != nil || next == "" {
			return v, err == nil, err
		}
		if _, err := sm.Transition(w, next, v.state+" finished"); err != nil {
			return nil, false, err
		}
	}
}

// Plan returns the next batch of workers of the workflow: the agent, its
// artifact, the context to read and each worker's topic and output path,
// after settling what an earlier plan handed out (reconcile) and advancing
// past finished states (NEXT=done once there are none). A state that its
// sub-supervisor coordinates gets the supervisor to launch instead
// (NEXT=supervised), and no worker values. A worker whose agent is still
// at work is not handed out again; when nothing is left to hand out but
// agents are at work, NEXT=verify waits for them. In a sub-supervisor
// (o.Supervisor) it plans the current state only and never delegates.
//
// Run again, it answers as it did: it is where a model that lost its place
// comes back. A workflow a person holds, or that reaches a gate, ends the
// command (see guarded).
func Plan(w *store.Workflow, o Options) (Output, error) { return guarded(w, o, false, planStep) }

func planStep(w *store.Workflow, o Options) (Output, error) {
	v, done, notes, err := current(w, o)
	switch {
	case err != nil:
		return Output{}, err
	case done:
		out, err := finish(v, o)
		out.Warnings = append(notes, out.Warnings...)
		return out, err
	case !v.hasRole:
		return Output{}, fail.Usagef("workflow %s is in state %s, which has no agents to run", w.ID, v.state)
	}
	runs, err := agentRuns(w, v.session, o)
	if err != nil {
		return Output{}, err
	}
	pending, remaining := Pending(v.workers, v.done, v.sequential)
	batch, atWork := v.idle(pending, runs, o)
	var out Output
	if Supervise(v.role, v.workers, v.sequential) && !o.Supervisor && !o.Workflow && remaining > 0 {
		out, err = v.delegate(atWork || runs.AnyRunning(w.P.Now(), o.Waiting.stuckAfter(), v.role.SupervisorAgent()))
	} else {
		out, err = v.handOut(batch, o)
	}
	out.Warnings = append(notes, out.Warnings...)
	return out, err
}

// current is the view of the state a plan works on: in a sub-supervisor
// the current state as it is; for the command, after recording what an
// earlier plan's agents delivered and moving past finished states (done
// when none is left). Either way the branches of an isolated state's
// workers are merged first (integrate), so that no wave is handed out
// before the one it builds on is in the working tree; notes are what
// that said. A workflow the phase loop cannot run is refused (runnable)
// from the first view read, before anything is written.
func current(w *store.Workflow, o Options) (v *view, done bool, notes []Warning, err error) {
	if o.Supervisor {
		res, err := integrate(w)
		if err == nil {
			if v, err = load(w); err == nil {
				err = v.runnable()
			}
		}
		if err != nil {
			return nil, false, nil, err
		}
		return v, false, res.warnings, nil
	}
	if err := reconcile(w, o); err != nil {
		return nil, false, nil, err
	}
	res, err := integrate(w)
	if err != nil {
		return nil, false, nil, err
	}
	v, done, err = advance(w)
	return v, done, res.warnings, err
}

// idle splits the pending workers into those to hand out and whether any
// is still at work: a worker whose agent runs is not handed out again.
func (v *view) idle(pending []Worker, runs agentrun.Runs, o Options) (batch []Worker, atWork bool) {
	now, stuck := v.w.P.Now(), o.Waiting.stuckAfter()
	for _, wk := range pending {
		if st, _ := runs.Worker(wk.ID, now, stuck); st == agentrun.Running {
			atWork = true
			continue
		}
		batch = append(batch, wk)
	}
	return batch, atWork
}

// delegate hands the state to its sub-supervisor (NEXT=supervised), or,
// while agents of the state are at work, waits for them (NEXT=verify).
// The supervisor's task block needs these and no worker values: a model
// given both could launch the workers and their supervisor.
func (v *view) delegate(atWork bool) (Output, error) {
	var out Output
	out.add("STATE", v.state)
	if atWork {
		out.add("NEXT", "verify")
	} else {
		out.add("SUPERVISOR", v.role.SupervisorAgent())
		out.add("NEXT", "supervised")
	}
	return out, recordPlan(v, "hierarchical", plan{Supervised: true}, false)
}

// handOut prints the batch for the task block: what it uses, and no
// more (the request and the earlier artifacts are in the brief every
// worker reads; paths are relative to the spec directory, printed once).
// An empty batch, its agents at work, waits for them (NEXT=verify).
//
// An isolated batch (isolate) is counted in ISOLATED_COUNT, for the
// ## work section's task block that launches each worker in a worktree
// of its own, and WORKER_COUNT is 0 (the other's count: each batch is
// launched by one of them); its SPEC_DIR is from the project's root,
// which the worker's worktree mirrors (its artifact is written there,
// and brought into the project), and BRIEF is the brief's path in the
// project, which no worktree holds.
func (v *view) handOut(batch []Worker, o Options) (Output, error) {
	var out Output
	isolated := false
	if len(batch) > 0 {
		var err error
		if isolated, err = v.isolate(&out); err != nil {
			return Output{}, err
		}
	}
	coordination := "flat"
	if o.Workflow {
		coordination = scripted
		out.handed = &handedOut{state: v.state, agent: v.role.Agent, workers: batch, isolated: isolated}
	}
	out.add("AGENT", v.role.Agent)
	if isolated {
		out.add("SPEC_DIR", fromSpec(v))
		out.add("BRIEF", BriefPath(v.facts.SpecDir, v.role))
	} else {
		out.add("SPEC_DIR", o.show(v.w.P, v.facts.SpecDir))
	}
	if isolated {
		out.add("WORKER_COUNT", 0)
		out.add("ISOLATED_COUNT", len(batch))
	} else {
		out.add("WORKER_COUNT", len(batch))
		out.add("ISOLATED_COUNT", 0)
	}
	ids := make([]string, len(batch))
	for i, wk := range batch {
		rel, _ := filepath.Rel(v.facts.SpecDir, wk.Output)
		out.add(numbered("TOPIC", i), wk.Label)
		out.add(numbered("OUTPUT", i), rel)
		ids[i] = wk.ID
	}
	if len(batch) == 0 {
		out.add("NEXT", "verify")
		return out, recordPlan(v, coordination, plan{Workers: ids}, o.Supervisor)
	}
	out.add("NEXT", "work")
	if err := recordPlan(v, coordination, plan{Workers: ids, Isolated: isolated}, o.Supervisor); err != nil {
		return out, err
	}
	// The spec directories and the brief come after the plan's record: a
	// plan that fails to record writes neither, and one whose brief fails
	// is planned again (the same plan, written once) by the next run.
	for _, wk := range batch {
		if err := ensureSpecDir(v.w.P, filepath.Dir(wk.Output)); err != nil {
			return out, err
		}
	}
	return out, writeBrief(v)
}

// scripted is the coordination of a state whose waves a Claude Code
// workflow script runs (the workflow engine): flat or not, no
// sub-supervisor is launched.
const scripted = "workflow"

// writeBrief writes the brief the state's workers read first.
func writeBrief(v *view) error {
	path := BriefPath(v.facts.SpecDir, v.role)
	if err := ensureSpecDir(v.w.P, filepath.Dir(path)); err != nil {
		return err
	}
	brief := Brief(v.role, v.facts, v.context())
	if old, err := fsx.ReadFile(path, limit.Max); err == nil && string(old) == brief {
		return nil
	}
	return fsx.WriteFile(path, []byte(brief))
}

// recordPlan keeps what a plan handed out, and how the state is
// coordinated, in one write; a plan that says what the last one said
// writes nothing.
func recordPlan(v *view, coordination string, pl plan, inSupervisor bool) error {
	return v.w.Update(func(tx *store.Tx) error {
		if path := checkpoint.PhaseData(v.state, coordinationKey); !inSupervisor && gjson.GetBytes(tx.Checkpoint, path).String() != coordination {
			if err := set(tx, path, coordination); err != nil {
				return err
			}
		}
		if !inSupervisor {
			if err := recordSupervisor(tx, v, coordination); err != nil {
				return err
			}
		}
		if pl.Workers == nil {
			pl.Workers = []string{}
		}
		pl.At = tx.Now.UTC().Truncate(time.Millisecond)
		path := checkpoint.PhaseData(v.state, planKey(inSupervisor))
		if old := gjson.GetBytes(tx.Checkpoint, path); old.IsObject() {
			var was plan
			if json.Unmarshal([]byte(old.Raw), &was) == nil && !was.Verified && slices.Equal(was.Workers, pl.Workers) && was.Supervised == pl.Supervised && was.Isolated == pl.Isolated {
				return nil
			}
		}
		return set(tx, path, pl)
	})
}

// recordSupervisor writes who coordinates the state's workers, as the
// original design's supervisor state has it (docs/supervisors.md): the
// sub-supervisor, or for a flat phase the command itself; an id naming it
// and when it began; and how many workers the state has. Once per state
// and coordination.
func recordSupervisor(tx *store.Tx, v *view, coordination string) error {
	name := gjson.GetBytes(tx.Checkpoint, checkpoint.PathCommand).String()
	if coordination == "hierarchical" {
		name = v.role.SupervisorAgent()
	}
	if gjson.GetBytes(tx.Checkpoint, checkpoint.SupervisorState(v.role.Key(), "supervisor_name")).String() == name {
		return nil
	}
	id := strings.ReplaceAll(name, "-", "_") + "_" + tx.Now.UTC().Format("20060102_150405")
	for _, f := range []struct {
		key   string
		value any
	}{{"supervisor_id", id}, {"supervisor_name", name}, {"worker_count", len(v.workers)}} {
		if err := set(tx, checkpoint.SupervisorState(v.role.Key(), f.key), f.value); err != nil {
			return err
		}
	}
	return nil
}

// reconcile records the workers an earlier plan handed out whose agents
// are done and whose artifacts are valid, as the verify after them would
// have: a model that lost its place (it stopped early, was compacted, ran
// a block twice) comes back through phase-plan, and work already done
// must count rather than be done again. A missing or invalid artifact is
// left to be planned again; nothing fails here.
func reconcile(w *store.Workflow, o Options) error {
	v, runs, err := look(w, o)
	if err != nil {
		return err
	}
	if err := v.runnable(); err != nil || !v.hasRole || !v.planned(false).known {
		return err
	}
	now, stuck := w.P.Now(), o.Waiting.stuckAfter()
	targets := v.targets(runs, false)
	if v.planned(false).Isolated {
		if err := v.collect(targets); err != nil {
			return err
		}
	}
	var ready []Worker
	for _, wk := range targets {
		if st, _ := runs.Worker(wk.ID, now, stuck); st != agentrun.Running && delivered(wk) {
			ready = append(ready, wk)
		}
	}
	recs, _, err := check(v, runs, ready)
	if err != nil {
		return err
	}
	var good []supervisor.Record
	for _, rec := range recs {
		if rec.Status == checkpoint.WorkerCompleted {
			good = append(good, rec)
		}
	}
	if len(good) == 0 {
		return nil
	}
	_, err = settle(v, runs, good, conclude, "")
	return err
}

// runnable refuses a workflow the phase loop cannot run: one started on
// the low-level API (sm-init --agents) runs its command's own steps, and
// one whose definition gives no state any work would be walked to its end
// with nothing done.
func (v *view) runnable() error {
	lowLevel := v.cv.Agents != nil
	if len(v.m.Work) > 0 && !lowLevel {
		return nil
	}
	w, cmd := v.w, v.cv.Command
	why := fmt.Sprintf("its machine %q gives no state any work", v.m.Name)
	if lowLevel {
		why = "it runs the steps of its own command (sm-init --agents)"
	}
	return fail.Refusedf("workflow %s (/%s): %s, so flowstate cannot plan its agents; continue it with /%s, whose steps find the workflow again (docs/writing-an-orchestrator.md)",
		w.ID, cmd, why, cmd)
}

// numbered is the key of the i-th (0-based) item of a list: TOPIC_1, ...
func numbered(key string, i int) string { return key + "_" + strconv.Itoa(i+1) }

// finish marks the finished workflow of view v complete and says where
// its artifacts are, with NEXT=done (flowstate status lists them).
func finish(v *view, o Options) (Output, error) {
	var out Output
	if err := sm.Finish(v.w, checkpoint.Complete); err != nil {
		return out, err
	}
	doc, err := v.w.ReadCheckpoint()
	if err != nil {
		return out, err
	}
	var accepted []string
	gjson.GetBytes(doc, checkpoint.PathPhaseData).ForEach(func(state, data gjson.Result) bool {
		for _, id := range data.Get(checkpoint.PhasePartialFailures).Array() {
			accepted = append(accepted, id.String()+" ("+state.String()+")")
		}
		return true
	})
	if len(accepted) > 0 {
		out.warn(finishedWithout, "workflow %s finished without workers %s, whose failure it went on without; %s runs them again",
			v.w.ID, strings.Join(accepted, ", "), RetryHint(v.w))
	}
	out.add("WORKFLOW_ID", v.w.ID)
	out.add("FINAL_STATE", v.state)
	out.add("ARTIFACTS_DIR", o.show(v.w.P, v.facts.SpecDir))
	out.add("ARTIFACT_COUNT", len(artifacts(v.m, outputs(v.m, v.records))))
	out.add("NEXT", "done")
	return out, nil
}

// artifacts flattens the outputs per state in the order of m's states.
func artifacts(m *machine.Machine, outputs map[string][]string) []string {
	var all []string
	for _, role := range Roles(m) {
		all = append(all, outputs[role.State]...)
	}
	return all
}
