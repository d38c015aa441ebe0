package timeline

import (
	"time"

	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Document is a timeline for tools: what `status --json` and `history
// --json` carry. Times are RFC 3339, durations milliseconds; cost and
// currency only with a price table (cost_complete false when a model that
// spent tokens has no price there).
type Document struct {
	Tokens       Tokens      `json:"tokens"`
	Cost         *float64    `json:"cost,omitempty"`
	Currency     string      `json:"currency,omitempty"`
	CostComplete *bool       `json:"cost_complete,omitempty"`
	DurationMs   int64       `json:"duration_ms"`
	States       []StateDoc  `json:"states"`
	Agents       []AgentDoc  `json:"agents"`
	Main         []SpendDoc  `json:"main_thread"`
	Waits        []WaitDoc   `json:"waits"`
	Marks        []MarkDoc   `json:"marks"`
	Started      time.Time   `json:"started"`
	Ended        *time.Time  `json:"ended,omitempty"`
	Lanes        int         `json:"parallel_max"`
	Spent        []SpendsDoc `json:"spent_per_state"`
}

// Tokens is a usage with its total, as the documents show it.
type Tokens struct {
	usage.Usage
	Total int64 `json:"total"`
}

func tokens(u usage.Usage) Tokens { return Tokens{u, u.Total()} }

// StateDoc is one stay in a state.
type StateDoc struct {
	State      string    `json:"state"`
	Entered    time.Time `json:"entered"`
	DurationMs int64     `json:"duration_ms"`
	Current    bool      `json:"current,omitempty"`
	Rewound    bool      `json:"rewound,omitempty"`
	Failed     bool      `json:"failed,omitempty"`
	Partial    bool      `json:"partial_failure,omitempty"`
}

// AgentDoc is one agent's run.
type AgentDoc struct {
	AgentID    string     `json:"agent_id,omitempty"`
	AgentType  string     `json:"agent_type"`
	WorkerID   string     `json:"worker_id,omitempty"`
	State      string     `json:"state"`
	Status     string     `json:"status"`
	Started    time.Time  `json:"started"`
	Ended      *time.Time `json:"ended,omitempty"`
	DurationMs int64      `json:"duration_ms"`
	Tokens     *Tokens    `json:"tokens,omitempty"` // nil until its Agent call returned
	Cost       *float64   `json:"cost,omitempty"`
	Model      string     `json:"model,omitempty"`
	Requests   int        `json:"requests,omitempty"`
	ToolUses   int        `json:"tool_uses,omitempty"`
	Attempt    int        `json:"attempt,omitempty"`
	Wave       int        `json:"wave"`
	Lane       int        `json:"lane"`
	Rewound    bool       `json:"rewound,omitempty"`
	Artifact   string     `json:"artifact,omitempty"`
	Error      string     `json:"error,omitempty"`
}

// SpendDoc is the main thread's tokens in a state with a model.
type SpendDoc struct {
	State    string `json:"state"`
	Model    string `json:"model"`
	Tokens   Tokens `json:"tokens"`
	Requests int    `json:"requests"`
}

// SpendsDoc is what a state cost, agents and main thread together.
type SpendsDoc struct {
	State  string   `json:"state"`
	Tokens Tokens   `json:"tokens"`
	Cost   *float64 `json:"cost,omitempty"`
}

// WaitDoc is a wait for a person.
type WaitDoc struct {
	Kind       string     `json:"kind"`
	State      string     `json:"state"`
	Started    time.Time  `json:"started"`
	Ended      *time.Time `json:"ended,omitempty"`
	DurationMs int64      `json:"duration_ms"`
	Message    string     `json:"message,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	By         string     `json:"by,omitempty"`
}

// MarkDoc is an error, retry, rewind or cancel.
type MarkDoc struct {
	Kind  string    `json:"kind"`
	At    time.Time `json:"at"`
	State string    `json:"state"`
	Text  string    `json:"text"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func opt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Document is t for tools, with money at prices (nil: none).
func (t Timeline) Document(prices *usage.Prices) Document {
	d := Document{
		Tokens: tokens(t.Total()), DurationMs: ms(t.End.Sub(t.Start)), Started: t.Start, Lanes: t.Lanes,
		States: []StateDoc{}, Agents: []AgentDoc{}, Main: []SpendDoc{}, Waits: []WaitDoc{}, Marks: []MarkDoc{}, Spent: []SpendsDoc{},
	}
	if !t.Active {
		d.Ended = opt(t.End)
	}
	perState, total, complete := t.Cost(prices)
	if prices != nil {
		d.Cost, d.Currency, d.CostComplete = &total, prices.Currency, &complete
	}
	for _, s := range t.States {
		d.States = append(d.States, StateDoc{State: s.Name, Entered: s.Start, DurationMs: ms(s.End.Sub(s.Start)),
			Current: s.Current, Rewound: s.Rewound, Failed: s.Failed, Partial: s.Partial})
	}
	for _, a := range t.Agents {
		ad := AgentDoc{AgentID: a.ID, AgentType: a.Type, WorkerID: a.Worker, State: a.State, Status: a.Status,
			Started: a.Start, Ended: opt(a.End), DurationMs: ms(a.Duration(t.End)), Model: a.Model, Requests: a.Requests,
			ToolUses: a.ToolUses, Attempt: a.Attempt, Wave: a.Wave, Lane: a.Lane, Rewound: a.Rewound, Artifact: a.Artifact, Error: a.Error}
		if a.Measured || !a.Usage.Zero() {
			tk := tokens(a.Usage)
			ad.Tokens = &tk
			if c, ok := prices.Cost(a.Model, a.Usage); ok {
				ad.Cost = &c
			}
		}
		d.Agents = append(d.Agents, ad)
	}
	for _, m := range t.Main {
		d.Main = append(d.Main, SpendDoc{State: m.State, Model: m.Model, Tokens: tokens(m.Usage), Requests: m.Requests})
	}
	for _, w := range t.Waits {
		end := w.End
		if end.IsZero() {
			end = t.End
		}
		d.Waits = append(d.Waits, WaitDoc{Kind: w.Kind, State: w.State, Started: w.Start, Ended: opt(w.End), DurationMs: ms(end.Sub(w.Start)),
			Message: w.Message, Outcome: w.Outcome, By: w.By})
	}
	for _, m := range t.Marks {
		d.Marks = append(d.Marks, MarkDoc(m))
	}
	for _, s := range t.Spent() {
		sd := SpendsDoc{State: s.State, Tokens: tokens(s.Usage)}
		if prices != nil {
			c := perState[s.State]
			sd.Cost = &c
		}
		d.Spent = append(d.Spent, sd)
	}
	return d
}

// Duration is how long a ran: until it stopped, else until end.
func (a Agent) Duration(end time.Time) time.Duration {
	if a.End.IsZero() {
		return end.Sub(a.Start)
	}
	return a.End.Sub(a.Start)
}
