package sm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Actor is the person who acts on a workflow from outside its command
// (approve, reject, pause, unpause, cancel, rewind), as the events and the
// checkpoint record them.
type Actor struct {
	By  string // the person's name (FLOWSTATE_USER, else USER)
	Via string // "shell", or "claude-code" from a Claude Code session
}

// ActorFrom is the person running a command, from its environment:
// FLOWSTATE_USER (set it where USER is not the person, e.g. a shared
// account), else USER, else LOGNAME; from a Claude Code session when
// CLAUDE_CODE_SESSION_ID is set.
func ActorFrom(getenv func(string) string) Actor {
	a := Actor{By: "unknown", Via: "shell"}
	for _, v := range []string{"FLOWSTATE_USER", "USER", "LOGNAME"} {
		if name := strings.TrimSpace(getenv(v)); name != "" {
			a.By = kv.OneLine(name)
			break
		}
	}
	if getenv("CLAUDE_CODE_SESSION_ID") != "" {
		a.Via = "claude-code"
	}
	return a
}

func (a Actor) fields(more map[string]any) map[string]any {
	more["by"] = a.By
	if a.Via != "" {
		more["via"] = a.Via
	}
	return more
}

// RejectsTo is the state a rejection at the gate h waits at sends the
// workflow (whose checkpoint's view is v) back to: the gate's reject_to,
// else the state it waits in.
func RejectsTo(v checkpoint.View, h *checkpoint.Hold) string {
	g, _ := v.Gate(h.State)
	return orDefault(g.RejectTo, h.From)
}

// refuseHeld stops a workflow that a person holds from moving on (exit 6),
// saying what the person runs to let it go.
func refuseHeld(w *store.Workflow, v checkpoint.View) error {
	if !checkpoint.Held(v.Status) {
		return nil
	}
	h := v.Hold
	if h == nil {
		h = &checkpoint.Hold{Kind: checkpoint.HoldPause}
		if v.Status == checkpoint.AwaitingApproval {
			h.Kind = checkpoint.HoldApproval
		}
	}
	switch h.Kind {
	case checkpoint.HoldApproval:
		return fail.Waitingf("workflow %s %s; approve it with `flowstate approve`, or send it back with `flowstate reject --reason TEXT`", w.ID, h.Sentence())
	case checkpoint.HoldBudget:
		return fail.Waitingf("workflow %s %s; a person allows more with `flowstate approve --budget AMOUNT` (tokens, or money in your prices' currency), or cancels it with `flowstate cancel --reason TEXT`", w.ID, h.Sentence())
	}
	return fail.Waitingf("workflow %s %s; continue it with `flowstate unpause`, or resume its command in Claude Code", w.ID, h.Sentence())
}

// await holds the workflow in `from` before the gated state `to` and
// returns the exit-6 error that says so.
func (e *editor) await(tx *store.Tx, w *store.Workflow, from, to string, g machine.Gate) error {
	h := checkpoint.Hold{Kind: checkpoint.HoldApproval, Since: checkpoint.Timestamp(tx.Now), State: to, From: from, Message: g.Message}
	e.set(checkpoint.PathStatus, checkpoint.AwaitingApproval)
	e.set(checkpoint.PathHold, h)
	e.touch(tx.Now)
	tx.Event("gate", map[string]any{"state": to, "from": from, "message": g.Message})
	return refuseHeld(w, checkpoint.ViewOf(e.doc))
}

// approvalPath is where the approval of entering state is kept, in the
// state's own phase_data: a rewind past the state takes it back with the
// rest of the state's data.
func approvalPath(state string) string { return checkpoint.PhaseData(state, checkpoint.PhaseApproval) }

// Approve lets a workflow that waits at a gate enter the gated state, and
// records who approved it, when, and their note. It returns the state
// entered. Approving again once it was entered changes nothing.
func Approve(w *store.Workflow, a Actor, note string) (entered string, err error) {
	m, err := LoadMachine(w)
	if err != nil {
		return "", err
	}
	err = w.Update(func(tx *store.Tx) error {
		doc := tx.Checkpoint
		v := checkpoint.ViewOf(doc)
		status, cur, h := v.Status, v.CurrentState, v.Hold
		if h != nil && h.Kind == checkpoint.HoldBudget {
			return refuseHeld(w, v) // more spending is allowed with an amount: ApproveBudget
		}
		if status != checkpoint.AwaitingApproval || h == nil || h.Kind != checkpoint.HoldApproval {
			if _, gated := v.Gate(cur); gated && checkpoint.Active(status) && gjson.GetBytes(doc, approvalPath(cur)).Exists() {
				entered = cur // approved already: a block run twice
				return nil
			}
			return notWaiting(w, v, "approve")
		}
		ed := editor{doc: doc}
		ed.move(m, h.From, h.State, v.Error.FailedState)
		if gjson.GetBytes(ed.doc, checkpoint.PathStatus).String() == checkpoint.AwaitingApproval {
			ed.set(checkpoint.PathStatus, checkpoint.InProgress)
		}
		ed.delete(checkpoint.PathHold)
		rec := a.fields(map[string]any{"at": checkpoint.Timestamp(tx.Now)})
		if note != "" {
			rec["note"] = note
		}
		ed.set(approvalPath(h.State), rec)
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		ev := a.fields(map[string]any{"state": h.State, "from": h.From})
		if note != "" {
			ev["note"] = note
		}
		tx.Event("approve", ev)
		tx.Event("transition", map[string]any{"from": h.From, "to": h.State, "reason": "approved by " + a.By})
		entered = h.State
		return ed.err
	})
	return entered, err
}

// notWaiting refuses a decision (approve, reject) on a workflow that waits
// for none.
func notWaiting(w *store.Workflow, v checkpoint.View, what string) error {
	if err := refuseFinished(w, v); err != nil {
		return err
	}
	if h := v.Hold; h != nil && h.Kind == checkpoint.HoldPause {
		return fail.Waitingf("workflow %s %s, and waits for no approval: nothing to %s; continue it with `flowstate unpause`", w.ID, h.Sentence(), what)
	}
	return fail.Refusedf("workflow %s waits for no approval (it is in state %s, %s): nothing to %s", w.ID, v.CurrentState, v.Status, what)
}

// Reject sends a workflow that waits at a gate back to the state the gate
// names (by default the state it waits in), whose work is then done again,
// with the reason kept for its workers (phase_data.<state>.feedback). It
// is a rewind (see Rewind) recorded as a rejection. It returns the state
// the workflow went back to.
func Reject(w *store.Workflow, a Actor, reason string) (to string, err error) {
	if reason == "" {
		return "", fail.Usagef("reject needs --reason TEXT: why, for the record and for whoever does the work again")
	}
	m, err := LoadMachine(w)
	if err != nil {
		return "", err
	}
	err = w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		h := v.Hold
		if v.Status != checkpoint.AwaitingApproval || h == nil || h.Kind != checkpoint.HoldApproval {
			// Rejected already, nothing done since: a block run twice.
			if last := v.LastRewind; v.Rewinds > 0 && last.Kind == "reject" && last.Reason == reason && last.Revision == tx.Revision {
				to = last.To
				return nil
			}
			return notWaiting(w, v, "reject")
		}
		to = RejectsTo(v, h)
		ed := editor{doc: tx.Checkpoint}
		tx.Event("reject", a.fields(map[string]any{"state": h.State, "from": h.From, "to": to, "reason": reason}))
		if err := ed.rewind(tx, w, m, v, to, rewindCause{kind: "reject", actor: a, reason: reason}); err != nil {
			return err
		}
		tx.Checkpoint = ed.doc
		return ed.err
	})
	return to, err
}

// Pause holds an in-progress workflow until a person continues it
// (Unpause, or /workflow-resume): transitions are refused meanwhile (exit
// 6), while agents already at work are still recorded. Pausing a paused
// workflow changes nothing.
func Pause(w *store.Workflow, a Actor, reason string) error {
	return w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		switch v.Status {
		case checkpoint.Paused:
			return nil
		case checkpoint.AwaitingApproval:
			return fmt.Errorf("%w; pausing it adds nothing (cancel it with `flowstate cancel --reason TEXT`)", refuseHeld(w, v))
		}
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		return hold(tx, checkpoint.Paused, checkpoint.Hold{Kind: checkpoint.HoldPause, From: v.CurrentState, Reason: reason, By: a.By, Via: a.Via}, "pause")
	})
}

// hold sets the workflow's status and its hold h, which names the state
// it holds the workflow in (From).
func hold(tx *store.Tx, status string, h checkpoint.Hold, event string) error {
	h.Since = checkpoint.Timestamp(tx.Now)
	ed := editor{doc: tx.Checkpoint}
	ed.set(checkpoint.PathStatus, status)
	ed.set(checkpoint.PathHold, h)
	ed.touch(tx.Now)
	tx.Checkpoint = ed.doc
	ev := Actor{h.By, h.Via}.fields(map[string]any{"state": h.From})
	if h.Reason != "" {
		ev["reason"] = h.Reason
	}
	tx.Event(event, ev)
	return ed.err
}

// Unpause lets a paused workflow go on; changed is false when it was not
// paused. A workflow that waits for approval is not paused: that is exit
// 6, naming approve and reject.
func Unpause(w *store.Workflow, a Actor) (changed bool, err error) {
	err = w.Update(func(tx *store.Tx) error {
		changed, err = UnpauseIn(tx, w, a)
		return err
	})
	return changed, err
}

// UnpauseIn is Unpause inside tx, for a step that changes the workflow in
// one write.
func UnpauseIn(tx *store.Tx, w *store.Workflow, a Actor) (changed bool, err error) {
	v := checkpoint.ViewOf(tx.Checkpoint)
	switch v.Status {
	case checkpoint.Paused:
	case checkpoint.AwaitingApproval:
		return false, refuseHeld(w, v)
	default:
		return false, refuseFinished(w, v)
	}
	ed := editor{doc: tx.Checkpoint}
	ed.set(checkpoint.PathStatus, checkpoint.InProgress)
	ed.delete(checkpoint.PathHold)
	ed.touch(tx.Now)
	tx.Checkpoint = ed.doc
	tx.Event("unpause", a.fields(map[string]any{"state": v.CurrentState}))
	return true, ed.err
}

// Cancel finishes an unfinished workflow for good, with the reason: its
// status becomes cancelled and it refuses every change from then on (exit
// 3). Agents already at work are still recorded as events. Cancelling it
// again changes nothing.
func Cancel(w *store.Workflow, a Actor, reason string) error {
	if reason == "" {
		return fail.Usagef("cancel needs --reason TEXT: why the workflow is given up, for the record")
	}
	return w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		if v.Status == checkpoint.Cancelled {
			return nil
		}
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		return hold(tx, checkpoint.Cancelled, checkpoint.Hold{Kind: checkpoint.HoldCancel, From: v.CurrentState, Reason: reason, By: a.By, Via: a.Via}, "cancel")
	})
}

// Rewind takes the workflow back to `to`, a state it has completed or its
// current state (whose work is then done again), in one locked write.
// The states from `to` on are no longer completed; what was recorded for
// them (their phase_data, their workers' records, retries and a failure
// of theirs) moves into the checkpoint's "rewinds" history, so nothing is
// lost and nothing is re-used: their workers run again, writing new
// artifacts beside the old ones. reason, when given, is kept for the
// state's workers (phase_data.<to>.feedback). A workflow waiting for
// approval goes back to in_progress; a paused one stays paused. Rewinding
// to the current state again with nothing recorded since changes nothing.
func Rewind(w *store.Workflow, to string, a Actor, reason string) error {
	m, err := LoadMachine(w)
	if err != nil {
		return err
	}
	if !m.HasState(to) {
		return fail.Usagef("rewind: %q is not a state; states are: %s", to, joinStates(m.States()))
	}
	return w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		if last := v.LastRewind; v.Rewinds > 0 && last.To == to && v.CurrentState == to && last.Revision == tx.Revision {
			return nil
		}
		ed := editor{doc: tx.Checkpoint}
		if err := ed.rewind(tx, w, m, v, to, rewindCause{kind: "rewind", actor: a, reason: reason}); err != nil {
			return err
		}
		tx.Checkpoint = ed.doc
		return ed.err
	})
}

// RetakeIn takes the workflow, inside tx, back to `to`, a state it
// completed, to run again the workers of `to` whose failure was accepted
// (resume --retry-failed). Unlike a rewind it keeps what `to` recorded,
// so only those workers run; the states after it are taken back as a
// rewind takes them, since their work was done on the result without
// those workers, and are done again.
func RetakeIn(tx *store.Tx, w *store.Workflow, to string, a Actor) error {
	m, err := LoadMachine(w)
	if err != nil {
		return err
	}
	ed := editor{doc: tx.Checkpoint}
	if err := ed.rewind(tx, w, m, checkpoint.ViewOf(tx.Checkpoint), to, rewindCause{kind: checkpoint.RetryRewind, actor: a, keep: true}); err != nil {
		return err
	}
	tx.Checkpoint = ed.doc
	return ed.err
}

// rewindCause is why a rewind happens: flowstate rewind, a rejection, or
// a retry of accepted failures (keep: the state gone back to keeps its
// records).
type rewindCause struct {
	kind   string
	actor  Actor
	reason string
	keep   bool
}

// rewind is Rewind's change of the document in e, whose view is v,
// inside tx. The workers of a state with work are recorded under its
// definition's records key (supervisor_state.<key>): the rewind takes
// them back too.
func (e *editor) rewind(tx *store.Tx, w *store.Workflow, m *machine.Machine, v checkpoint.View, to string, c rewindCause) error {
	// A complete workflow can be taken back and done again; one given up
	// (failed, abandoned, cancelled) cannot.
	if v.Status != checkpoint.Complete {
		if err := refuseFinished(w, v); err != nil {
			return err
		}
	}
	kept, cleared, err := rewound(w, v, to)
	if err != nil {
		return err
	}
	entry := map[string]any{"at": checkpoint.Timestamp(tx.Now), "from": v.CurrentState, "to": to, "kind": c.kind,
		"states": cleared, "revision": tx.Revision + 1}
	c.actor.fields(entry)
	if c.reason != "" {
		entry["reason"] = c.reason
	}
	taken := cleared
	if c.keep {
		taken = slices.DeleteFunc(slices.Clone(cleared), func(s string) bool { return s == to })
	}
	earlier := e.takeBack(m, taken, to, entry)
	if slices.Contains(cleared, v.Error.FailedState) {
		// As it is now, without the retries of the states taken back.
		entry["error"] = json.RawMessage(gjson.GetBytes(e.doc, checkpoint.PathErrorState).Raw)
		e.clearError()
	}
	b, _ := json.Marshal(kept)
	e.setRaw(checkpoint.PathCompletedStates, string(b))
	e.set(checkpoint.PathCurrentState, to)
	if v.Status != checkpoint.Paused {
		e.set(checkpoint.PathStatus, checkpoint.InProgress)
		e.delete(checkpoint.PathHold)
	}
	if c.reason != "" {
		fb := c.actor.fields(map[string]any{"kind": c.kind, "reason": c.reason, "at": checkpoint.Timestamp(tx.Now)})
		if len(earlier) > 0 {
			fb["earlier"] = earlier
		}
		e.set(checkpoint.PhaseData(to, checkpoint.PhaseFeedback), fb)
	}
	if err := e.appendRewind(entry); err != nil {
		return err
	}
	e.touch(tx.Now)
	ev := c.actor.fields(map[string]any{"from": v.CurrentState, "to": to, "states": cleared})
	if c.keep {
		ev["kind"] = c.kind // history tells a retry from a person's rewind
	}
	if c.reason != "" {
		ev["reason"] = c.reason
	}
	tx.Event("rewind", ev)
	return e.err
}

// rewound splits the states a rewind to `to` keeps completed from those it
// clears: the states from `to` on, with the current one and `to`. `to`
// must be a state the workflow completed, or its current one.
func rewound(w *store.Workflow, v checkpoint.View, to string) (kept, cleared []string, err error) {
	cur, completed := v.CurrentState, v.CompletedStates
	i := slices.Index(completed, to)
	switch {
	case i < 0 && to != cur:
		return nil, nil, fail.Refusedf("workflow %s has not been through %s: rewind goes back to a state it completed (%s) or to its current state %s", w.ID, to, joinStates(completed), cur)
	case i < 0:
		i = len(completed)
	}
	cleared = slices.Clone(completed[i:])
	for _, s := range []string{cur, to} {
		if !slices.Contains(cleared, s) {
			cleared = append(cleared, s)
		}
	}
	return completed[:i], cleared, nil
}

// takeBack moves what was recorded for the cleared states (their
// phase_data, their workers' records, their retries) into the rewind's
// entry, kept under the names of the fields they came from, and returns
// the artifacts `to` had delivered (what a person sent back).
func (e *editor) takeBack(m *machine.Machine, cleared []string, to string, entry map[string]any) (earlier []string) {
	taken := map[string]map[string]json.RawMessage{checkpoint.PathPhaseData: {}, checkpoint.PathSupervisorState: {}, "retries": {}}
	take := func(group, key, path string) {
		if r := gjson.GetBytes(e.doc, path); r.Exists() {
			taken[group][key] = json.RawMessage(r.Raw)
			e.delete(path)
		}
	}
	for _, s := range cleared {
		if s == to && s != m.Initial {
			for _, a := range gjson.GetBytes(e.doc, checkpoint.PhaseData(s, checkpoint.PhaseArtifacts)).Array() {
				earlier = append(earlier, a.String())
			}
		}
		if s != m.Initial { // the workflow's own settings (coordination) live there
			take(checkpoint.PathPhaseData, s, checkpoint.PhaseData(s))
		}
		if work, ok := m.WorkOf(s); ok {
			key := work.RecordsKey(s)
			take(checkpoint.PathSupervisorState, key, checkpoint.SupervisorState(key))
		}
		take("retries", s, checkpoint.Retries(s))
	}
	for group, kept := range taken {
		if len(kept) > 0 {
			entry[group] = kept
		}
	}
	return earlier
}

// appendRewind adds entry to the rewinds history.
func (e *editor) appendRewind(entry map[string]any) error {
	var history []json.RawMessage
	if raw := gjson.GetBytes(e.doc, checkpoint.PathRewinds); raw.IsArray() {
		for _, r := range raw.Array() {
			history = append(history, json.RawMessage(r.Raw))
		}
	}
	eb, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	hb, _ := json.Marshal(append(history, eb))
	e.setRaw(checkpoint.PathRewinds, string(hb))
	return nil
}

func joinStates(states []string) string {
	if len(states) == 0 {
		return "none"
	}
	b, _ := json.Marshal(states)
	return string(b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
