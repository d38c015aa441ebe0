package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
)

// Selector says how a bash block names its workflow, in order of
// precedence: --workflow, FLOWSTATE_WORKFLOW, the Claude Code session's
// current workflow, then the project's only active workflow (of Command,
// when given) that belongs to no other session.
type Selector struct {
	Flag    string
	Env     string
	Session string
	Command string
}

// Resolve finds the workflow a bash block means. None or several
// candidates is a usage error that says what to run.
func (p *Project) Resolve(sel Selector) (*Workflow, error) {
	switch {
	case sel.Flag != "":
		return p.Workflow(sel.Flag)
	case sel.Env != "":
		w, err := p.Workflow(sel.Env)
		if err != nil {
			return nil, fmt.Errorf("FLOWSTATE_WORKFLOW: %w", err)
		}
		return w, nil
	}
	if w, chosen, err := p.sessionChose(sel.Session); chosen || err != nil {
		return w, err
	}
	return p.onlyActive(sel)
}

// sessionChose is the workflow the session points at; chosen is false
// when it points at none. The session chose it (init_workflow_state
// reserves an id before sm-init creates it): never another in its place.
func (p *Project) sessionChose(session string) (w *Workflow, chosen bool, err error) {
	if session == "" {
		return nil, false, nil
	}
	id, err := p.SessionWorkflow(session)
	if err != nil || id == "" {
		return nil, false, err
	}
	w, err = p.Workflow(id)
	if err != nil && p.missing(id) {
		return nil, true, fail.Usagef("this session's workflow %s does not exist (yet) in %s; create it with `flowstate sm-init --workflow %s ...`, or pass --workflow ID (see `flowstate list`)", id, p.Dir, id)
	}
	return w, true, err
}

// onlyActive is the project's only active workflow that is not another
// session's; none, or several, is a usage error saying what to pass.
func (p *Project) onlyActive(sel Selector) (*Workflow, error) {
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var cands, others []Summary
	for _, s := range all {
		if !s.Active() || sel.Command != "" && s.Command != sel.Command {
			continue
		}
		if sel.Session != "" && s.Session != "" && s.Session != sel.Session {
			others = append(others, s) // another session's workflow: never taken unasked
			continue
		}
		cands = append(cands, s)
	}
	switch {
	case len(cands) == 1:
		return p.Workflow(cands[0].ID)
	case len(cands) > 1:
		return nil, fail.Usagef("%d active workflows in %s: %s; pass --workflow ID or set FLOWSTATE_WORKFLOW", len(cands), p.Dir, ids(cands))
	case len(others) == 1:
		o := others[0]
		return nil, fail.Usagef("this session has no active workflow in %s, but workflow %s (%s, in state %s) is active in another session; to act on it pass --workflow %s, or start one with `flowstate sm-init`", p.Dir, o.ID, o.Command, o.CurrentState, o.ID)
	case len(others) > 1:
		return nil, fail.Usagef("this session has no active workflow in %s, but other sessions have %d: %s; to act on one pass --workflow ID (see `flowstate list`), or start one with `flowstate sm-init`", p.Dir, len(others), ids(others))
	}
	return nil, fail.Usagef("no active workflow found in %s; start one with `flowstate sm-init --description TEXT --command NAME --scope SCOPE`, or pass --workflow ID (see `flowstate list`)", p.Dir)
}

// ResolveWaiting finds the workflow a person's decision is for: one that
// waits for a person with status (approval, a pause). That is the one
// sel's flag or environment names, else the session's own if it waits so,
// else the project's only workflow that waits so, whichever session
// started it (a person decides for it, from any shell or session), else
// what Resolve finds (whose workflow then says it does not wait).
// waiting is true when it was found by what it waits for: once the
// person's decision is made, the caller points the session at it
// (Adopt), and a decision that is refused moves no pointer.
func (p *Project) ResolveWaiting(sel Selector, status string) (w *Workflow, waiting bool, err error) {
	if sel.Flag == "" && sel.Env == "" {
		w, err := p.waitingFor(sel.Session, status)
		if w != nil || err != nil {
			return w, w != nil, err
		}
	}
	w, err = p.Resolve(sel)
	return w, false, err
}

// Adopt points a Claude Code session that has no active workflow of its
// own at w, which a person decided for from it: the same command run
// again (a model runs a block twice) then finds w, whatever it waits for
// by then. A session busy with a workflow of its own keeps it.
func (p *Project) Adopt(session string, w *Workflow) error {
	if session == "" {
		return nil
	}
	if id, err := p.SessionWorkflow(session); err == nil && id != "" {
		if s, ok := p.Summary(id); ok && s.Active() {
			return nil
		}
	}
	return p.SetSession(session, w.ID)
}

// waitingFor is the session's workflow if it has status, else the
// project's only workflow with status; nil when there is none.
func (p *Project) waitingFor(session, status string) (*Workflow, error) {
	if session != "" {
		if id, err := p.SessionWorkflow(session); err == nil && id != "" {
			if s, ok := p.Summary(id); ok && s.Status == status {
				return p.Workflow(id)
			}
		}
	}
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var waiting []Summary
	for _, s := range all {
		if s.Status == status {
			waiting = append(waiting, s)
		}
	}
	switch len(waiting) {
	case 0:
		return nil, nil
	case 1:
		return p.Workflow(waiting[0].ID)
	}
	return nil, fail.Usagef("%d workflows are %s in %s: %s; pass --workflow ID", len(waiting), status, p.Dir, ids(waiting))
}

// missing reports whether workflow id is simply not there (as opposed to
// refused: a link, an unreadable directory).
func (p *Project) missing(id string) bool {
	dir, err := p.WorkflowDir(id)
	if err != nil {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, checkpointFile))
	return errors.Is(err, fs.ErrNotExist)
}

func ids(ss []Summary) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return strings.Join(out, ", ")
}

// Summary is what `flowstate list` shows of a workflow.
type Summary struct {
	ID           string `json:"id"`
	Command      string `json:"command"`
	Scope        string `json:"scope"`
	CurrentState string `json:"current_state"`
	Terminal     string `json:"terminal_state"`
	Status       string `json:"status"`
	Session      string `json:"session_id,omitempty"`
	UpdatedAt    string `json:"updated_at"`
}

// Unreadable is the state and status List gives a workflow whose
// checkpoint cannot be read.
const Unreadable = "unreadable"

// Active is true until the workflow is finished (checkpoint.Active). An
// unreadable workflow is not active: discovery must not pick it.
func (s Summary) Active() bool { return checkpoint.Active(s.Status) }

// Finished is true once the workflow is known to be finished. An
// unreadable workflow is neither active nor finished: it may be mid-phase
// behind a damaged file, so cleanup must keep its pointer and files.
func (s Summary) Finished() bool { return s.Status != Unreadable && !checkpoint.Active(s.Status) }

// List summarises the project's workflows, newest update first. An
// unreadable checkpoint is listed with state "unreadable" rather than
// hiding the workflow.
func (p *Project) List() ([]Summary, error) {
	ids, err := p.WorkflowIDs()
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(ids))
	// updated_at counts seconds: within one, the checkpoint written last
	// is the newer (two commands a second apart are the usual case).
	written := make(map[string]int64, len(ids))
	for _, id := range ids {
		out = append(out, p.summarize(id))
		if fi, err := os.Lstat(filepath.Join(p.workflowsDir(), id, checkpointFile)); err == nil {
			written[id] = fi.ModTime().UnixNano()
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.UpdatedAt != b.UpdatedAt:
			return a.UpdatedAt > b.UpdatedAt
		case written[a.ID] != written[b.ID]:
			return written[a.ID] > written[b.ID]
		}
		return a.ID > b.ID
	})
	return out, nil
}

// WorkflowIDs lists the ids of the project's workflows without reading
// any of them, for callers that need their directories, not their state.
// A linked state or workflows directory, or a file there, is refused
// (exit 2), as every workflow in it would be.
func (p *Project) WorkflowIDs() ([]string, error) {
	if err := p.RefuseLinkedState(); err != nil {
		return nil, err
	}
	entries, err := fsx.ReadDir(p.workflowsDir())
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	var ids []string
	for _, e := range entries {
		// IsDir is false for a symlink: a linked workflow is not listed.
		if e.IsDir() && ValidID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Summary summarises the one workflow id as List would, reading only its
// checkpoint; ok is false when there is no such workflow directory.
func (p *Project) Summary(id string) (s Summary, ok bool) {
	if ValidID(id) != nil {
		return Summary{}, false
	}
	st, err := os.Lstat(filepath.Join(p.workflowsDir(), id))
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && !st.IsDir():
		return Summary{}, false
	case err != nil:
		// There, but not to be looked at: unreadable, as List says of it.
		return Summary{ID: id, CurrentState: Unreadable, Status: Unreadable}, true
	}
	return p.summarize(id), true
}

func (p *Project) summarize(id string) Summary {
	s := Summary{ID: id}
	w := &Workflow{ID: id, Dir: filepath.Join(p.workflowsDir(), id), P: p}
	data, err := w.readCheckpointFile()
	if err != nil || !gjson.ValidBytes(data) {
		s.CurrentState, s.Status = Unreadable, Unreadable
		return s
	}
	v := checkpoint.ViewOf(data)
	s.Command, s.Scope, s.CurrentState, s.Terminal = v.Command, v.Scope, v.CurrentState, v.TerminalState
	s.Status, s.Session, s.UpdatedAt = v.Status, v.Session, v.UpdatedAt
	return s
}
