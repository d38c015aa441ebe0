package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sort"
	"time"
)

// Event kinds the hooks record in a workflow's events.jsonl.
const (
	// AgentEvent is one agent's tokens, model, requests, tool calls and
	// duration, recorded when its Agent call returned.
	AgentEvent = "agent_usage"
	// MainEvent is the main thread's tokens in one state with one model
	// since the session's last such record, with the Cursor to go on from.
	MainEvent = "main_usage"
)

// Past is what a workflow's events say a Stop hook needs to go on
// measuring one session's main thread.
type Past struct {
	Window   Window
	Cursor   Cursor          // where the session's last record stopped reading
	Last     time.Time       // when that record was made
	Finished time.Time       // the workflow's last finish, zero if none
	Measured map[string]bool // agents whose usage is recorded, by id
	// StateAt is the state the workflow was in at a time; before it was
	// created, its first state.
	StateAt func(time.Time) string
}

type pastEvent struct {
	TS      time.Time       `json:"ts"`
	Event   string          `json:"event"`
	From    string          `json:"from"`
	To      string          `json:"to"`
	Session string          `json:"session"`
	AgentID string          `json:"agent_id"`
	Cursor  json.RawMessage `json:"cursor"`
}

// PastMain folds a workflow's events for session. creator is the session
// that created the workflow: another session's turns count from the first
// event it recorded in the workflow. current is the workflow's state now.
func PastMain(events []byte, session, creator, current string) Past {
	p := Past{Measured: map[string]bool{}}
	type stay struct {
		from  time.Time
		state string
	}
	var stays []stay
	var init, seen time.Time
	sc := bufio.NewScanner(bytes.NewReader(events))
	sc.Buffer(make([]byte, 0, 64<<10), len(events)+1)
	for sc.Scan() {
		var ev pastEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.TS.IsZero() {
			continue
		}
		if ev.Session == session && seen.IsZero() {
			seen = ev.TS
		}
		switch ev.Event {
		case "init":
			init = ev.TS
		case "transition", "rewind":
			if len(stays) == 0 {
				stays = append(stays, stay{state: ev.From})
			}
			stays = append(stays, stay{ev.TS, ev.To})
		case "finish":
			p.Finished = ev.TS
		case AgentEvent:
			p.Measured[ev.AgentID] = true
		case MainEvent:
			var c Cursor
			if ev.Session == session && json.Unmarshal(ev.Cursor, &c) == nil {
				p.Cursor, p.Last = c, ev.TS
			}
		}
	}
	p.Window.From = init
	if session != creator && !seen.IsZero() {
		p.Window.From = seen
	}
	if len(stays) == 0 {
		stays = append(stays, stay{state: current})
	}
	p.StateAt = func(t time.Time) string {
		i := sort.Search(len(stays), func(i int) bool { return stays[i].from.After(t) })
		return stays[max(i-1, 0)].state
	}
	return p
}
