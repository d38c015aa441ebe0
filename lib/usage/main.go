package usage

import (
	"io"
	"time"

	"github.com/tidwall/gjson"
)

// The main thread's spend is read from the session's transcript at each
// Stop, from where the last read stopped (a Cursor the hook keeps in the
// workflow's events). A turn (a person's prompt and all the model did
// for it) counts for a workflow when it overlaps the workflow's life:
// its last answer came after the workflow was created, and it began
// before the workflow finished.

// Window is a workflow's life as one session's turns are measured
// against it.
type Window struct {
	From  time.Time // the workflow was created (or first seen in the session)
	Until time.Time // it finished; zero while it runs
}

// Cursor is where a scan of a transcript stopped: the bytes read, and the
// start of the turn still open there (a turn a Stop hook sent back goes
// on without a new prompt).
type Cursor struct {
	Offset    int64     `json:"offset"`
	TurnStart time.Time `json:"turn_start"`
}

// Spent is the main thread's usage in one state with one model.
type Spent struct {
	State    string
	Model    string
	Usage    Usage
	Requests int
}

// AgentResult is an Agent call's result as the main transcript keeps it:
// what PostToolUse saw, for agents whose hook did not record them (the
// classifier, which runs before its workflow exists).
type AgentResult struct {
	ID, Type, Prompt, Model, Status string
	At                              time.Time // the result arrived
	DurationMs                      int64
	ToolUses                        int
	Last                            Usage // the agent's last request
}

// Main is what ScanMain found.
type Main struct {
	Spent  []Spent
	Agents []AgentResult
	Next   Cursor
}

// ScanMain reads a session transcript from cur (r starts at cur.Offset)
// and sums the main thread's messages of the turns within win, each in the
// state stateAt gives for its time.
func ScanMain(r io.Reader, cur Cursor, win Window, stateAt func(time.Time) string) (Main, error) {
	var out Main
	spent := map[[2]string]int{} // state, model -> index in out.Spent
	turnStart := cur.TurnStart
	var turn messages
	var results []AgentResult
	// commit adds the buffered turn when it overlaps win.
	commit := func() {
		var last time.Time
		for _, m := range turn.list {
			if m.ts.After(last) {
				last = m.ts
			}
		}
		in := !last.Before(win.From) && (win.Until.IsZero() || !turnStart.After(win.Until))
		if in {
			for _, m := range turn.list {
				k := [2]string{stateAt(m.ts), m.model}
				i, ok := spent[k]
				if !ok {
					i = len(out.Spent)
					spent[k] = i
					out.Spent = append(out.Spent, Spent{State: k[0], Model: k[1]})
				}
				out.Spent[i].Usage = out.Spent[i].Usage.Add(m.usage)
				out.Spent[i].Requests++
			}
			out.Agents = append(out.Agents, results...)
		}
		turn, results = messages{}, nil
	}
	n, err := eachLine(r, func(line []byte) {
		kind := lineType(line)
		// The type first: most bytes are in lines of other types (request
		// bodies), which have no isSidechain to look for.
		if kind != "assistant" && kind != "user" || gjson.GetBytes(line, "isSidechain").Bool() {
			return
		}
		switch kind {
		case "assistant":
			turn.add(parseMessage(line))
		case "user":
			if res := gjson.GetBytes(line, "toolUseResult"); res.IsObject() && res.Get("agentId").String() != "" {
				results = append(results, agentResult(res, timestamp(line)))
				return
			}
			if prompt(line) {
				commit()
				turnStart = timestamp(line)
			}
		}
	})
	commit()
	out.Next = Cursor{Offset: cur.Offset + n, TurnStart: turnStart}
	return out, err
}

// prompt reports a user line that starts a turn: text from the person
// (or a slash command's expansion), not a tool's result or a line Claude
// Code adds (isMeta).
func prompt(line []byte) bool {
	if gjson.GetBytes(line, "isMeta").Bool() {
		return false
	}
	c := gjson.GetBytes(line, "message.content")
	if c.Type == gjson.String {
		return true
	}
	for _, b := range c.Array() {
		if b.Get("type").String() == "tool_result" {
			return false
		}
	}
	return c.IsArray()
}

// ParseAgentResult reads an Agent call's result (PostToolUse's
// tool_response), which arrived at at; ok is false when it names no agent
// (an agent launched in the background answers at once, without one).
func ParseAgentResult(raw []byte, at time.Time) (AgentResult, bool) {
	res := gjson.ParseBytes(raw)
	if !res.IsObject() || res.Get("agentId").String() == "" {
		return AgentResult{}, false
	}
	return agentResult(res, at), true
}

func agentResult(res gjson.Result, at time.Time) AgentResult {
	return AgentResult{
		ID: res.Get("agentId").String(), Type: res.Get("agentType").String(), Prompt: res.Get("prompt").String(),
		Model: res.Get("resolvedModel").String(), Status: res.Get("status").String(), At: at,
		DurationMs: res.Get("totalDurationMs").Int(), ToolUses: int(res.Get("totalToolUseCount").Int()),
		Last: apiUsage(res.Get("usage")),
	}
}

// apiUsage reads a usage object as the Messages API names its fields.
func apiUsage(u gjson.Result) Usage {
	return Usage{
		Input: u.Get("input_tokens").Int(), Output: u.Get("output_tokens").Int(),
		CacheRead: u.Get("cache_read_input_tokens").Int(), CacheWrite: u.Get("cache_creation_input_tokens").Int(),
	}
}
