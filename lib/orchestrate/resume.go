package orchestrate

import (
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// ResumeCommand is the slash command that runs Resume.
const ResumeCommand = "workflow-resume"

// ResumeRequest is what a resume was asked for.
type ResumeRequest struct {
	ID string // the workflow; "" to find it
	// RetryFailed runs again the workers of the current state whose
	// failure was accepted, reopening a finished workflow.
	RetryFailed bool
	Actor       sm.Actor // who resumes: recorded when it unpauses the workflow
	// Command is the command whose --resume this is, "" for
	// /workflow-resume: a command resumes only its own workflows, and
	// /workflow-resume only those of the built-in definition (a user's
	// command names its agents as its own install does).
	Command string
	// Flow is the saved workflow the workflow engine launches; "" runs
	// the steps engine.
	Flow string
}

// by is the slash command a resume runs as.
func (r ResumeRequest) by() string {
	if r.Command != "" {
		return r.Command
	}
	return ResumeCommand
}

// slash is how the user runs this resume in Claude Code.
func (r ResumeRequest) slash(p *store.Project) string {
	if r.Command != "" {
		return "/" + r.Command + " --resume"
	}
	return Slash(p, ResumeCommand)
}

// owns reports whether the resume may continue w, and why not.
func (r ResumeRequest) owns(w *store.Workflow) error {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	cmd := checkpoint.ViewOf(doc).Command
	// The hint is for a refusal only: most workflows scanned are not.
	hint := func() string {
		if r.RetryFailed {
			return RetryHint(w)
		}
		return ResumeHint(w)
	}
	switch {
	case r.Command != "" && cmd != r.Command:
		return fail.Refusedf("workflow %s was started by /%s, not /%s; continue it with %s", w.ID, cmd, r.Command, hint())
	case r.Command == "":
		// own: a user's definition, or the low-level API
		if custom, _ := w.MachineJSON(); !builtIn(custom, doc) {
			return fail.Refusedf("workflow %s runs /%s's own steps, whose agents that command names; continue it with %s", w.ID, cmd, hint())
		}
	}
	return nil
}

// ParseResumeArgs reads the arguments of /flowstate:workflow-resume as
// typed, [--retry-failed] [WORKFLOW_ID], into a request.
func ParseResumeArgs(raw string) (ResumeRequest, error) {
	var r ResumeRequest
	for _, f := range strings.Fields(raw) {
		switch {
		case f == "--retry-failed":
			r.RetryFailed = true
		case r.ID == "" && !strings.HasPrefix(f, "-"):
			r.ID = f
		default:
			return ResumeRequest{}, fail.Usagef("resume arguments %q: give [--retry-failed] [WORKFLOW_ID]", strings.TrimSpace(raw))
		}
	}
	return r, nil
}

// Resume points sel.Session at workflow id, or with no id at the workflow
// to resume (see unfinished), and plans its next step (Plan's output: the
// workers still to run, or NEXT=done with its artifacts if it is
// finished).
// sel.Flag (--workflow) names the workflow as id does, so a finished one
// is reported, not passed over for another. A paused workflow is
// continued (by r.Actor, recorded as unpause); one that waits for approval
// stops the command again (NEXT=stopped, saying what to approve); a
// cancelled one is refused (exit 3).
func Resume(p *store.Project, r ResumeRequest, sel store.Selector, o Options) (Output, error) {
	w, err := r.pick(p, sel)
	if err != nil {
		return Output{}, err
	}
	var retry *retrying
	if r.RetryFailed {
		if retry, err = retryOf(w); err != nil {
			return Output{}, err
		}
	}
	// The session's run and pointer are the project's, written under its
	// lock, apart from the workflow's: first, so that the hooks send the
	// model back to this command. The session now runs this resume; a
	// resume run again keeps the launch it printed.
	run := Run{Command: r.by(), Workflow: w.ID, User: r.Command != "" && !BuiltIn(w)}
	if prev, ok := ReadRun(p, sel.Session); ok && prev.Command == run.Command && prev.Workflow == w.ID && prev.Halted == "" {
		run.Engine, run.Launch = prev.Engine, prev.Launch
	}
	if err := writeRun(p, sel.Session, run); err != nil {
		return Output{}, err
	}
	if sel.Session != "" {
		if err := p.SetSession(sel.Session, w.ID); err != nil {
			return Output{}, err
		}
	}
	// Only the user lets a paused workflow go on: a model that runs the
	// resume on its own (the Skill tool) finds it paused still.
	asked, known := UserAsked(p, sel.Session, r.by())
	if err := r.resumeIn(w, sel.Session, retry, asked || !known); err != nil {
		return Output{}, err
	}
	if r.Flow != "" {
		return resumeLaunch(w, sel.Session, r.Flow, o)
	}
	return Plan(w, o) // a workflow still held answers NEXT=stopped
}

// resumeLaunch is a resume's answer on the workflow engine: the launch
// that runs the rest, unless a person holds the workflow (NEXT=stopped)
// or it is finished (NEXT=done), which no launch would change.
func resumeLaunch(w *store.Workflow, session, flow string, o Options) (Output, error) {
	if out, ok, err := held(w, o, false); ok || err != nil {
		return out, err
	}
	v, err := load(w)
	if err != nil {
		return Output{}, err
	}
	if v.finished() {
		return Plan(w, o)
	}
	return launch(w.P, session, w.ID, flow)
}

// pick finds the workflow r resumes: the one it or --workflow names, the
// one with accepted failures to run again, or the unfinished one; never
// another command's, nor a cancelled one (exit 3, saying why).
func (r ResumeRequest) pick(p *store.Project, sel store.Selector) (*store.Workflow, error) {
	id := r.ID
	switch {
	case id == "":
		id = sel.Flag
	case sel.Flag != "" && sel.Flag != id:
		return nil, fail.Usagef("resume %s contradicts --workflow %s; give one of them", id, sel.Flag)
	}
	var w *store.Workflow
	var err error
	switch {
	case id != "":
		w, err = p.Workflow(id)
	case r.RetryFailed:
		w, err = withAccepted(p, sel, r)
	default:
		w, err = unfinished(p, sel, r)
	}
	if err != nil {
		return nil, err
	}
	if err := r.owns(w); err != nil {
		return nil, err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, err
	}
	if cv := checkpoint.ViewOf(doc); cv.Status == checkpoint.Cancelled {
		why := "was cancelled"
		if cv.Hold != nil {
			why = cv.Hold.Sentence()
		}
		return nil, fail.Refusedf("workflow %s %s; it cannot be resumed: start a new one", w.ID, why)
	}
	return w, nil
}

// resumeIn is everything a resume changes in the workflow, in one write:
// the workers whose failure was accepted run again (retry, reopening a
// finished workflow), the session it belongs to, and a pause the user
// lets go (unpause). Nothing to change writes nothing.
func (r ResumeRequest) resumeIn(w *store.Workflow, session string, retry *retrying, unpause bool) error {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	if cv := checkpoint.ViewOf(doc); retry == nil && (session == "" || cv.Session == session) && (!unpause || cv.Status != checkpoint.Paused) {
		return nil
	}
	return w.Update(func(tx *store.Tx) error {
		cv := checkpoint.ViewOf(tx.Checkpoint)
		if retry != nil {
			if err := retry.in(tx, w, r.Actor); err != nil {
				return err
			}
		}
		if session != "" && cv.Session != session {
			if err := set(tx, checkpoint.PathSession, session); err != nil {
				return err
			}
		}
		if unpause && cv.Status == checkpoint.Paused {
			_, err := sm.UnpauseIn(tx, w, r.Actor)
			return err
		}
		return nil
	})
}

// retrying is what --retry-failed runs again: the accepted failures of
// one state, the current one or the earliest completed one that has any.
type retrying struct {
	state    string
	accepted []string
	earlier  bool // state is behind the current one: go back to it
}

// retryOf checks that w has accepted failures to run again; nil when a
// retry is already under way (run again, it goes on). Failures accepted
// in a state the workflow went on from are run again by going back to
// that state (sm.RetakeIn): what came after was built without them.
func retryOf(w *store.Workflow) (*retrying, error) {
	v, err := load(w)
	if err != nil {
		return nil, err
	}
	if len(v.accepted) > 0 {
		return &retrying{state: v.state, accepted: slices.Sorted(maps.Keys(v.accepted))}, nil
	}
	if v.retrying() {
		return nil, nil
	}
	for _, state := range v.cv.CompletedStates {
		var ids []string
		for _, id := range gjson.GetBytes(v.doc, checkpoint.PhaseData(state, checkpoint.PhasePartialFailures)).Array() {
			ids = append(ids, id.String())
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			return &retrying{state: state, accepted: ids, earlier: true}, nil
		}
	}
	return nil, fail.Refusedf("workflow %s has no accepted failures to run again", w.ID)
}

// in makes the accepted failures workers to run again, inside tx,
// reopening the workflow when it had finished, or going back to their
// state.
func (rt *retrying) in(tx *store.Tx, w *store.Workflow, a sm.Actor) error {
	var err error
	switch {
	case rt.earlier:
		err = sm.RetakeIn(tx, w, rt.state, a)
	case checkpoint.ViewOf(tx.Checkpoint).Status == checkpoint.Complete:
		err = sm.ReopenIn(tx, w, "run the workers whose failure was accepted again")
	}
	if err != nil {
		return err
	}
	doc, err := sjson.DeleteBytes(tx.Checkpoint, checkpoint.PhaseData(rt.state, checkpoint.PhasePartialFailures))
	if err != nil {
		return err
	}
	tx.Checkpoint = doc
	tx.Event("retry_failed", map[string]any{"state": rt.state, "workers": rt.accepted})
	return nil
}

// withAccepted finds the workflow to retry: the session's own when it has
// accepted failures or a retry under way (so a repeated block answers the
// same), else the project's only workflow with accepted failures.
func withAccepted(p *store.Project, sel store.Selector, r ResumeRequest) (*store.Workflow, error) {
	if w, err := p.Resolve(sel); err == nil && r.owns(w) == nil {
		if _, err := retryOf(w); err == nil {
			return w, nil
		}
	}
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var ids []string
	var another error // one of another command's, to say where it is retried
	for _, s := range all {
		w, err := p.Workflow(s.ID)
		if err != nil {
			continue
		}
		if rt, err := retryOf(w); err != nil || rt == nil {
			continue
		}
		if err := r.owns(w); err != nil {
			another = err
			continue
		}
		ids = append(ids, s.ID)
	}
	switch len(ids) {
	case 0:
		if another != nil {
			return nil, another
		}
		return nil, fail.Usagef("no workflow in %s went on without some of its workers; see `flowstate list`", p.Dir)
	case 1:
		return p.Workflow(ids[0])
	}
	return nil, fail.Usagef("%d workflows went on without some of their workers: %s; pass one: %s --retry-failed ID", len(ids), strings.Join(ids, ", "), r.slash(p))
}

// unfinished finds the workflow to resume: the session's own if it is
// unfinished, else the project's only unfinished one. Finished means the
// terminal phase's work is verified, not merely that the status says so:
// a workflow whose status was set by hand may still lack artifacts. With
// none, the session's own cancelled workflow is returned, for Resume to
// say why it cannot go on.
func unfinished(p *store.Project, sel store.Selector, r ResumeRequest) (*store.Workflow, error) {
	w, cancelled, notOurs := sessionsOwn(p, sel, r)
	if w != nil {
		return w, nil
	}
	ids, err := unfinishedIDs(p, r)
	switch {
	case err != nil:
		return nil, err
	case len(ids) == 0 && cancelled != nil:
		return cancelled, nil
	case len(ids) == 0 && notOurs != nil:
		return nil, notOurs
	case len(ids) == 0:
		return nil, fail.Usagef("no unfinished workflow in %s; see `flowstate list`", p.Dir)
	case len(ids) == 1:
		return p.Workflow(ids[0])
	}
	return nil, fail.Usagef("%d unfinished workflows: %s; pass one: %s ID", len(ids), strings.Join(ids, ", "), r.slash(p))
}

// sessionsOwn looks at the session's own workflow: w when it is one to
// resume; when it is not, whether it was cancelled (what the user is told
// about if nothing else can be resumed) or is another command's (why
// not).
func sessionsOwn(p *store.Project, sel store.Selector, r ResumeRequest) (w, cancelled *store.Workflow, notOurs error) {
	own, err := p.Resolve(sel)
	if err != nil {
		return nil, nil, nil
	}
	if err := r.owns(own); err != nil {
		return nil, nil, err
	}
	switch s, _ := p.Summary(own.ID); {
	case s.Status == checkpoint.Cancelled:
		return nil, own, nil
	case resumable(s.Status):
		if v, err := load(own); err == nil && !v.finished() {
			return own, nil, nil
		}
	}
	return nil, nil, nil
}

// unfinishedIDs lists the project's workflows r may resume whose work is
// not finished.
func unfinishedIDs(p *store.Project, r ResumeRequest) ([]string, error) {
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		if !resumable(s.Status) {
			continue
		}
		w, err := p.Workflow(s.ID)
		if err != nil || r.owns(w) != nil {
			continue
		}
		if v, err := load(w); err == nil && !v.finished() {
			ids = append(ids, s.ID)
		}
	}
	return ids, nil
}

// resumable reports whether a workflow with status may be resumed: not
// given up (failed, abandoned, cancelled). A complete one is checked
// further: its last phase's work may still be missing.
func resumable(status string) bool {
	return checkpoint.Active(status) || status == checkpoint.Complete
}
