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

// Kinds of hold.
const (
	HoldApproval = "approval"
	HoldPause    = "pause"
	HoldCancel   = "cancel"
)

// Hold is what a person holds a workflow for, kept in the checkpoint's
// "hold" while it waits (awaiting_approval, paused), and once it is
// cancelled.
type Hold struct {
	Kind    string `json:"kind"`
	Since   string `json:"since"`
	State   string `json:"state,omitempty"` // approval: the gated state to enter
	From    string `json:"from,omitempty"`  // the state the workflow waits in
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	By      string `json:"by,omitempty"`
	Via     string `json:"via,omitempty"`
}

// HoldOf reads the hold of a checkpoint; nil when there is none.
func HoldOf(doc []byte) *Hold {
	raw := gjson.GetBytes(doc, pHold)
	var h Hold
	if !raw.IsObject() || json.Unmarshal([]byte(raw.Raw), &h) != nil || h.Kind == "" {
		return nil
	}
	return &h
}

// Sentence says in words what the hold is: "waits for approval to enter
// implement: Approve the plan", "is paused by ann: lunch".
// Free text is folded onto one line: it ends up in KEY=VALUE output and
// in what a hook tells the model.
func (h *Hold) Sentence() string {
	who := ""
	if h.By != "" {
		who = " by " + kv.OneLine(h.By)
	}
	why := ""
	if h.Reason != "" {
		why = ": " + kv.OneLine(h.Reason)
	}
	switch h.Kind {
	case HoldApproval:
		return fmt.Sprintf("waits for approval to enter %s: %s", h.State, kv.OneLine(h.Message))
	case HoldPause:
		return "is paused" + who + why
	}
	return "was cancelled" + who + why
}

// RejectsTo is the state a rejection at the gate h waits at sends the
// workflow (whose checkpoint is doc) back to: the gate's reject_to, else
// the state it waits in.
func RejectsTo(doc []byte, h *Hold) string {
	g, _ := gateOf(doc, h.State)
	return orDefault(g.RejectTo, h.From)
}

// gateOf is the gate on entering state, if the workflow has one.
func gateOf(doc []byte, state string) (machine.Gate, bool) {
	raw := gjson.GetBytes(doc, pGates+"."+gjson.Escape(state))
	var g machine.Gate
	if !raw.IsObject() || json.Unmarshal([]byte(raw.Raw), &g) != nil {
		return g, false
	}
	return g, true
}

// refuseHeld stops a workflow that a person holds from moving on (exit 6),
// saying what the person runs to let it go.
func refuseHeld(w *store.Workflow, doc []byte) error {
	status := gjson.GetBytes(doc, pStatus).String()
	if !checkpoint.Held(status) {
		return nil
	}
	h := HoldOf(doc)
	if h == nil {
		h = &Hold{Kind: HoldPause}
		if status == checkpoint.AwaitingApproval {
			h.Kind = HoldApproval
		}
	}
	if h.Kind == HoldApproval {
		return fail.Waitingf("workflow %s %s; approve it with `flowstate approve`, or send it back with `flowstate reject --reason TEXT`", w.ID, h.Sentence())
	}
	return fail.Waitingf("workflow %s %s; continue it with `flowstate unpause` (or /flowstate:workflow-resume)", w.ID, h.Sentence())
}

// await holds the workflow in `from` before the gated state `to` and
// returns the exit-6 error that says so.
func (e *editor) await(tx *store.Tx, w *store.Workflow, from, to string, g machine.Gate) error {
	h := Hold{Kind: HoldApproval, Since: checkpoint.Timestamp(tx.Now), State: to, From: from, Message: g.Message}
	e.set(pStatus, checkpoint.AwaitingApproval)
	e.set(pHold, h)
	e.touch(tx.Now)
	tx.Event("gate", map[string]any{"state": to, "from": from, "message": g.Message})
	return refuseHeld(w, e.doc)
}

// approvalPath is where the approval of entering state is kept, in the
// state's own phase_data: a rewind past the state takes it back with the
// rest of the state's data.
func approvalPath(state string) string { return "phase_data." + state + ".approval" }

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
		status, cur := gjson.GetBytes(doc, pStatus).String(), gjson.GetBytes(doc, pCurrent).String()
		h := HoldOf(doc)
		if status != checkpoint.AwaitingApproval || h == nil || h.Kind != HoldApproval {
			if _, gated := gateOf(doc, cur); gated && checkpoint.Active(status) && gjson.GetBytes(doc, approvalPath(cur)).Exists() {
				entered = cur // approved already: a block run twice
				return nil
			}
			return notWaiting(w, doc, "approve")
		}
		ed := editor{doc: doc}
		ed.move(m, h.From, h.State)
		if gjson.GetBytes(ed.doc, pStatus).String() == checkpoint.AwaitingApproval {
			ed.set(pStatus, checkpoint.InProgress)
		}
		ed.delete(pHold)
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
func notWaiting(w *store.Workflow, doc []byte, what string) error {
	if err := refuseFinished(w, doc); err != nil {
		return err
	}
	if h := HoldOf(doc); h != nil && h.Kind == HoldPause {
		return fail.Waitingf("workflow %s %s, and waits for no approval: nothing to %s; continue it with `flowstate unpause`", w.ID, h.Sentence(), what)
	}
	return fail.Refusedf("workflow %s waits for no approval (it is in state %s, %s): nothing to %s", w.ID,
		gjson.GetBytes(doc, pCurrent).String(), gjson.GetBytes(doc, pStatus).String(), what)
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
		doc := tx.Checkpoint
		h := HoldOf(doc)
		if gjson.GetBytes(doc, pStatus).String() != checkpoint.AwaitingApproval || h == nil || h.Kind != HoldApproval {
			// Rejected already, nothing done since: a block run twice.
			if last := gjson.GetBytes(doc, pRewinds+".@reverse.0"); last.Get("kind").String() == "reject" &&
				last.Get("reason").String() == reason && last.Get("revision").Int() == tx.Revision {
				to = last.Get("to").String()
				return nil
			}
			return notWaiting(w, doc, "reject")
		}
		to = RejectsTo(doc, h)
		ed := editor{doc: doc}
		tx.Event("reject", a.fields(map[string]any{"state": h.State, "from": h.From, "to": to, "reason": reason}))
		if err := ed.rewind(tx, w, m, to, rewindCause{kind: "reject", actor: a, reason: reason}); err != nil {
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
		doc := tx.Checkpoint
		switch status := gjson.GetBytes(doc, pStatus).String(); {
		case status == checkpoint.Paused:
			return nil
		case status == checkpoint.AwaitingApproval:
			return fmt.Errorf("%w; pausing it adds nothing (cancel it with `flowstate cancel --reason TEXT`)", refuseHeld(w, doc))
		}
		if err := refuseFinished(w, doc); err != nil {
			return err
		}
		return hold(tx, checkpoint.Paused, Hold{Kind: HoldPause, Reason: reason, By: a.By, Via: a.Via}, "pause")
	})
}

// hold sets the workflow's status and its hold h, from its current state.
func hold(tx *store.Tx, status string, h Hold, event string) error {
	h.Since = checkpoint.Timestamp(tx.Now)
	h.From = gjson.GetBytes(tx.Checkpoint, pCurrent).String()
	ed := editor{doc: tx.Checkpoint}
	ed.set(pStatus, status)
	ed.set(pHold, h)
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
		doc := tx.Checkpoint
		switch gjson.GetBytes(doc, pStatus).String() {
		case checkpoint.Paused:
		case checkpoint.AwaitingApproval:
			return refuseHeld(w, doc)
		default:
			return refuseFinished(w, doc)
		}
		ed := editor{doc: doc}
		ed.set(pStatus, checkpoint.InProgress)
		ed.delete(pHold)
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		tx.Event("unpause", a.fields(map[string]any{"state": gjson.GetBytes(doc, pCurrent).String()}))
		changed = true
		return ed.err
	})
	return changed, err
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
		if gjson.GetBytes(tx.Checkpoint, pStatus).String() == checkpoint.Cancelled {
			return nil
		}
		if err := refuseFinished(w, tx.Checkpoint); err != nil {
			return err
		}
		return hold(tx, checkpoint.Cancelled, Hold{Kind: HoldCancel, Reason: reason, By: a.By, Via: a.Via}, "cancel")
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
		if last := gjson.GetBytes(tx.Checkpoint, pRewinds+".@reverse.0"); last.Get("to").String() == to &&
			gjson.GetBytes(tx.Checkpoint, pCurrent).String() == to && last.Get("revision").Int() == tx.Revision {
			return nil
		}
		ed := editor{doc: tx.Checkpoint}
		if err := ed.rewind(tx, w, m, to, rewindCause{kind: "rewind", actor: a, reason: reason}); err != nil {
			return err
		}
		tx.Checkpoint = ed.doc
		return ed.err
	})
}

// rewindCause is why a rewind happens: flowstate rewind, or a rejection.
type rewindCause struct {
	kind   string
	actor  Actor
	reason string
}

// rewind is Rewind's change of the document in e, inside tx.
// The workers of a state with work are recorded under its definition's
// records key (supervisor_state.<key>): the rewind takes them back too.
func (e *editor) rewind(tx *store.Tx, w *store.Workflow, m *machine.Machine, to string, c rewindCause) error {
	// A complete workflow can be taken back and done again; one given up
	// (failed, abandoned, cancelled) cannot.
	status := gjson.GetBytes(e.doc, pStatus).String()
	if status != checkpoint.Complete {
		if err := refuseFinished(w, e.doc); err != nil {
			return err
		}
	}
	cur := gjson.GetBytes(e.doc, pCurrent).String()
	var completed []string
	for _, s := range gjson.GetBytes(e.doc, pCompleted).Array() {
		completed = append(completed, s.String())
	}
	i := slices.Index(completed, to)
	if i < 0 && to != cur {
		return fail.Refusedf("workflow %s has not been through %s: rewind goes back to a state it completed (%s) or to its current state %s", w.ID, to, joinStates(completed), cur)
	}
	if i < 0 {
		i = len(completed)
	}
	cleared := slices.Clone(completed[i:])
	for _, s := range []string{cur, to} {
		if !slices.Contains(cleared, s) {
			cleared = append(cleared, s)
		}
	}
	entry := map[string]any{"at": checkpoint.Timestamp(tx.Now), "from": cur, "to": to, "kind": c.kind,
		"states": cleared, "revision": tx.Revision + 1}
	c.actor.fields(entry)
	if c.reason != "" {
		entry["reason"] = c.reason
	}
	taken := map[string]map[string]json.RawMessage{"phase_data": {}, "supervisor_state": {}, "retries": {}}
	take := func(group, key, path string) {
		if r := gjson.GetBytes(e.doc, path); r.Exists() {
			taken[group][key] = json.RawMessage(r.Raw)
			e.delete(path)
		}
	}
	var earlier []string
	for _, s := range cleared {
		if s != m.Initial { // the workflow's own settings (coordination) live there
			if s == to {
				for _, a := range gjson.GetBytes(e.doc, "phase_data."+gjson.Escape(s)+".artifacts").Array() {
					earlier = append(earlier, a.String())
				}
			}
			take("phase_data", s, "phase_data."+gjson.Escape(s))
		}
		if work, ok := m.WorkOf(s); ok {
			key := work.RecordsKey(s)
			take("supervisor_state", key, "supervisor_state."+gjson.Escape(key))
		}
		take("retries", s, pRetries+"."+gjson.Escape(s))
	}
	for group, kept := range taken {
		if len(kept) > 0 {
			entry[group] = kept
		}
	}
	if failed := gjson.GetBytes(e.doc, pFailed).String(); slices.Contains(cleared, failed) {
		entry["error"] = json.RawMessage(gjson.GetBytes(e.doc, "error_state").Raw)
		e.setRaw(pLastError, "null")
		e.setRaw(pFailed, "null")
		e.setRaw(pRetryCount, "0")
	}
	b, _ := json.Marshal(completed[:i])
	e.setRaw(pCompleted, string(b))
	e.set(pCurrent, to)
	if status != checkpoint.Paused {
		e.set(pStatus, checkpoint.InProgress)
		e.delete(pHold)
	}
	if c.reason != "" {
		fb := c.actor.fields(map[string]any{"kind": c.kind, "reason": c.reason, "at": checkpoint.Timestamp(tx.Now)})
		if len(earlier) > 0 {
			fb["earlier"] = earlier
		}
		e.set("phase_data."+gjson.Escape(to)+".feedback", fb)
	}
	var history []json.RawMessage
	if raw := gjson.GetBytes(e.doc, pRewinds); raw.IsArray() {
		for _, r := range raw.Array() {
			history = append(history, json.RawMessage(r.Raw))
		}
	}
	eb, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	hb, _ := json.Marshal(append(history, eb))
	e.setRaw(pRewinds, string(hb))
	e.touch(tx.Now)
	ev := c.actor.fields(map[string]any{"from": cur, "to": to, "states": cleared})
	if c.reason != "" {
		ev["reason"] = c.reason
	}
	tx.Event("rewind", ev)
	return e.err
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
