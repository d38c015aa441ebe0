package orchestrate

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// view is one read of a workflow: its current state and everything
// the role, worker and brief files need to plan or verify that state's workers.
type view struct {
	w          *store.Workflow
	m          *machine.Machine // the workflow's definition
	doc        []byte           // its checkpoint as read
	cv         checkpoint.View  // and its fields
	state      string
	terminal   string
	role       Role
	hasRole    bool
	facts      Facts
	workers    []Worker
	records    map[string]map[string]supervisor.Record // role key -> worker id -> record
	sequential bool
	session    string  // the Claude Code session the workflow belongs to
	plans      [2]plan // what the last plan of the state handed out: the command's, a sub-supervisor's
	// accepted are the workers of the state whose failure was accepted:
	// enough others delivered for the workflow to go on (partial failure).
	accepted map[string]bool
	// iso is how the state's workers run (nil until its first plan
	// decides), trees the worktree each worker's latest agent worked in,
	// merges what became of each one's branch (isolate.go).
	iso    *isolation
	trees  map[string]string
	merges map[string]worktree.Merge
}

// plan is what the last phase-plan of a state handed out, kept in
// phase_data.<state>.planned (supervisor_planned for a sub-supervisor's),
// so that a verify checks those workers and no others.
type plan struct {
	known      bool
	Workers    []string  `json:"workers"`
	Supervised bool      `json:"supervised,omitempty"` // a sub-supervisor has every worker of the state
	Isolated   bool      `json:"isolated,omitempty"`   // each worker runs in a git worktree of its own
	At         time.Time `json:"at,omitzero"`          // when it was handed out
	Verified   bool      `json:"verified,omitempty"`   // a verify has checked it
}

func (p plan) has(id string) bool { return slices.Contains(p.Workers, id) }

// planKeys are where the plans are kept in phase_data.<state>.
var planKeys = [2]string{"planned", "supervisor_planned"}

// planKey is where the plan of the command, or of a sub-supervisor, is
// kept.
func planKey(inSupervisor bool) string {
	if inSupervisor {
		return planKeys[1]
	}
	return planKeys[0]
}

// planned is the last plan of the command (or of a sub-supervisor).
func (v *view) planned(inSupervisor bool) plan {
	if inSupervisor {
		return v.plans[1]
	}
	return v.plans[0]
}

func load(w *store.Workflow) (*view, error) {
	doc, m, err := sm.Load(w)
	if err != nil {
		return nil, err
	}
	cv := checkpoint.ViewOf(doc)
	v := &view{
		w:          w,
		m:          m,
		doc:        doc,
		cv:         cv,
		state:      cv.CurrentState,
		terminal:   cv.TerminalState,
		sequential: gjson.GetBytes(doc, checkpoint.PhaseData(m.Initial, coordinationKey)).String() == sequential,
		records:    map[string]map[string]supervisor.Record{},
		session:    cv.Session,
		accepted:   map[string]bool{},
	}
	v.role, v.hasRole = RoleOf(m, v.state)
	for _, id := range gjson.GetBytes(doc, checkpoint.PhaseData(v.state, checkpoint.PhasePartialFailures)).Array() {
		v.accepted[id.String()] = true
	}
	for i, key := range planKeys {
		raw := gjson.GetBytes(doc, checkpoint.PhaseData(v.state, key))
		if raw.IsObject() && json.Unmarshal([]byte(raw.Raw), &v.plans[i]) == nil {
			v.plans[i].known = true
		}
	}
	v.readIsolation()
	v.facts = factsOf(w, m, doc, cv, v.named)
	if err := v.readRecords(); err != nil {
		return nil, err
	}
	if v.facts.Plan, err = v.plan(); err != nil {
		return nil, err
	}
	if err := v.settleLoop(); err != nil {
		return nil, err
	}
	if v.hasRole {
		if v.workers, err = Workers(v.role, v.facts); err != nil {
			return nil, fmt.Errorf("workflow %s, state %s: %w", w.ID, v.state, err)
		}
		v.facts.Conflicts = v.conflicts()
	}
	return v, nil
}

// factsOf is what the checkpoint says for planning the current state of
// the workflow: its request, the loop it is in, its version, what a
// person said sending the state's work back, and the classifier's
// topics.
func factsOf(w *store.Workflow, m *machine.Machine, doc []byte, cv checkpoint.View, named func(string) string) Facts {
	f := Facts{
		SpecDir:     specDir(w.P, w.ID),
		Description: cv.Description,
		Loop:        loopOf(m, cv),
		Version:     cv.Rewinds + 1,
	}
	if fb := gjson.GetBytes(doc, checkpoint.PhaseData(cv.CurrentState, checkpoint.PhaseFeedback)); fb.IsObject() {
		var earlier []string
		for _, a := range fb.Get("earlier").Array() {
			earlier = append(earlier, named(a.String()))
		}
		f.Feedback = Feedback(fb.Get("kind").String(), fb.Get("by").String(), fb.Get("reason").String(), earlier)
	}
	for _, t := range gjson.Parse(cv.TopicsJSON).Array() {
		f.Topics = append(f.Topics, t.String())
	}
	for _, d := range gjson.GetBytes(doc, checkpoint.PathTopicDetails).Array() {
		note := d.Get("short_name").String()
		for _, k := range []string{"detailed_description", "research_focus"} {
			if s := d.Get(k).String(); s != "" {
				note += ": " + s
			}
		}
		f.TopicNotes = append(f.TopicNotes, kv.OneLine(note))
	}
	return f
}

// readRecords reads the records of every state's workers.
func (v *view) readRecords() error {
	for _, role := range Roles(v.m) {
		recs, err := supervisor.Records(v.doc, v.w.ID, role.Key())
		if err != nil {
			return err
		}
		byID := map[string]supervisor.Record{}
		for _, rec := range recs {
			rec.OutputPath = here(v.w, rec.OutputPath)
			byID[rec.WorkerID] = rec
		}
		v.records[role.Key()] = byID
	}
	return nil
}

// settleLoop completes the check-and-recover loop the current state is
// in: how many recovery runs completed (they follow one another, so they
// are 1..n), and what failed the checked run the next recovery works on.
func (v *view) settleLoop() error {
	l := &v.facts.Loop
	if l.Checked == "" {
		return nil
	}
	r, _ := RoleOf(v.m, l.Recovery)
	for v.recovered(l.RecoveryDone + 1) {
		l.RecoveryDone++
		// Each completed run has workers of its own: more runs than
		// records means the same workers count for every run.
		if l.RecoveryDone > len(v.records[r.Key()]) {
			return fail.Invalidf("workflow %s, state %s: its definition %q counts the same %s workers for every recovery run, so its check-and-recover loop cannot end; give their id and output {run} (flowstate graph --machine checks a definition)", v.w.ID, v.state, v.m.Name, l.Recovery)
		}
	}
	checkedRun := v.facts
	checkedRun.Loop = Loop{Checked: l.Checked, Recovery: l.Recovery, Retries: l.RecoveryRun() - 1}
	checked, _ := RoleOf(v.m, l.Checked)
	if n, fs := v.failures(checked, checkedRun); n > 0 {
		v.facts.Failures = FailureLine(checked, n, fs)
	}
	return nil
}

// coordinationKey is where the workflow keeps how its command coordinates
// it (adaptive or sequential), in its initial state's phase_data.
const coordinationKey = "coordination"

// loopOf is the check-and-recover loop the current state belongs to: as
// the state whose check can fail, or as the recovery state of one. The
// zero Loop for any other state.
func loopOf(m *machine.Machine, cv checkpoint.View) Loop {
	state, checked := cv.CurrentState, ""
	if w, ok := m.WorkOf(state); ok && w.FailWhen != "" {
		checked = state
	} else if from := m.RecoveryOf(state); from != "" {
		if w, ok := m.WorkOf(from); ok && w.FailWhen != "" {
			checked = from
		}
	}
	if checked == "" {
		return Loop{}
	}
	return Loop{Checked: checked, Recovery: m.Recovery[checked], FailedState: cv.Error.FailedState, Retries: int(cv.Error.Retries[checked])}
}

// plan reads the plan later states build on: the artifact of the first
// completed worker of the definition's plan state; nil while there is
// none.
func (v *view) plan() ([]supervisor.Phase, error) {
	ps := v.m.PlanState()
	if ps == "" {
		return nil, nil
	}
	r, _ := RoleOf(v.m, ps)
	for _, rec := range sortedRecords(v.records[r.Key()]) {
		if rec.Status != checkpoint.WorkerCompleted {
			continue
		}
		md, err := fsx.ReadFile(rec.OutputPath, limit.Max)
		if err != nil {
			return nil, fail.Usagef("the plan %s recorded for workflow %s is gone (%v); restore it or re-run the %s phase", rec.OutputPath, v.w.ID, err, ps)
		}
		phases, err := supervisor.ParsePlan(md)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rec.OutputPath, err)
		}
		return phases, nil
	}
	return nil, nil
}

// recovered reports whether recovery run k of the view's loop completed:
// every worker of that run is recorded completed.
func (v *view) recovered(k int) bool {
	l := v.facts.Loop
	r, ok := RoleOf(v.m, l.Recovery)
	if !ok {
		return false
	}
	f := v.facts
	f.Loop = Loop{Checked: l.Checked, Recovery: l.Recovery, Retries: k}
	ws, err := Workers(r, f)
	if err != nil || len(ws) == 0 {
		return false
	}
	for _, wk := range ws {
		if !v.completed(l.Recovery, wk.ID) {
			return false
		}
	}
	return true
}

// record is the stored record of worker id of state; zero if none.
func (v *view) record(state, id string) supervisor.Record {
	r, _ := RoleOf(v.m, state)
	return v.records[r.Key()][id]
}

func (v *view) completed(state, id string) bool {
	return v.record(state, id).Status == checkpoint.WorkerCompleted
}

// done reports whether worker id of the current state completed, or
// failed and its failure was accepted.
func (v *view) done(id string) bool { return v.completed(v.state, id) || v.accepted[id] }

// retrying reports whether workers of the current state failed and none of
// those failures is accepted: a retry (or the first run) is under way.
func (v *view) retrying() bool {
	for _, wk := range v.workers {
		if v.record(v.state, wk.ID).Status == checkpoint.WorkerFailed {
			return true
		}
	}
	return false
}

// failures sums what failed the check of r (its fail_when number) over
// the workers of the run f's loop points at, with what each reported.
func (v *view) failures(r Role, f Facts) (int64, []supervisor.Failing) {
	ws, _ := Workers(r, f)
	var failed int64
	var all []supervisor.Failing
	for _, w := range ws {
		rec := v.record(r.State, w.ID)
		if rec.Status != checkpoint.WorkerCompleted {
			continue
		}
		n, fs := failing(r, rec.Metadata)
		failed += n
		all = append(all, fs...)
	}
	return failed, all
}

// complete reports whether the current state's work is finished: every
// worker completed and, for a state with a check, the check passed or its
// failure has been handed to the recovery state.
func (v *view) complete() bool {
	if !v.hasRole {
		return true
	}
	if _, remaining := Pending(v.workers, v.done, v.sequential); remaining > 0 || v.unmerged() {
		return false
	}
	if v.role.FailWhen != "" {
		if n, _ := v.failures(v.role, v.facts); n > 0 {
			return v.facts.Loop.OwesRecovery()
		}
	}
	return true
}

func (v *view) finished() bool { return v.state == v.terminal && v.complete() }

// context is what the current state's workers build on, their paths
// from the project's root.
func (v *view) context() Context {
	byState := map[string][]supervisor.Record{}
	for _, role := range Roles(v.m) {
		for _, rec := range sortedRecords(v.records[role.Key()]) {
			rec.OutputPath = v.named(rec.OutputPath)
			byState[role.State] = append(byState[role.State], rec)
		}
	}
	return ContextOf(v.role, byState)
}

// named is path, one in the workflow's spec directory, as the state's
// workers' brief names it: from the project's root (fromProject), or,
// for workers that run each in a worktree of its own, which holds none
// of the spec directory, where it is in the project (here).
func (v *view) named(path string) string {
	if v.isolated() {
		return here(v.w, path)
	}
	return fromProject(v.w, path)
}

// fromProject is path, one in the workflow's spec directory, as a path
// from the project's root, whichever directory the project was in when
// the path was recorded: a moved or copied project sends no worker, and
// no message, to the old place. A path elsewhere is as it is.
func fromProject(w *store.Workflow, path string) string {
	if rel, err := filepath.Rel(w.P.Dir, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	spec := filepath.Join(SpecsDir, w.ID) + string(filepath.Separator)
	if i := strings.LastIndex(path, string(filepath.Separator)+spec); i >= 0 && filepath.IsAbs(path) {
		return path[i+1:]
	}
	return path
}

// here is a path recorded in the workflow's spec directory where the
// project is now, to read it.
func here(w *store.Workflow, path string) string {
	if rel := fromProject(w, path); !filepath.IsAbs(rel) && rel != path {
		return filepath.Join(w.P.Dir, rel)
	}
	return path
}

// outputs lists the completed workers' artifacts per state of m, in worker order.
func outputs(m *machine.Machine, records map[string]map[string]supervisor.Record) map[string][]string {
	out := map[string][]string{}
	for _, role := range Roles(m) {
		for _, rec := range sortedRecords(records[role.Key()]) {
			if rec.Status == checkpoint.WorkerCompleted {
				out[role.State] = append(out[role.State], rec.OutputPath)
			}
		}
	}
	return out
}

// sortedRecords orders records by output path, which numbers the workers.
func sortedRecords(byID map[string]supervisor.Record) []supervisor.Record {
	recs := slices.Collect(maps.Values(byID))
	slices.SortFunc(recs, func(a, b supervisor.Record) int { return strings.Compare(a.OutputPath, b.OutputPath) })
	return recs
}
