// Package history owns reading a workflow's event log (events.jsonl) for
// people and tools: every event in order, what it means in one line, and
// how long what it ends took: the time in the state a transition leaves,
// an agent's run, the wait for a person's decision. `flowstate history`
// prints it.
//
// It is pure: the caller reads the file.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/status"
)

// Entry is one event. Fields are the event as recorded, but for its time
// and kind, which are Entry's own.
type Entry struct {
	Seq        int            `json:"seq"` // 1-based position in the log
	TS         time.Time      `json:"ts"`
	Event      string         `json:"event"`
	Summary    string         `json:"summary"`
	DurationMs *int64         `json:"duration_ms,omitempty"`
	Fields     map[string]any `json:"fields"`
}

// Document is `flowstate history --json`.
type Document struct {
	WorkflowID string  `json:"workflow_id"`
	Events     []Entry `json:"events"`
}

// Duration is the entry's duration, 0 when it has none.
func (e Entry) Duration() time.Duration {
	if e.DurationMs == nil {
		return 0
	}
	return time.Duration(*e.DurationMs) * time.Millisecond
}

// Parse reads events.jsonl. A line that is not an event (torn by a crash,
// damaged by hand) is skipped and counted.
func Parse(data []byte) (entries []Entry, skipped int) {
	entries = []Entry{} // none is [] in JSON, not null
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	c := clock{agents: map[string]time.Time{}, launches: map[string]time.Time{}}
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, ok := parseLine(line)
		if !ok {
			skipped++
			continue
		}
		e.Seq = len(entries) + 1
		e.Summary = summary(e.Event, e.Fields)
		if d, ok := c.took(e); ok {
			ms := d.Milliseconds()
			e.DurationMs = &ms
		}
		entries = append(entries, e)
	}
	return entries, skipped
}

func parseLine(line []byte) (Entry, bool) {
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // numbers come back as written
	if dec.Decode(&fields) != nil {
		return Entry{}, false
	}
	kind, _ := fields["event"].(string)
	stamp, _ := fields["ts"].(string)
	ts, err := time.Parse(time.RFC3339Nano, stamp)
	if kind == "" || err != nil {
		return Entry{}, false
	}
	delete(fields, "event")
	delete(fields, "ts")
	return Entry{TS: ts, Event: kind, Fields: fields}, true
}

// clock remembers when things began, to say how long they took.
type clock struct {
	entered  time.Time            // the current state was entered (init, transition, rewind)
	gate     time.Time            // the workflow began waiting at a gate
	paused   time.Time            // it was paused
	agents   map[string]time.Time // agent id -> its start
	launches map[string]time.Time // worker id -> its agent's launch
}

// took says how long what e ends took, and moves the clock on.
func (c *clock) took(e Entry) (time.Duration, bool) {
	str := func(k string) string { s, _ := e.Fields[k].(string); return s }
	// A clock stepped back (NTP, a VM restored) makes a later event's
	// time earlier: that took no time, never a negative one.
	since := func(t time.Time) (time.Duration, bool) { return max(e.TS.Sub(t), 0), !t.IsZero() }
	switch e.Event {
	case "init":
		c.entered = e.TS
	case "transition", "rewind", "finish":
		d, ok := since(c.entered)
		if e.Event != "finish" {
			c.entered = e.TS
		}
		return d, ok
	case "gate":
		c.gate = e.TS
	case "approve", "reject":
		d, ok := since(c.gate)
		c.gate = time.Time{}
		return d, ok
	case "pause":
		c.paused = e.TS
	case "unpause":
		d, ok := since(c.paused)
		c.paused = time.Time{}
		return d, ok
	case "agent_launch":
		if w := str("worker_id"); w != "" {
			c.launches[w] = e.TS
		}
	case "agent_start":
		if id := str("agent_id"); id != "" {
			c.agents[id] = e.TS
		}
	case "agent_stop":
		if t, ok := c.agents[str("agent_id")]; ok {
			return since(t)
		}
		if t, ok := c.launches[str("worker_id")]; ok {
			return since(t)
		}
	}
	return 0, false
}

// summary says what an event means, in one line.
func summary(kind string, f map[string]any) string {
	str := func(k string) string { return text(f[k]) }
	with := func(s, k string) string {
		if v := str(k); v != "" {
			return s + ": " + v
		}
		return s
	}
	who := str("by")
	if who == "" {
		who = "someone"
	}
	agent := strings.TrimSpace(str("agent_type") + " " + str("worker_id"))
	switch kind {
	case "init":
		return "workflow created"
	case "transition":
		return with(str("from")+" → "+str("to"), "reason")
	case "gate":
		return with("waits for approval to enter "+str("state"), "message")
	case "approve":
		return with(who+" approved entering "+str("state"), "note")
	case "reject":
		return with(fmt.Sprintf("%s rejected entering %s; back to %s", who, str("state"), str("to")), "reason")
	case "rewind":
		return with(fmt.Sprintf("%s rewound %s → %s (%s no longer completed)", who, str("from"), str("to"), strings.Join(texts(f["states"]), ", ")), "reason")
	case "pause":
		return with(who+" paused it in "+str("state"), "reason")
	case "unpause":
		return who + " let it go on in " + str("state")
	case "cancel":
		return with(who+" cancelled it in "+str("state"), "reason")
	case "error":
		return with("error in "+str("state"), "error")
	case "retry":
		return fmt.Sprintf("retry %s of %s of %s", str("retry"), str("max"), str("state"))
	case "finish":
		return "finished as " + str("status") + " in " + str("state")
	case "worker":
		return fmt.Sprintf("%s worker %s recorded %s", str("state"), str("worker_id"), str("status"))
	case "supervisor-record":
		return fmt.Sprintf("%s recorded worker %s %s", str("supervisor"), str("worker_id"), str("status"))
	case "agent_launch":
		return agent + " launched"
	case "agent_start":
		return agent + " started"
	case "agent_stop":
		return agent + " stopped"
	case "migrated":
		return fmt.Sprintf("checkpoint migrated from %s to %s (original kept as %s)", str("from"), str("to"), str("backup"))
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+"="+str(k))
	}
	return strings.Join(parts, " ")
}

// text is a field's value as one safe line: a value from the log must not
// draw on the terminal.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return kv.OneLine(v)
	case json.Number:
		return v.String()
	}
	b, _ := json.Marshal(v)
	return kv.OneLine(string(b))
}

func texts(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, text(x))
	}
	return out
}

// Render lays the entries out for people, one line each: time (UTC),
// event, how long it took, and what it means (last, as it may be long).
func Render(entries []Entry) string {
	if len(entries) == 0 {
		return "no events recorded\n"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME (UTC)\tEVENT\tTOOK\tWHAT")
	for _, e := range entries {
		took := ""
		if e.DurationMs != nil {
			took = status.Duration(e.Duration())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.TS.UTC().Format("2006-01-02 15:04:05"), kv.OneLine(e.Event), took, e.Summary)
	}
	_ = tw.Flush() // a strings.Builder does not fail
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
