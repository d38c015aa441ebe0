package orchestrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// Options steer a phase step.
type Options struct {
	Supervisor bool // the step runs inside a sub-supervisor agent
	Waiting    Waiting
	// Cwd is the bash block's working directory: paths under it are
	// printed relative to it, which the agents started from the same
	// directory resolve alike.
	Cwd string
	// Agent is the id of the agent running the step (AgentEnv), when the
	// hooks said: a sub-supervisor's steps act only in the state it
	// started in.
	Agent string
	// Limits are the project's spend limit and prices: a step holds a
	// workflow whose recorded spend reached its limit (sm.CheckBudget).
	Limits sm.Limits
	// Workflow: the step runs for a Claude Code workflow script (the
	// workflow engine), which asks for it only between waves, once every
	// agent it started has ended, and runs every wave itself: no agent
	// of the session is at work (agentrun.Runs.Settle), nothing is
	// waited for, and no state goes to a sub-supervisor.
	Workflow bool
}

// AgentEnv names the environment variable through which the PreToolUse
// hook tells a sub-supervisor's steps the agent's id.
const AgentEnv = "FLOWSTATE_AGENT_ID"

// show is how a step prints path: relative to o.Cwd when it is the
// project directory (where Claude Code starts agents), else absolute.
func (o Options) show(p *store.Project, path string) string {
	if o.Cwd != p.Dir {
		return path
	}
	if rel, err := filepath.Rel(p.Dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// Verify checks and records the artifacts of the workers the last plan
// handed out, and of any other worker of the state an agent was launched
// for. While one of them is still at work (the model launched it in the
// background, or moved on early) it waits, as long as o.Waiting allows,
// then answers NEXT=verify to be run again. A worker that did not deliver
// fails the workflow with an error naming the file, unless enough others
// did for its failure to be accepted (partialOK); failing tests spend
// one retry and lead to debug. In a sub-supervisor it never stops: it
// answers NEXT=workers until the state's workers are all recorded, then
// returns the sub-supervisor's signal.
//
// Run again, it answers as it did: what it recorded is not checked twice.
// A workflow a person holds ends the command (see guarded); what its
// agents deliver meanwhile is recorded by the next phase-plan.
func Verify(w *store.Workflow, o Options) (Output, error) { return guarded(w, o, true, verifyStep) }

func verifyStep(w *store.Workflow, o Options) (Output, error) {
	c, err := watch(w, o)
	switch v := c.v; {
	case err != nil:
		return Output{}, err
	case o.Supervisor && (!v.hasRole || v.role.Supervisor == nil):
		return Output{}, fail.Usagef("workflow %s is in state %s, which has no sub-supervisor", w.ID, v.state)
	case !v.hasRole, c.handout == unstarted:
		// No agents here, or nothing run since the plan was printed (the
		// model ran this block again rather than the task block): plan.
		return Plan(w, o)
	case c.busy:
		return c.stillAtWork(o), nil
	}
	v := c.v
	var started Output
	if v.planned(o.Supervisor).Isolated {
		if err := v.collect(c.targets); err != nil {
			return Output{}, err
		}
		c.targets = v.unstarted(c.runs, c.targets, v.planned(o.Supervisor), &started)
	}
	recs, problems, err := check(v, c.runs, c.targets)
	if err != nil {
		return Output{}, err
	}
	how := modeOf(o.Supervisor, len(problems) > 0, v.partialOK(recs))
	res, err := settle(v, c.runs, changed(v, recs), how, planKey(o.Supervisor))
	if err != nil {
		return Output{}, err
	}
	// The wave's branches are merged before anything else happens, also
	// when the command stops on a failed worker: the others' work lands.
	merged, err := integrate(w)
	if err != nil {
		return Output{}, err
	}
	out := Output{Warnings: slices.Concat(started.Warnings, res.warnings, merged.warnings)}
	switch {
	case how == recordOnly:
		if err := sm.Fail(w, problems[0].Error()); err != nil {
			return out, err
		}
		return out, fmt.Errorf("%w; run %s to re-run only the workers that did not deliver", errors.Join(problems...), ResumeHint(w))
	case how == acceptPartial:
		// Said once, here: not again for each worker by the aggregation.
		out.Warnings = without(out.Warnings, workerFailed)
		out.warn(partialAccepted, "partial failure in %s of workflow %s: %d of %d workers did not deliver (%v); going on with the others. %s re-runs them",
			v.state, w.ID, len(problems), len(v.workers), errors.Join(problems...), RetryHint(w))
	case o.Supervisor && !merged.reopened && (res.left == 0 || len(problems) > 0):
		out.Signal = res.signal
		return out, nil
	}
	// Verified: the same step plans what comes next, so that a phase costs
	// the model one bash block and one task block.
	next, err := Plan(w, o)
	if has(next.Warnings, finishedWithout) {
		// The finished workflow names every worker it went on without.
		out.Warnings = without(out.Warnings, partialAccepted)
	}
	next.Warnings = append(out.Warnings, next.Warnings...)
	return next, err
}

// modeOf is how a verify settles its batch: a sub-supervisor reports
// failed workers in its signal (the command stops on them, its aggregate
// left for the run that has them all); the command goes on without
// failed workers when enough others delivered, else records them and
// stops.
func modeOf(inSupervisor, failed, partialOK bool) settleMode {
	switch {
	case inSupervisor && failed:
		return partial
	case inSupervisor:
		return supervise
	case failed && partialOK:
		return acceptPartial
	case failed:
		return recordOnly
	}
	return conclude
}

// checked is what a verify found, having waited for the agents at work:
// the view, the agents' runs, the batch to check and whether it was
// started.
type checked struct {
	v       *view
	runs    agentrun.Runs
	targets []Worker
	handout handout
	busy    bool // agents are still at work after the wait
}

// watch reads the workflow until no agent of the batch to check is at
// work, or o.Waiting is over.
func watch(w *store.Workflow, o Options) (c checked, err error) {
	c.busy = o.Waiting.wait(func() bool {
		if c.v, c.runs, err = look(w, o); err != nil || !c.v.hasRole {
			return false
		}
		if c.handout = c.v.handout(c.runs, o); c.handout != begun {
			return c.handout == unrecorded
		}
		c.targets = c.v.targets(c.runs, o.Supervisor)
		return len(c.v.busy(c.runs, c.targets, o)) > 0
	})
	return c, err
}

// stillAtWork answers a verify whose agents are still at work: run it
// again (NEXT=verify).
func (c checked) stillAtWork(o Options) Output {
	var out Output
	ids := []string{"agents launched moments ago, not on record yet"}
	if c.handout == begun {
		ids = c.v.busy(c.runs, c.targets, o)
	}
	out.warn(note, "workflow %s, %s: still at work after %s: %s; checking again", c.v.w.ID, c.v.state, o.Waiting.For, strings.Join(ids, ", "))
	out.add("RUNNING", len(ids))
	out.add("NEXT", "verify")
	return out
}

// look reads the workflow and what the hooks recorded of its agents.
func look(w *store.Workflow, o Options) (*view, agentrun.Runs, error) {
	v, err := load(w)
	if err != nil {
		return nil, agentrun.Runs{}, err
	}
	runs, err := agentRuns(w, v.session, o)
	return v, runs, err
}

// agentRuns folds what the hooks recorded of the session's agents in the
// workflow's current state; for a workflow engine's step, none of them
// is at work.
func agentRuns(w *store.Workflow, session string, o Options) (agentrun.Runs, error) {
	data, err := w.ReadEvents()
	if err != nil {
		return agentrun.Runs{}, fmt.Errorf("workflow %s: read events: %w", w.ID, err)
	}
	runs := agentrun.Fold(agentrun.Parse(data), session)
	if o.Workflow {
		runs = runs.Settle()
	}
	return runs, nil
}

// targets are the workers a verify checks: those the last plan handed out
// (every worker of the state when a sub-supervisor had them), and any
// other an agent was launched for, that are not recorded completed yet.
// Without a recorded plan (a checkpoint from before plans were recorded),
// the unfinished workers of the first batch.
func (v *view) targets(runs agentrun.Runs, inSupervisor bool) []Worker {
	plan := v.planned(inSupervisor)
	if !plan.known {
		batch, _ := Pending(v.workers, v.done, v.sequential)
		return batch
	}
	var out []Worker
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
func (v *view) busy(runs agentrun.Runs, targets []Worker, o Options) []string {
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
	types := []string{v.role.Agent}
	if !o.Supervisor {
		types = append(types, v.role.SupervisorAgent())
	}
	if runs.AnyRunning(now, stuck, types...) {
		return []string{v.role.Agent + " agents of " + v.state}
	}
	return nil
}

// hookGrace is how long after a plan a verify that has no agent on
// record yet waits for the hooks to record one: without PreToolUse, only
// SubagentStart records an agent, beside it rather than before the next
// block.
const hookGrace = 3 * time.Second

// handout is whether the batch the last plan handed out was started.
type handout int

const (
	begun      handout = iota // an agent was launched for it, or an artifact is there: check it
	unstarted                 // the hooks record launches, and none is on record: it was not run
	unrecorded                // nothing on record yet, moments after the plan: wait for the hooks
)

// handout tells whether the batch the last plan handed out was started.
// A verify checks a started batch. Since a verify also plans the next
// batch, a verify run again right after itself finds a batch nobody ran,
// which it hands out again rather than failing. That needs the hooks:
// without any, a batch is taken as started once the grace is over, and
// its missing artifacts fail it, as before.
func (v *view) handout(runs agentrun.Runs, o Options) handout {
	plan := v.planned(o.Supervisor)
	if !plan.known {
		return begun
	}
	now := v.w.P.Now()
	open := 0
	for _, wk := range v.workers {
		if !plan.Supervised && !plan.has(wk.ID) {
			continue
		}
		if v.done(wk.ID) {
			return begun
		}
		open++
		if st, l := runs.Worker(wk.ID, now, time.Hour); st != agentrun.NotLaunched && !l.Launched.Before(plan.At) || delivered(wk) {
			return begun
		}
	}
	switch {
	case open == 0 || runs.Launched(v.role.Agent, plan.At) || plan.Supervised && runs.Launched(v.role.SupervisorAgent(), plan.At):
		return begun
	case runs.Hooks.Launches:
		return unstarted
	case now.Sub(plan.At) < hookGrace:
		return unrecorded
	case runs.Hooks.Lifecycle:
		return unstarted
	}
	return begun
}

// setAside renames an artifact that failed its check to <path>.rejected,
// where the user can still read it, so that the worker run again writes a
// new file: Claude Code's Write tool refuses to replace a file the agent
// has not read. It returns what to add to the failure's message, which
// names the file as shown.
func setAside(path, shown string) string {
	if err := os.Rename(path, path+rejectedSuffix); err != nil {
		return ""
	}
	return "; kept as " + shown + rejectedSuffix
}

// rejectedSuffix marks an artifact set aside by setAside.
const rejectedSuffix = ".rejected"

// delivered reports whether a worker's artifact is there (valid or not:
// check decides that).
func delivered(wk Worker) bool {
	_, err := os.Lstat(wk.Output)
	return err == nil
}

// check reads each worker's artifact and returns the record of every
// worker, completed or failed, and one error per worker that did not
// deliver; each names the file. A link on the way to an artifact fails
// the whole check (err) before anything is read or set aside.
func check(v *view, runs agentrun.Runs, batch []Worker) (recs []supervisor.Record, problems []error, err error) {
	for _, wk := range batch {
		if err := refuseLinkedSpecDir(v.w.P, filepath.Dir(wk.Output)); err != nil {
			return nil, nil, err
		}
	}
	recs = make([]supervisor.Record, len(batch))
	for i, wk := range batch {
		var checked Checked
		// The messages, kept in the records and read by later workers,
		// name the file from the project's root.
		shown := fromProject(v.w, wk.Output)
		data, err := fsx.ReadFile(wk.Output, limit.Max)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fail.Usagef("%s %s wrote no %s at %s%s", v.role.Agent, wk.ID, v.role.ArtifactName(), shown, notLaunched(runs, v, wk))
		case err != nil:
			err = fmt.Errorf("%s %s: %w", v.role.Agent, wk.ID, err)
		default:
			if checked, err = CheckArtifact(v.role, data); err != nil {
				err = fmt.Errorf("%s %s: %s is not a valid %s: %w%s", v.role.Agent, wk.ID, shown, v.role.ArtifactName(), err, setAside(wk.Output, shown))
			}
		}
		if err != nil {
			problems = append(problems, err)
		}
		recs[i] = WorkerRecord(v.role, wk, checked, err)
		recs[i].DurationMs = runs.Duration(wk.ID).Milliseconds()
	}
	return recs, problems, nil
}

// notLaunched explains a missing artifact whose worker no Agent call was
// seen for, when the hooks did see the state's other workers launched.
func notLaunched(runs agentrun.Runs, v *view, wk Worker) string {
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
	left     int // workers of the state not recorded completed
	signal   string
	warnings []Warning
	failed   int64 // the state's check: its fail_when number, summed
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
	// acceptPartial records the batch, accepts its failures (at least
	// two workers of the state delivered) and concludes as conclude does.
	acceptPartial
)

// partialOK reports whether the failures among recs, this batch's
// records, can be accepted: the state is one that fans out, every failure
// is in its last wave (no later wave builds on a failed worker, and a
// worker of a later wave that never ran is no failure to accept), every
// other worker delivered, and at least minDelivered of them did;
// min_delivered 0 accepts no failure (every worker must deliver).
func (v *view) partialOK(recs []supervisor.Record) bool {
	if len(v.workers) < 2 || v.role.Delivered(len(v.workers)) == 0 {
		return false
	}
	last := 0
	for _, wk := range v.workers {
		last = max(last, wk.Batch)
	}
	delivered, failed := 0, map[string]bool{}
	for _, rec := range recs {
		if rec.Status == checkpoint.WorkerFailed {
			failed[rec.WorkerID] = true
		}
	}
	for _, wk := range v.workers {
		switch {
		case failed[wk.ID]:
			if wk.Batch != last {
				return false
			}
		case v.done(wk.ID) || slices.ContainsFunc(recs, func(r supervisor.Record) bool { return r.WorkerID == wk.ID }):
			delivered++
		default:
			return false // a later wave has yet to run
		}
	}
	return delivered >= v.role.Delivered(len(v.workers))
}

// settle records recs, workers of v's state that were checked, in one
// locked write with the state's artifacts and, as how says, their
// aggregate; a finished test run with failing tests then spends a retry,
// which sends the workflow to debug.
//
// verified names the plan (planKeys) this settles, marked verified in the
// same write: the next plan is a new handout even when it names the same
// workers. "" for none.
func settle(v *view, runs agentrun.Runs, recs []supervisor.Record, how settleMode, verified string) (settled, error) {
	var res settled
	// The view is brought up to date in memory rather than loaded again:
	// what follows reads only the current state's records.
	for _, rec := range recs {
		v.records[v.role.Key()][rec.WorkerID] = rec
	}
	if how == acceptPartial {
		v.accept(recs)
		how = conclude
	}
	_, res.left = Pending(v.workers, v.done, false)
	complete := how == conclude && res.left == 0
	var agg []byte
	var aggErr error
	if complete || how == supervise && res.left == 0 || how == partial {
		res.signal, agg, res.warnings, aggErr = aggregate(v, runs.Span(workerIDs(v.workers)))
	}
	if err := record(v, recs, agg, verified); err != nil {
		return res, err
	}
	if aggErr != nil || !complete {
		return res, aggErr
	}
	res.failed, aggErr = v.recover()
	return res, aggErr
}

// accept takes the failures among recs, and those of the state recorded
// already (a sub-supervisor's workers, or a verify run again), as
// accepted: the workflow goes on without those workers.
func (v *view) accept(recs []supervisor.Record) {
	for _, rec := range recs {
		if rec.Status == checkpoint.WorkerFailed {
			v.accepted[rec.WorkerID] = true
		}
	}
	for id, rec := range v.records[v.role.Key()] {
		if rec.Status == checkpoint.WorkerFailed && slices.ContainsFunc(v.workers, func(w Worker) bool { return w.ID == id }) {
			v.accepted[id] = true
		}
	}
}

// recover acts on the check of a state whose workers are all recorded:
// when what it counts (fail_when) is above 0 and no recovery is owed yet,
// the state's failure is recorded and a retry spent, which sends the
// workflow to the recovery state. It returns the count.
//
// These are writes of their own after settle's: the records must stay
// whatever happens to the retry (a worker's result is a fact; spending a
// retry is a decision), and each is safe to run again: Fail records the
// same error once, and a retry already spent shows as a recovery owed.
func (v *view) recover() (int64, error) {
	if v.role.FailWhen == "" {
		return 0, nil
	}
	failed, fs := v.failures(v.role, v.facts)
	if failed == 0 || v.facts.Loop.OwesRecovery() {
		return failed, nil
	}
	if err := sm.Fail(v.w, FailureLine(v.role, failed, fs)); err != nil {
		return failed, err
	}
	_, err := sm.Retry(v.w, sm.DefaultMaxRetries)
	return failed, err
}

// changed leaves out the records that are stored already as they are: a
// failing verify run again records nothing new.
func changed(v *view, recs []supervisor.Record) []supervisor.Record {
	var out []supervisor.Record
	for _, rec := range recs {
		if old, ok := v.records[v.role.Key()][rec.WorkerID]; !ok || old.Status != rec.Status || old.Error != rec.Error || old.OutputPath != rec.OutputPath {
			out = append(out, rec)
		}
	}
	return out
}

func workerIDs(ws []Worker) []string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return ids
}

// record stores the batch's records, the state's artifacts in phase_data
// and, when the state's workers are all recorded, their
// aggregated_metadata (agg; nil for none), in one locked write.
func record(v *view, recs []supervisor.Record, agg []byte, verified string) error {
	if len(recs) == 0 && agg == nil && verified == "" {
		return nil
	}
	path := supervisor.WorkersPath(v.role.Key())
	return v.w.Update(func(tx *store.Tx) error {
		if err := supervisor.UpsertTx(tx, v.role.Key(), recs...); err != nil {
			return fmt.Errorf("workflow %s: %w", v.w.ID, err)
		}
		for _, rec := range recs {
			tx.Event("worker", map[string]any{"state": v.state, "worker_id": rec.WorkerID, "status": rec.Status})
			// Where an isolated worker worked, for its branch's merge.
			if tree := v.trees[rec.WorkerID]; tree != "" {
				if err := set(tx, checkpoint.PhaseData(v.state, checkpoint.PhaseWorktrees, rec.WorkerID), tree); err != nil {
					return err
				}
			}
		}
		var artifacts []string
		for _, rec := range gjson.GetBytes(tx.Checkpoint, path).Array() {
			if rec.Get("status").String() == checkpoint.WorkerCompleted {
				artifacts = append(artifacts, rec.Get("output_path").String())
			}
		}
		if err := set(tx, checkpoint.PhaseData(v.state, checkpoint.PhaseArtifacts), artifacts); err != nil {
			return err
		}
		if len(v.accepted) > 0 {
			if err := set(tx, checkpoint.PhaseData(v.state, checkpoint.PhasePartialFailures), slices.Sorted(maps.Keys(v.accepted))); err != nil {
				return err
			}
		}
		if p := checkpoint.PhaseData(v.state, verified); verified != "" && gjson.GetBytes(tx.Checkpoint, p).IsObject() {
			if err := set(tx, checkpoint.PhaseData(v.state, verified, "verified"), true); err != nil {
				return err
			}
		}
		if agg == nil {
			return nil
		}
		return setRaw(tx, checkpoint.SupervisorState(v.role.Key(), aggregatedKey), agg)
	})
}

// aggregatedKey is where a state's workers' aggregate is kept, in its
// supervisor_state.
const aggregatedKey = "aggregated_metadata"

// aggregate returns the aggregated_metadata of the state's workers (nil
// when the state has none or no worker delivered), the sub-supervisor's
// completion signal line and the warnings of reading the workers'
// outputs. It aggregates as `flowstate aggregate` does (capped reads,
// modified files counted from the project). All workers failed is not an
// error here: the signal says SUPERVISOR_FAILED and the orchestrator's
// phase-verify then stops on the missing files.
//
// The signal is the sub-supervisor's answer, which lands in the
// orchestrating model's context, where nothing reads it (the next block
// checks the files): so it counts the workers and says where the
// aggregate is, rather than carrying it.
func aggregate(v *view, span time.Duration) (signal string, agg []byte, warnings []Warning, err error) {
	if v.role.Kind() == "" && v.role.Supervisor == nil {
		return "", nil, nil, nil
	}
	var recs []supervisor.Record
	counts := struct {
		State     string `json:"state"`
		Completed int    `json:"completed"`
		Failed    int    `json:"failed"`
		Aggregate string `json:"aggregate,omitempty"`
	}{State: v.state}
	for _, wk := range v.workers {
		rec, ok := v.records[v.role.Key()][wk.ID]
		if !ok {
			rec = supervisor.Record{WorkerID: wk.ID, Status: checkpoint.WorkerPending, OutputPath: wk.Output}
		}
		if rec.Status == checkpoint.WorkerCompleted {
			counts.Completed++
		} else {
			counts.Failed++
		}
		recs = append(recs, rec)
	}
	line := supervisor.SupervisorComplete
	switch {
	case counts.Completed == 0:
		line = supervisor.SupervisorFailed
	case v.role.Kind() != "":
		// A state without an aggregation has its counts and nothing more.
		var notes []supervisor.Warning
		agg, notes, err = supervisor.Aggregate(v.role.Kind(), recs, supervisor.Dirs{Cwd: v.w.P.Dir, Project: v.w.P.Dir, SpanMs: span.Milliseconds()})
		for _, n := range notes {
			kind := note
			if n.Failed {
				kind = workerFailed
			}
			warnings = append(warnings, Warning{kind: kind, Text: n.Text})
		}
		var failed *supervisor.FailedError
		switch {
		case errors.As(err, &failed):
			line, agg, err = supervisor.SupervisorFailed, nil, nil
		case err != nil:
			return "", nil, warnings, err
		default:
			counts.Aggregate = checkpoint.SupervisorState(v.role.Key(), aggregatedKey)
		}
	}
	b, err := json.Marshal(counts)
	return line + ": " + string(b), agg, warnings, err
}
