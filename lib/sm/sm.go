// Package sm owns the state-machine operations on a stored workflow:
// init, transition, fail, retry, next and status. It composes machine
// (the rules), checkpoint (the document) and store (the locked files);
// it prints nothing and parses no flags.
package sm

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// DefaultMaxRetries is how often one state may be retried after failing.
const DefaultMaxRetries = 2

// InitParams describes a new workflow.
type InitParams struct {
	ID             string // optional; generated when empty
	Description    string
	Command        string
	Scope          string
	Classification classify.Classification
	Machine        *machine.Machine
	MachineJSON    []byte // the custom machine as given, nil for the default
	Session        string // CLAUDE_CODE_SESSION_ID, may be empty
	// Gates adds approval gates to the machine's own (sm-init --gate), a
	// gate given here replacing the machine's on the same state.
	Gates map[string]machine.Gate
	// Agents are the agents that belong to the workflow besides those its
	// definition names (sm-init --agents): the hooks hold them to the
	// protocol.
	Agents []string
	// PhaseData are fields of the initial state's phase_data, written with
	// the workflow (how the command coordinates it, say).
	PhaseData map[string]string
	// Budget is the workflow's own spend limit (CheckBudget); zero: the
	// project's, if it has one.
	Budget usage.Budget
	// Since is when the user last invoked a command in the session (the
	// UserPromptSubmit hook's record); zero when unknown. The session's
	// unfinished workflow of the same request created since then is this
	// command's own: its start block is running again.
	Since time.Time
}

// Init creates the workflow, its first checkpoint, and points the
// session at it. Run again, it creates nothing: the same request (command,
// description and scope) answers the workflow it created (again is then
// true), found by its --workflow id, or else as the session's current
// unfinished workflow created since the user's latest command (ip.Since).
// A start block is safe to repeat; the user's next command starts anew.
func Init(p *store.Project, ip InitParams) (w *store.Workflow, again bool, err error) {
	if w, again, err = initAgain(p, ip); again || err != nil {
		return w, again, err
	}
	w, err = create(p, ip)
	return w, false, err
}

// initAgain finds the workflow a repeated Init created; an id taken by
// another request is a usage error.
func initAgain(p *store.Project, ip InitParams) (*store.Workflow, bool, error) {
	id, implicit := againID(p, ip)
	if id == "" || store.ValidID(id) != nil {
		return nil, false, nil
	}
	if _, ok := p.Summary(id); !ok {
		return nil, false, nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil, false, err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, false, err
	}
	v := checkpoint.ViewOf(doc)
	same := v.Command == ip.Command && v.Scope == ip.Scope && v.Description == ip.Description
	switch {
	case implicit:
		// Only this command's own start, run again: the user's next
		// command with the same words starts a new workflow.
		return w, same && (v.Session == "" || v.Session == ip.Session) && checkpoint.Active(v.Status) && !createdBefore(v.CreatedAt, ip.Since), nil
	case same:
		// Named by its id, from any session: a command that continues
		// its workflow in a new session (a resume) points that session
		// at it, so that its next blocks find it.
		if validSession(ip.Session) {
			if err := p.SetSession(ip.Session, id); err != nil {
				return nil, false, err
			}
		}
		return w, true, nil
	}
	return nil, false, fail.Usagef("workflow %q already exists in %s for another request (%s: %q); choose another --workflow id or omit it",
		id, p.Dir, v.Command, v.Description)
}

// againID is the workflow a repeated Init may have created: the one
// --workflow names, or else (implicit) the session's current one, when
// the user's latest command is known.
func againID(p *store.Project, ip InitParams) (id string, implicit bool) {
	if ip.ID == "" && !ip.Since.IsZero() && validSession(ip.Session) {
		id, _ = p.SessionWorkflow(ip.Session)
		return id, true
	}
	return ip.ID, false
}

func validSession(s string) bool { return s != "" && store.ValidID(s) == nil }

// createdBefore reports whether a workflow created at (RFC 3339) was
// created before t; an unreadable time counts as before.
func createdBefore(at string, t time.Time) bool {
	c, err := time.Parse(time.RFC3339Nano, at)
	return err != nil || c.Before(t.Truncate(time.Second))
}

// create is Init's first run.
func create(p *store.Project, ip InitParams) (*store.Workflow, error) {
	id, cp, err := Document(p, ip)
	if err != nil {
		return nil, err
	}
	return p.Create(id, cp, ip.MachineJSON, ip.Session)
}

// Document checks ip and builds the first checkpoint of the workflow
// create would make, and its id, without creating anything.
func Document(p *store.Project, ip InitParams) (id string, cp []byte, err error) {
	if ip.Description == "" || ip.Command == "" {
		return "", nil, fail.Usagef("sm-init needs --description TEXT and --command NAME")
	}
	// sm-status and state-load print the command as a bare KEY=VALUE
	// line: a newline in it would print lines of its own choosing
	// (CURRENT_STATE=complete). A command's name cannot; the slash
	// command's, /coordinate, is how the bash libraries' commands pass it.
	if err := protocol.CheckCommandName(strings.TrimPrefix(ip.Command, "/")); err != nil {
		return "", nil, fmt.Errorf("--command: %w", err)
	}
	m := ip.Machine
	scope, err := m.Scope(ip.Scope)
	if err != nil {
		return "", nil, err
	}
	now := p.Now()
	id = ip.ID
	if id == "" {
		id = store.NewID(ip.Command, now)
	} else if err := store.ValidID(id); err != nil {
		return "", nil, fmt.Errorf("--workflow: %w", err)
	}
	c := ip.Classification
	var details json.RawMessage
	if len(c.TopicDetails) > 0 {
		if details, err = json.Marshal(c.TopicDetails); err != nil {
			return "", nil, err
		}
	}
	cp, err = checkpoint.New(checkpoint.Params{
		WorkflowID:    id,
		Command:       ip.Command,
		Description:   ip.Description,
		Scope:         ip.Scope,
		ProjectName:   filepath.Base(p.Dir),
		InitialState:  m.Initial,
		TerminalState: scope.Terminal,
		Transitions:   m.Transitions,
		Classification: checkpoint.Classification{
			WorkflowType:       c.WorkflowType,
			ResearchComplexity: c.ResearchComplexity,
			ResearchTopics:     c.ResearchTopics,
			Confidence:         c.Confidence,
			Reasoning:          c.Reasoning,
			ClassifiedAt:       checkpoint.Timestamp(now),
			TopicDetails:       details,
		},
		Now: now,
	})
	if err != nil {
		return "", nil, err
	}
	if ip.Session != "" {
		// Recorded so that another session's blocks never pick it up.
		if cp, err = sjson.SetBytes(cp, checkpoint.PathSession, ip.Session); err != nil {
			return "", nil, err
		}
	}
	// The workflow keeps its gates in the checkpoint: the one place a
	// transition reads them, whichever way they were given.
	gates := maps.Clone(m.Gates)
	if gates == nil {
		gates = map[string]machine.Gate{}
	}
	maps.Copy(gates, ip.Gates)
	if err := m.CheckGates(gates); err != nil {
		return "", nil, err
	}
	if len(gates) > 0 {
		if cp, err = sjson.SetBytes(cp, checkpoint.PathGates, gates); err != nil {
			return "", nil, err
		}
	}
	cp, err = withGiven(cp, ip, m.Initial)
	return id, cp, err
}

// withGiven adds to a first checkpoint what ip gives besides the
// request: its agents, its spend limit, its initial phase data.
func withGiven(cp []byte, ip InitParams, initial string) ([]byte, error) {
	var err error
	if len(ip.Agents) > 0 {
		if cp, err = sjson.SetBytes(cp, checkpoint.PathAgents, ip.Agents); err != nil {
			return nil, err
		}
	}
	if !ip.Budget.IsZero() {
		if cp, err = sjson.SetBytes(cp, checkpoint.PathBudget, ip.Budget); err != nil {
			return nil, err
		}
	}
	// Sorted, so the checkpoint's bytes do not depend on map order.
	for _, k := range slices.Sorted(maps.Keys(ip.PhaseData)) {
		if cp, err = sjson.SetBytes(cp, checkpoint.PhaseData(initial, k), ip.PhaseData[k]); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// LoadMachine returns the workflow's machine: its custom one or the default.
func LoadMachine(w *store.Workflow) (*machine.Machine, error) {
	b, err := w.MachineJSON()
	if err != nil {
		return nil, fmt.Errorf("workflow %s: read machine: %w", w.ID, err)
	}
	if b == nil {
		return machine.Default(), nil
	}
	m, err := machine.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", w.ID, err)
	}
	return m, nil
}

// Load reads the workflow's checkpoint and its machine, for those that
// show or answer both.
func Load(w *store.Workflow) ([]byte, *machine.Machine, error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, nil, err
	}
	m, err := LoadMachine(w)
	return doc, m, err
}

// Option refines a Transition.
type Option func(*options)

type options struct {
	from  string
	patch []byte
}

// From makes the transition conditional: it is refused (exit 3) unless
// the workflow is in state from, or already in the target state (a
// block run again).
func From(state string) Option { return func(o *options) { o.from = state } }

// WithCheckpoint merges the JSON object patch into the checkpoint
// (checkpoint.Merge) in the same locked write as the transition; also
// when the workflow is already in the target state, since merging again
// changes nothing.
func WithCheckpoint(patch []byte) Option { return func(o *options) { o.patch = patch } }

// Transition moves the workflow to state `to`. It reports changed=false
// (and writes no transition) when the workflow is already there. A
// workflow that a person holds (awaiting approval, paused) does not move:
// exit 6. Nor does one whose target has a gate: the workflow then waits
// for a person's approval (status awaiting_approval), nothing is merged,
// and Transition returns the exit-6 error that says what to run.
func Transition(w *store.Workflow, to, reason string, opts ...Option) (changed bool, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.patch != nil {
		if err := checkpoint.CheckMerge(o.patch); err != nil {
			return false, fmt.Errorf("workflow %s: %w; nothing was written", w.ID, err) // before the lock
		}
	}
	m, err := LoadMachine(w)
	if err != nil {
		return false, err
	}
	if o.from != "" && !m.HasState(o.from) {
		return false, fail.Refusedf("workflow %s: unknown state %q; states are: %s", w.ID, o.from, strings.Join(m.States(), ", "))
	}
	var waiting error
	err = w.Update(func(tx *store.Tx) error {
		doc := tx.Checkpoint
		v := checkpoint.ViewOf(doc)
		from := v.CurrentState
		if o.from != "" && from != o.from && from != to {
			return fail.Refusedf("workflow %s is in %q, not %q: refusing %s -> %s", w.ID, from, o.from, o.from, to)
		}
		same, err := m.Check(v.Scope, from, to, v.TerminalState)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		// Already there stays a no-op even when finished, so a block that
		// is run again still succeeds; moving on is refused.
		if same {
			return mergeInto(w, tx, doc, o.patch)
		}
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		if err := refuseHeld(w, v); err != nil {
			return err
		}
		ed := editor{doc: doc}
		if gate, ok := v.Gate(to); ok {
			waiting = ed.await(tx, w, from, to, gate)
			tx.Checkpoint = ed.doc
			return ed.err
		}
		ed.move(m, from, to, v.Error.FailedState)
		ed.touch(tx.Now)
		if ed.err != nil {
			return ed.err
		}
		tx.Checkpoint = ed.doc
		changed = true
		fields := map[string]any{"from": from, "to": to}
		if reason != "" {
			fields["reason"] = reason
		}
		tx.Event("transition", fields)
		return mergeInto(w, tx, tx.Checkpoint, o.patch)
	})
	if err == nil {
		err = waiting
	}
	return changed, err
}

// move sets the current state to `to`, from `from`, as a transition does;
// failed is the workflow's failed state ("" for none).
func (e *editor) move(m *machine.Machine, from, to, failed string) {
	e.set(checkpoint.PathCurrentState, to)
	e.addCompleted(from)
	// Entering a state with no way out (complete) ends the workflow.
	// Entering any other terminal state starts its last phase: the
	// workflow is finished only when that phase's work is done (Finish),
	// so a crash inside it still leaves it resumable.
	if len(m.Transitions[to]) == 0 {
		e.addCompleted(to)
		e.set(checkpoint.PathStatus, checkpoint.Complete)
	}
	// Leaving the failed state forward (not into its recovery) ends the
	// error; the retry counts stay as history.
	if failed == from && m.Recovery[from] != to {
		e.clearError()
	}
}

// clearError ends the workflow's error; the retries used stay as history.
func (e *editor) clearError() {
	e.setRaw(checkpoint.PathLastError, "null")
	e.setRaw(checkpoint.PathFailedState, "null")
	e.setRaw(checkpoint.PathRetryCount, "0")
}

// Statuses a workflow can be finished with (cancel has its own command,
// which records why).
var finishStatuses = []string{checkpoint.Complete, checkpoint.Failed, checkpoint.Abandoned}

// mergeInto merges patch, if any, into doc as the transaction's
// checkpoint; like checkpoint-set, a merge records no event of its own.
func mergeInto(w *store.Workflow, tx *store.Tx, doc, patch []byte) error {
	if patch == nil {
		return nil
	}
	out, err := checkpoint.Merge(doc, patch, tx.Now)
	if err != nil {
		return fmt.Errorf("workflow %s: %w; nothing was written", w.ID, err)
	}
	tx.Checkpoint = out
	return nil
}

// refuseFinished stops every change to a finished workflow (exit 3):
// otherwise an abandoned workflow could be moved on, and reaching
// complete would rewrite its status. Callers run it inside Update, so the
// status it reads (in v) is the one the write would replace.
func refuseFinished(w *store.Workflow, v checkpoint.View) error {
	if checkpoint.Active(v.Status) {
		return nil
	}
	if v.Status == checkpoint.Cancelled && v.Hold != nil {
		return fail.Refusedf("workflow %s %s; it refuses every change: start a new one with sm-init", w.ID, v.Hold.Sentence())
	}
	return fail.Refusedf("workflow %s is finished (%s); start a new one with sm-init", w.ID, v.Status)
}

// Finish marks the workflow finished with status: complete (only in its
// terminal state, whose work is then done), failed or abandoned (any
// time). Finished workflows are no longer active: discovery and the
// session hooks pass over them. Finishing again with the same status is
// a no-op; with another one it is refused.
func Finish(w *store.Workflow, status string) error {
	if !slices.Contains(finishStatuses, status) {
		return fail.Usagef("--status %q: use one of %s", status, strings.Join(finishStatuses, ", "))
	}
	return w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		cur, terminal := v.CurrentState, v.TerminalState
		if v.Status == status {
			return nil
		}
		// A finished workflow keeps the status it was finished with.
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		if status == checkpoint.Complete && cur != terminal {
			return fail.Refusedf("workflow %s is in %q, not its terminal state %q; it can only be finished as complete there (or as failed or abandoned)", w.ID, cur, terminal)
		}
		if status == checkpoint.Complete {
			if err := refuseHeld(w, v); err != nil {
				return err
			}
		}
		ed := editor{doc: tx.Checkpoint}
		ed.set(checkpoint.PathStatus, status)
		ed.delete(checkpoint.PathHold) // a person's hold ends with the workflow
		if status == checkpoint.Complete {
			ed.addCompleted(cur)
			// Its work is done, so an error of the terminal state is over, as
			// when a failed state is left forward; the retry counts stay.
			if v.Error.FailedState == cur {
				ed.clearError()
			}
		}
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		tx.Event("finish", map[string]any{"state": cur, "status": status})
		return ed.err
	})
}

// Reopen returns a workflow finished as complete to in_progress, in its
// current state, so that work of that state can run again (the workers
// whose failure was accepted); its terminal phase is then finished again
// as usual. Any other finished status stays finished.
func Reopen(w *store.Workflow, reason string) error {
	return w.Update(func(tx *store.Tx) error { return ReopenIn(tx, w, reason) })
}

// ReopenIn is Reopen inside tx, for a step that changes the workflow in
// one write.
func ReopenIn(tx *store.Tx, w *store.Workflow, reason string) error {
	v := checkpoint.ViewOf(tx.Checkpoint)
	switch v.Status {
	case checkpoint.InProgress:
		return nil
	case checkpoint.Complete:
	default:
		return fail.Refusedf("workflow %s is %s; only a complete workflow can be reopened", w.ID, v.Status)
	}
	ed := editor{doc: tx.Checkpoint}
	ed.set(checkpoint.PathStatus, checkpoint.InProgress)
	ed.touch(tx.Now)
	tx.Checkpoint = ed.doc
	tx.Event("reopen", map[string]any{"state": v.CurrentState, "reason": reason})
	return ed.err
}

// Fail records an error for the current state in error_state; the same
// error recorded already is not recorded again.
func Fail(w *store.Workflow, message string) error {
	if message == "" {
		return fail.Usagef("sm-fail needs --error TEXT describing what failed")
	}
	return w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		state := v.CurrentState
		// The same error again (a block run twice) is already recorded.
		if last := v.Error.LastError; last != nil && *last == message && v.Error.FailedState == state {
			return nil
		}
		ed := editor{doc: tx.Checkpoint}
		ed.set(checkpoint.PathLastError, message)
		ed.set(checkpoint.PathFailedState, state)
		ed.setRaw(checkpoint.PathRetryCount, fmt.Sprint(v.Error.Retries[state]))
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		tx.Event("error", map[string]any{"state": state, "error": message})
		return ed.err
	})
}

// Retry spends one retry of the failed state and returns how many have
// been used; past max it refuses with exit 3.
func Retry(w *store.Workflow, max int) (used int64, err error) {
	err = w.Update(func(tx *store.Tx) error {
		v := checkpoint.ViewOf(tx.Checkpoint)
		if err := refuseFinished(w, v); err != nil {
			return err
		}
		state := v.Error.FailedState
		if state == "" {
			return fail.Refusedf("workflow %s: nothing to retry: no failed state recorded (run sm-fail --error TEXT first)", w.ID)
		}
		used = v.Error.Retries[state]
		if used >= int64(max) {
			last := ""
			if v.Error.LastError != nil {
				last = *v.Error.LastError
			}
			return fail.Refusedf("workflow %s: retries exhausted for state %q (%d of %d used); last error: %s", w.ID, state, used, max, last)
		}
		used++
		ed := editor{doc: tx.Checkpoint}
		ed.setRaw(checkpoint.Retries(state), fmt.Sprint(used))
		ed.setRaw(checkpoint.PathRetryCount, fmt.Sprint(used))
		ed.touch(tx.Now)
		tx.Checkpoint = ed.doc
		tx.Event("retry", map[string]any{"state": state, "retry": used, "max": max})
		return ed.err
	})
	return used, err
}

// Next says which state follows the current one on the scope's route, or
// "" when the workflow is done. failed asks for the recovery state.
func Next(w *store.Workflow, failed bool) (string, error) {
	m, err := LoadMachine(w)
	if err != nil {
		return "", err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return "", err
	}
	v := checkpoint.ViewOf(doc)
	scope, err := m.Scope(v.Scope)
	if err != nil {
		return "", fmt.Errorf("workflow %s: %w", w.ID, err)
	}
	next, err := m.Next(scope, v.CurrentState, failed, v.Error.FailedState)
	if err != nil {
		return "", fmt.Errorf("workflow %s: %w", w.ID, err)
	}
	return next, nil
}

// Status is the state-machine view of a workflow.
type Status struct {
	WorkflowID      string           `json:"workflow_id"`
	Command         string           `json:"command"`
	Scope           string           `json:"scope"`
	CurrentState    string           `json:"current_state"`
	TerminalState   string           `json:"terminal_state"`
	CompletedStates []string         `json:"completed_states"`
	IsTerminal      bool             `json:"is_terminal"`
	Status          string           `json:"status"`
	LastError       *string          `json:"last_error"`
	FailedState     *string          `json:"failed_state"`
	RetryCount      int64            `json:"retry_count"`
	Hold            *checkpoint.Hold `json:"hold,omitempty"` // while a person holds it, and once cancelled
}

// StatusOf reads the status from a checkpoint document.
func StatusOf(id string, doc []byte) Status {
	v := checkpoint.ViewOf(doc)
	s := Status{
		WorkflowID: id, Command: v.Command, Scope: v.Scope,
		CurrentState: v.CurrentState, TerminalState: v.TerminalState,
		Status: v.Status, CompletedStates: v.CompletedStates,
		IsTerminal: v.CurrentState == v.TerminalState,
		LastError:  v.Error.LastError, RetryCount: v.Error.RetryCount,
	}
	if v.Status != "" && !checkpoint.Running(v.Status) {
		s.Hold = v.Hold
	}
	if v.Error.FailedState != "" {
		s.FailedState = &v.Error.FailedState
	}
	return s
}

// Current reads the workflow's checkpoint and returns its status.
func Current(w *store.Workflow) (Status, error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return Status{}, err
	}
	return StatusOf(w.ID, doc), nil
}

// Pairs are the KEY=VALUE lines sm-status prints.
func (s Status) Pairs() kv.Pairs {
	var out kv.Pairs
	out.Add("WORKFLOW_ID", s.WorkflowID)
	out.Add("COMMAND_NAME", s.Command)
	out.Add("WORKFLOW_SCOPE", s.Scope)
	out.Add("CURRENT_STATE", s.CurrentState)
	out.Add("TERMINAL_STATE", s.TerminalState)
	out.Add("COMPLETED_STATES", strings.Join(s.CompletedStates, " "))
	out.Add("IS_TERMINAL", s.IsTerminal)
	return out
}

// Outcome is the KEY=VALUE lines a person's command prints: where the
// workflow stands after it.
func (s Status) Outcome() kv.Pairs {
	var out kv.Pairs
	out.Add("WORKFLOW_ID", s.WorkflowID)
	out.Add("STATUS", s.Status)
	out.Add("CURRENT_STATE", s.CurrentState)
	if s.Hold != nil && s.Hold.Kind == checkpoint.HoldApproval {
		out.Add("WAITING_FOR", "approval to enter "+s.Hold.State)
	}
	return out
}

// editor applies several sjson edits, keeping the first error.
type editor struct {
	doc []byte
	err error
}

func (e *editor) set(path string, v any) {
	if e.err == nil {
		e.doc, e.err = sjson.SetBytes(e.doc, path, v)
	}
}

func (e *editor) setRaw(path, raw string) {
	if e.err == nil {
		e.doc, e.err = sjson.SetRawBytes(e.doc, path, []byte(raw))
	}
}

func (e *editor) delete(path string) {
	if e.err == nil {
		e.doc, e.err = sjson.DeleteBytes(e.doc, path)
	}
}

func (e *editor) addCompleted(state string) {
	var done []string
	for _, c := range gjson.GetBytes(e.doc, checkpoint.PathCompletedStates).Array() {
		done = append(done, c.String())
	}
	if slices.Contains(done, state) {
		return
	}
	b, _ := json.Marshal(append(done, state))
	e.setRaw(checkpoint.PathCompletedStates, string(b))
}

func (e *editor) touch(now time.Time) {
	ts := checkpoint.Timestamp(now)
	e.set(checkpoint.PathUpdatedAt, ts)
	e.set(checkpoint.PathMetadataUpdatedAt, ts)
}

// derivedKeys are the keys of Derived, sorted; a test holds Derived to
// exactly these.
var derivedKeys = []string{
	"CLAUDE_PROJECT_DIR", "COMMAND_NAME", "COMPLETED_STATES", "COMPLETED_STATES_COUNT", "CURRENT_STATE",
	"RESEARCH_COMPLEXITY", "RESEARCH_TOPICS_JSON", "TERMINAL_STATE", "WORKFLOW_DESCRIPTION", "WORKFLOW_ID",
	"WORKFLOW_SCOPE",
}

// DerivedKeys returns the keys of Derived, sorted: the variables users
// cannot store and the compat layer refuses to append.
func DerivedKeys() []string { return slices.Clone(derivedKeys) }

// IsDerived reports whether key is one of Derived's keys, which users
// cannot store.
func IsDerived(key string) bool { return slices.Contains(derivedKeys, key) }

// Derived are the shell variables computed from the checkpoint rather
// than stored as keys, so the state machine has one source of truth and
// a transition is one atomic write. The compat layer and state-load
// export them under the original libraries' names.
func Derived(w *store.Workflow, doc []byte) map[string]string {
	v := checkpoint.HeadOf(doc)
	return map[string]string{
		"WORKFLOW_ID":            w.ID,
		"CLAUDE_PROJECT_DIR":     w.P.Dir,
		"COMMAND_NAME":           v.Command,
		"WORKFLOW_DESCRIPTION":   v.ConfigDescription,
		"WORKFLOW_SCOPE":         v.Scope,
		"CURRENT_STATE":          v.CurrentState,
		"TERMINAL_STATE":         v.TerminalState,
		"COMPLETED_STATES":       strings.Join(v.CompletedStates, " "),
		"COMPLETED_STATES_COUNT": fmt.Sprint(len(v.CompletedStates)),
		"RESEARCH_COMPLEXITY":    fmt.Sprint(v.Complexity),
		"RESEARCH_TOPICS_JSON":   v.TopicsJSON,
	}
}

// CheckPairs refuses a batch of key/value pairs if any pair is bad,
// names a reserved key or a derived one, before anything is written, so
// a batch is never half-stored. (store.AppendState checks each pair's
// form again: it is the guard for every writer.)
func CheckPairs(pairs [][2]string) error {
	for _, kv := range pairs {
		if err := statefile.CheckPair(kv[0], kv[1]); err != nil {
			return err
		}
		if IsDerived(kv[0]) {
			return fail.Invalidf("%s is derived from the checkpoint and cannot be stored; use sm-transition or sm-init to change it", kv[0])
		}
	}
	return nil
}

// Values is what state-get and state-load see: the stored keys plus the
// derived ones, derived winning. Damaged lines come back as warnings.
func Values(w *store.Workflow) (statefile.State, error) {
	st, err := w.LoadState()
	if err != nil {
		return statefile.State{}, err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return statefile.State{}, err
	}
	for k, v := range Derived(w, doc) {
		st.Set(k, v) // Set keeps the key order that spares state-load a full sort
	}
	return st, nil
}
