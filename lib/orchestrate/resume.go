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
}

// by is the slash command a resume runs as.
func (r ResumeRequest) by() string {
	if r.Command != "" {
		return r.Command
	}
	return ResumeCommand
}

// slash is how the user runs this resume in Claude Code.
func (r ResumeRequest) slash() string {
	if r.Command != "" {
		return "/" + r.Command + " --resume"
	}
	return "/flowstate:" + ResumeCommand
}

// owns reports whether the resume may continue w, and why not.
func (r ResumeRequest) owns(w *store.Workflow) error {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	cmd := checkpoint.ViewOf(doc).Command
	own := ResumeHint(w) != "/flowstate:"+ResumeCommand // a user's definition, or the low-level API
	switch {
	case r.Command != "" && cmd != r.Command:
		return fail.Refusedf("workflow %s was started by /%s, not /%s; continue it with %s", w.ID, cmd, r.Command, ResumeHint(w))
	case r.Command == "" && own:
		return fail.Refusedf("workflow %s runs /%s's own steps, whose agents that command names; continue it with %s", w.ID, cmd, ResumeHint(w))
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
	var out Output
	var w *store.Workflow
	var err error
	id := r.ID
	switch {
	case id == "":
		id = sel.Flag
	case sel.Flag != "" && sel.Flag != id:
		return out, fail.Usagef("resume %s contradicts --workflow %s; give one of them", id, sel.Flag)
	}
	switch {
	case id != "":
		if w, err = p.Workflow(id); err != nil {
			return out, err
		}
	case r.RetryFailed:
		if w, err = withAccepted(p, sel, r); err != nil {
			return out, err
		}
	default:
		if w, err = unfinished(p, sel, r); err != nil {
			return out, err
		}
	}
	if err := r.owns(w); err != nil {
		return out, err
	}
	s, _ := p.Summary(w.ID)
	if s.Status == checkpoint.Cancelled {
		doc, err := w.ReadCheckpoint()
		if err != nil {
			return out, err
		}
		why := "was cancelled"
		if h := checkpoint.ViewOf(doc).Hold; h != nil {
			why = h.Sentence()
		}
		return out, fail.Refusedf("workflow %s %s; it cannot be resumed: start a new one", w.ID, why)
	}
	if r.RetryFailed {
		if err := retryFailed(w); err != nil {
			return out, err
		}
	}
	// The session now runs /workflow-resume on this workflow: that is the
	// command text the hooks send the model back to.
	if err := writeRun(p, sel.Session, Run{Command: r.by(), Workflow: w.ID, User: r.Command != "" && ResumeHint(w) != "/flowstate:"+ResumeCommand}); err != nil {
		return out, err
	}
	if sel.Session != "" {
		if err := p.SetSession(sel.Session, w.ID); err != nil {
			return out, err
		}
		err := w.Update(func(tx *store.Tx) error { return set(tx, "session_id", sel.Session) })
		if err != nil {
			return out, err
		}
	}
	// Only the user lets a paused workflow go on: a model that runs the
	// resume on its own (the Skill tool) finds it paused still.
	if asked, known := UserAsked(p, sel.Session, r.by()); s.Status == checkpoint.Paused && (asked || !known) {
		if _, err := sm.Unpause(w, r.Actor); err != nil {
			return out, err
		}
	}
	return Plan(w, o) // a workflow still held answers NEXT=stopped
}

// retryFailed makes the accepted failures of w's current state workers to
// run again, reopening w when it had finished. Accepted failures of an
// earlier state cannot be re-run without going back to that state.
func retryFailed(w *store.Workflow) error {
	v, err := load(w)
	if err != nil {
		return err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	var earlier []string
	gjson.GetBytes(doc, checkpoint.PathPhaseData).ForEach(func(state, data gjson.Result) bool {
		if state.String() != v.state && len(data.Get(checkpoint.PhasePartialFailures).Array()) > 0 {
			earlier = append(earlier, state.String())
		}
		return true
	})
	if len(v.accepted) == 0 {
		if v.retrying() {
			return nil // a retry is under way: run again, it goes on
		}
		if len(earlier) > 0 {
			return fail.Refusedf("workflow %s: the accepted failures are in %s, not in its current state %s; go back there first (flowstate rewind STATE) to run them again", w.ID, strings.Join(earlier, ", "), v.state)
		}
		return fail.Refusedf("workflow %s has no accepted failures in its state %s to run again", w.ID, v.state)
	}
	if checkpoint.ViewOf(doc).Status == checkpoint.Complete {
		if err := sm.Reopen(w, "run the workers whose failure was accepted again"); err != nil {
			return err
		}
	}
	return w.Update(func(tx *store.Tx) error {
		doc, err := sjson.DeleteBytes(tx.Checkpoint, checkpoint.PhaseData(v.state, checkpoint.PhasePartialFailures))
		if err != nil {
			return err
		}
		tx.Checkpoint = doc
		tx.Event("retry_failed", map[string]any{"state": v.state, "workers": slices.Sorted(maps.Keys(v.accepted))})
		return nil
	})
}

// withAccepted finds the workflow to retry: the session's own when it has
// accepted failures or a retry under way (so a repeated block answers the
// same), else the project's only workflow whose current state has accepted
// failures.
func withAccepted(p *store.Project, sel store.Selector, r ResumeRequest) (*store.Workflow, error) {
	if w, err := p.Resolve(sel); err == nil && r.owns(w) == nil {
		if v, err := load(w); err == nil && (len(v.accepted) > 0 || v.retrying()) {
			return w, nil
		}
	}
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		if w, err := p.Workflow(s.ID); err == nil && r.owns(w) == nil {
			if v, err := load(w); err == nil && len(v.accepted) > 0 {
				ids = append(ids, s.ID)
			}
		}
	}
	switch len(ids) {
	case 0:
		return nil, fail.Usagef("no workflow in %s went on without some of its workers; see `flowstate list`", p.Dir)
	case 1:
		return p.Workflow(ids[0])
	}
	return nil, fail.Usagef("%d workflows went on without some of their workers: %s; pass one: %s --retry-failed ID", len(ids), strings.Join(ids, ", "), r.slash())
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
	return nil, fail.Usagef("%d unfinished workflows: %s; pass one: %s ID", len(ids), strings.Join(ids, ", "), r.slash())
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
