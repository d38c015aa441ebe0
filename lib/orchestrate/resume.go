package orchestrate

import (
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// ResumeCommand is the slash command that runs Resume.
const ResumeCommand = "workflow-resume"

// Resume points sel.Session at workflow id, or with no id at the workflow
// to resume (see unfinished), and returns where it stands: its current
// state and NEXT=phase, or its artifacts if it is already finished.
// sel.Flag (--workflow) names the workflow as id does, so a finished one
// is reported, not passed over for another. A paused workflow is
// continued (by a, recorded as unpause); one that waits for approval
// stops the command again (NEXT=stopped, saying what to approve); a
// cancelled one is refused (exit 3).
func Resume(p *store.Project, id string, sel store.Selector, a sm.Actor) (Output, error) {
	var out Output
	var w *store.Workflow
	var err error
	switch {
	case id == "":
		id = sel.Flag
	case sel.Flag != "" && sel.Flag != id:
		return out, fail.Usagef("resume %s contradicts --workflow %s; give one of them", id, sel.Flag)
	}
	if id != "" {
		if w, err = p.Workflow(id); err != nil {
			return out, err
		}
	} else if w, err = unfinished(p, sel); err != nil {
		return out, err
	}
	s, _ := p.Summary(w.ID)
	if s.Status == checkpoint.Cancelled {
		doc, err := w.ReadCheckpoint()
		if err != nil {
			return out, err
		}
		why := "was cancelled"
		if h := sm.HoldOf(doc); h != nil {
			why = h.Sentence()
		}
		return out, fail.Refusedf("workflow %s %s; it cannot be resumed: start a new one", w.ID, why)
	}
	// The session now runs /workflow-resume on this workflow: that is the
	// command text the hooks send the model back to.
	if err := writeRun(p, sel.Session, Run{Command: ResumeCommand, Workflow: w.ID}); err != nil {
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
	if asked, known := UserAsked(p, sel.Session, ResumeCommand); s.Status == checkpoint.Paused && (asked || !known) {
		if _, err := sm.Unpause(w, a); err != nil {
			return out, err
		}
	}
	if out, ok, err := held(w, Options{}, false); ok || err != nil {
		return out, err
	}
	v, err := load(w)
	if err != nil {
		return out, err
	}
	if v.finished() {
		return finish(v)
	}
	out.add("WORKFLOW_ID", w.ID)
	out.add("CURRENT_STATE", v.state)
	out.add("NEXT", "phase")
	return out, nil
}

// unfinished finds the workflow to resume: the session's own if it is
// unfinished, else the project's only unfinished one. Finished means the
// terminal phase's work is verified, not merely that the status says so:
// a workflow whose status was set by hand may still lack artifacts. With
// none, the session's own cancelled workflow is returned, for Resume to
// say why it cannot go on.
func unfinished(p *store.Project, sel store.Selector) (*store.Workflow, error) {
	// The session's own workflow, when cancelled, is what the user is told
	// about if nothing else can be resumed.
	var cancelled *store.Workflow
	if w, err := p.Resolve(sel); err == nil {
		switch s, _ := p.Summary(w.ID); {
		case s.Status == checkpoint.Cancelled:
			cancelled = w
		case resumable(s.Status):
			if v, err := load(w); err == nil && !v.finished() {
				return w, nil
			}
		}
	}
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
		if err != nil {
			continue
		}
		if v, err := load(w); err == nil && !v.finished() {
			ids = append(ids, s.ID)
		}
	}
	switch {
	case len(ids) == 0 && cancelled != nil:
		return cancelled, nil
	case len(ids) == 0:
		return nil, fail.Usagef("no unfinished workflow in %s; see `flowstate list`", p.Dir)
	case len(ids) == 1:
		return p.Workflow(ids[0])
	}
	return nil, fail.Usagef("%d unfinished workflows: %s; pass one: /flowstate:workflow-resume ID", len(ids), strings.Join(ids, ", "))
}

// resumable reports whether a workflow with status may be resumed: not
// given up (failed, abandoned, cancelled). A complete one is checked
// further: its last phase's work may still be missing.
func resumable(status string) bool {
	return checkpoint.Active(status) || status == checkpoint.Complete
}
