package checkpoint

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// View is what the readers of a checkpoint need of it, decoded in one
// pass over the document (ViewOf): listing, discovery, sm-status,
// state-load, the hooks and `flowstate status` all read the same fields
// the same way. Writers still edit the bytes (Set, or sjson with the
// Path constants), so that fields a View does not know are kept.
type View struct {
	ID          string // workflow_id
	Command     string
	Description string // workflow_description
	Status      string // "" in a document written before the field
	CreatedAt   string
	UpdatedAt   string
	Session     string // session_id: the Claude Code session that started it, if any

	CurrentState    string
	CompletedStates []string // in the order they were completed; never nil
	Scope           string
	TerminalState   string
	// ConfigDescription is the description the state machine was started
	// with (workflow_config); a migrated document may hold another one in
	// Description.
	ConfigDescription string
	// Complexity and TopicsJSON are the classification's
	// research_complexity and research_topics (raw JSON, "[]" when absent).
	Complexity int64
	TopicsJSON string
	// Agents are the agents declared for the workflow (sm-init --agents);
	// nil when none were, which is how a command on the low-level API is
	// told from one with a definition.
	Agents []string

	Error ErrorState
	// Hold is what a person holds the workflow for; nil when nothing does.
	Hold *Hold
	// Rewinds counts the rewinds recorded; LastRewind is the latest one.
	Rewinds    int
	LastRewind Rewind
	// Revision counts the checkpoint's writes.
	Revision int64

	gates string // raw JSON of state_machine.gates, read by Gate
}

// ErrorState is error_state: the error of the failed state, if any, and
// the retries used per state.
type ErrorState struct {
	LastError   *string // nil when there is none (null)
	FailedState string  // "" when no state has failed
	RetryCount  int64
	Retries     map[string]int64 // retries used, per state; nil when none
}

// Rewind is what a rewind recorded of itself (rewinds[i]); the data it
// took back stays in the document.
type Rewind struct {
	At, From, To, Kind, Reason, By string
	// Revision is the checkpoint revision the rewind wrote: a rewind or
	// rejection run again finds it as the latest write.
	Revision int64
}

// RetryRewind is the kind of a rewind that went back to a state to run
// again the workers whose failure it accepted (resume --retry-failed),
// keeping what the others delivered.
const RetryRewind = "retry"

// Kinds of hold, the values of hold.kind.
const (
	HoldApproval = "approval"
	HoldPause    = "pause"
	HoldCancel   = "cancel"
	// HoldBudget holds a workflow whose recorded spend passed its limit
	// (status awaiting_approval) until a person allows more.
	HoldBudget = "budget"
)

var holdKinds = []string{HoldApproval, HoldPause, HoldCancel, HoldBudget}

// Hold is what a person holds a workflow for, kept in the checkpoint's
// hold while it waits (awaiting_approval, paused), and once it is
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
	case HoldBudget:
		return "is held at its spend limit: " + kv.OneLine(h.Message)
	}
	return "was cancelled" + who + why
}

// Gate is the gate on entering state, if the workflow has one.
func (v *View) Gate(state string) (machine.Gate, bool) {
	var g machine.Gate
	raw := gjson.Get(v.gates, gjson.Escape(state))
	if !raw.IsObject() || json.Unmarshal([]byte(raw.Raw), &g) != nil {
		return g, false
	}
	return g, true
}

// ViewOf decodes the view of doc in one pass over its top level (and
// one over state_machine): phase data of 10,000 keys is skipped once,
// not once per field. It reads leniently, as a reader of a document not
// yet migrated must: a missing field, or one of another type, reads as
// gjson reads it (a number's text for a string, its zero value
// otherwise), and of a top-level key written twice the first counts, as
// for gjson.Get. Check that doc is JSON first when it comes from outside
// the store.
func ViewOf(doc []byte) View { return decode(doc, false) }

// HeadOf decodes the part of the view that precedes phase_data in every
// document flowstate writes (New and Encode order the fields so): the
// workflow's id, command, description, status and times and its state
// machine; Error, Hold, Rewinds, Revision and Session are left zero. It
// stops once it has read them, so it costs the same whatever the phase
// data holds: state-load runs it in every bash block.
func HeadOf(doc []byte) View { return decode(doc, true) }

// topSession numbers session_id after the validator's top-level fields.
const topSession = nTop

// headFields are the fields HeadOf reads.
const headFields = 1<<topWorkflowID | 1<<topCommand | 1<<topDescription | 1<<topStatus |
	1<<topCreatedAt | 1<<topUpdatedAt | 1<<topStateMachine

func decode(doc []byte, head bool) View {
	v := View{CompletedStates: []string{}, TopicsJSON: "[]"}
	var seen uint32
	// Read in place: copying phase data of 10,000 keys would cost more
	// than the read. Every string the view keeps is a copy (str).
	root := gjson.Parse(unsafe.String(unsafe.SliceData(doc), len(doc)))
	root.ForEach(func(k, r gjson.Result) bool {
		f := slices.Index(topNames[:], k.Str)
		if k.Str == PathSession {
			f = topSession
		}
		if f < 0 || seen&(1<<f) != 0 || head && headFields&(1<<f) == 0 {
			return true
		}
		seen |= 1 << f
		v.read(f, r)
		return !head || seen&headFields != headFields
	})
	return v
}

// read reads top-level field number f (topNames), valued r.
func (v *View) read(f int, r gjson.Result) {
	switch f {
	case topWorkflowID:
		v.ID = str(r)
	case topCommand:
		v.Command = str(r)
	case topDescription:
		v.Description = str(r)
	case topStatus:
		v.Status = str(r)
	case topCreatedAt:
		v.CreatedAt = str(r)
	case topUpdatedAt:
		v.UpdatedAt = str(r)
	case topSession:
		v.Session = str(r)
	case topStateMachine:
		v.stateMachine(r)
	case topErrorState:
		v.Error = errorStateOf(r)
	case topHold:
		v.Hold = holdOf(r)
	case topRewinds:
		all := r.Array()
		v.Rewinds = len(all)
		if len(all) > 0 {
			v.LastRewind = rewindOf(all[len(all)-1])
		}
	case topMetadata:
		v.Revision = r.Get(mdNames[mdRevision]).Int()
	}
}

func (v *View) stateMachine(sm gjson.Result) {
	sm.ForEach(func(k, r gjson.Result) bool {
		switch k.Str {
		case smNames[smCurrent]:
			v.CurrentState = str(r)
		case smNames[smCompleted]:
			for _, s := range r.Array() {
				v.CompletedStates = append(v.CompletedStates, str(s))
			}
		case smNames[smConfig]:
			r.ForEach(func(k, r gjson.Result) bool {
				switch k.Str {
				case wcNames[wcScope]:
					v.Scope = str(r)
				case wcNames[wcTerminal]:
					v.TerminalState = str(r)
				case wcNames[wcDescription]:
					v.ConfigDescription = str(r)
				}
				return true
			})
		case smNames[smClassification]:
			v.Complexity = r.Get(clNames[clComplexity]).Int()
			if t := r.Get(clNames[clTopics]); t.Exists() {
				v.TopicsJSON = strings.Clone(t.Raw)
			}
		case smNames[smGates]:
			v.gates = strings.Clone(r.Raw)
		case smNames[smAgents]:
			v.Agents = []string{}
			for _, a := range r.Array() {
				v.Agents = append(v.Agents, str(a))
			}
		}
		return true
	})
}

func errorStateOf(es gjson.Result) ErrorState {
	var e ErrorState
	es.ForEach(func(k, r gjson.Result) bool {
		switch k.Str {
		case esNames[esLastError]:
			if r.Type == gjson.String {
				last := str(r)
				e.LastError = &last
			}
		case esNames[esFailedState]:
			e.FailedState = str(r)
		case esNames[esRetryCount]:
			e.RetryCount = r.Int()
		case esNames[esRetries]:
			r.ForEach(func(state, n gjson.Result) bool {
				if e.Retries == nil {
					e.Retries = map[string]int64{}
				}
				e.Retries[strings.Clone(state.Str)] = n.Int()
				return true
			})
		}
		return true
	})
	return e
}

// holdOf reads a hold; nil when it is not one.
func holdOf(raw gjson.Result) *Hold {
	var h Hold
	if !raw.IsObject() || json.Unmarshal([]byte(raw.Raw), &h) != nil || h.Kind == "" {
		return nil
	}
	return &h
}

func rewindOf(r gjson.Result) Rewind {
	return Rewind{
		At: str(r.Get("at")), From: str(r.Get("from")), To: str(r.Get("to")),
		Kind: str(r.Get("kind")), Reason: str(r.Get("reason")), By: str(r.Get("by")),
		Revision: r.Get("revision").Int(),
	}
}

// str is r as gjson reads it as a string, copied out of the document.
func str(r gjson.Result) string { return strings.Clone(r.String()) }
