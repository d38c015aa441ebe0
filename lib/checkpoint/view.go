package checkpoint

import (
	"encoding/json"
	"fmt"

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

// Kinds of hold, the values of hold.kind.
const (
	HoldApproval = "approval"
	HoldPause    = "pause"
	HoldCancel   = "cancel"
)

var holdKinds = []string{HoldApproval, HoldPause, HoldCancel}

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
// otherwise). Check that doc is JSON first when it comes from outside the
// store.
func ViewOf(doc []byte) View {
	v := View{CompletedStates: []string{}, TopicsJSON: "[]"}
	gjson.ParseBytes(doc).ForEach(func(k, r gjson.Result) bool {
		switch k.Str {
		case PathWorkflowID:
			v.ID = r.String()
		case PathCommand:
			v.Command = r.String()
		case PathDescription:
			v.Description = r.String()
		case PathStatus:
			v.Status = r.String()
		case PathCreatedAt:
			v.CreatedAt = r.String()
		case PathUpdatedAt:
			v.UpdatedAt = r.String()
		case PathSession:
			v.Session = r.String()
		case PathStateMachine:
			v.stateMachine(r)
		case PathErrorState:
			v.Error = errorStateOf(r)
		case PathHold:
			v.Hold = holdOf(r)
		case PathRewinds:
			all := r.Array()
			v.Rewinds = len(all)
			if len(all) > 0 {
				v.LastRewind = rewindOf(all[len(all)-1])
			}
		case PathMetadata:
			v.Revision = r.Get("revision").Int()
		}
		return true
	})
	return v
}

func (v *View) stateMachine(sm gjson.Result) {
	sm.ForEach(func(k, r gjson.Result) bool {
		switch k.Str {
		case smNames[smCurrent]:
			v.CurrentState = r.String()
		case smNames[smCompleted]:
			for _, s := range r.Array() {
				v.CompletedStates = append(v.CompletedStates, s.String())
			}
		case smNames[smConfig]:
			r.ForEach(func(k, r gjson.Result) bool {
				switch k.Str {
				case wcNames[wcScope]:
					v.Scope = r.String()
				case wcNames[wcTerminal]:
					v.TerminalState = r.String()
				case wcNames[wcDescription]:
					v.ConfigDescription = r.String()
				}
				return true
			})
		case smNames[smClassification]:
			v.Complexity = r.Get(clNames[clComplexity]).Int()
			if t := r.Get(clNames[clTopics]); t.Exists() {
				v.TopicsJSON = t.Raw
			}
		case smNames[smGates]:
			v.gates = r.Raw
		case smNames[smAgents]:
			v.Agents = []string{}
			for _, a := range r.Array() {
				v.Agents = append(v.Agents, a.String())
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
				e.LastError = &r.Str
			}
		case esNames[esFailedState]:
			e.FailedState = r.String()
		case esNames[esRetryCount]:
			e.RetryCount = r.Int()
		case esNames[esRetries]:
			r.ForEach(func(state, n gjson.Result) bool {
				if e.Retries == nil {
					e.Retries = map[string]int64{}
				}
				e.Retries[state.Str] = n.Int()
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
		At: r.Get("at").String(), From: r.Get("from").String(), To: r.Get("to").String(),
		Kind: r.Get("kind").String(), Reason: r.Get("reason").String(), By: r.Get("by").String(),
		Revision: r.Get("revision").Int(),
	}
}
