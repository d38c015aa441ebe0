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
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/term"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
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

// Document is `flowstate history --json`: the events, and every agent's
// run with what it spent (timeline.AgentDoc), and the workflow's tokens.
type Document struct {
	WorkflowID string              `json:"workflow_id"`
	Events     []Entry             `json:"events"`
	Agents     []timeline.AgentDoc `json:"agents"`
	Tokens     timeline.Tokens     `json:"tokens"`
}

// Duration is the entry's duration, 0 when it has none.
func (e Entry) Duration() time.Duration {
	if e.DurationMs == nil {
		return 0
	}
	return time.Duration(*e.DurationMs) * time.Millisecond
}

// Parse reads events.jsonl. A line that is not an event (torn by a crash,
// damaged by hand) is skipped and counted. workers names the worker of
// each agent (by agent id) as the timeline paired them
// (timeline.Timeline.Workers), for the summary of an agent's events that
// do not carry it (its start).
func Parse(data []byte, workers map[string]string) (entries []Entry, skipped int) {
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
		e.Summary = summary(e.Event, named(e.Fields, workers))
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
	case "gate", "budget":
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
	case usage.AgentEvent:
		if n, ok := e.Fields["duration_ms"].(json.Number); ok {
			ms, err := n.Int64()
			return time.Duration(ms) * time.Millisecond, err == nil
		}
	}
	return 0, false
}

// named is an agent event's fields with the worker its agent was paired
// with, where the event does not name it; the event as recorded is left
// as it is.
func named(f map[string]any, workers map[string]string) map[string]any {
	id, _ := f["agent_id"].(string)
	if _, ok := f["worker_id"]; ok || workers[id] == "" {
		return f
	}
	g := maps.Clone(f)
	g["worker_id"] = workers[id]
	return g
}

// summary says what an event means, in one line; an event of a kind not
// in meanings lists its fields.
func summary(kind string, f map[string]any) string {
	for _, m := range meanings {
		if m.kind == kind {
			return m.say(f)
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+"="+text(f[k]))
	}
	return strings.Join(parts, " ")
}

// meanings say what each kind of event means, in one line. A list, not a
// map, so that nothing is built before main.
var meanings = []struct {
	kind string
	say  func(f fields) string
}{
	{"init", func(fields) string { return "workflow created" }},
	{"transition", func(f fields) string { return f.with(f.str("from")+" → "+f.str("to"), "reason") }},
	{"gate", func(f fields) string { return f.with("waits for approval to enter "+f.str("state"), "message") }},
	{"approve", func(f fields) string {
		if f.str("kind") == checkpoint.HoldBudget {
			return f.with(fmt.Sprintf("%s allowed %s more in %s (spent %s; the limit is %s)", f.who(), f.str("more"), f.str("state"), f.str("spent"), f.str("limit")), "note")
		}
		return f.with(f.who()+" approved entering "+f.str("state"), "note")
	}},
	{"budget", func(f fields) string {
		return fmt.Sprintf("held at its spend limit in %s: spent %s of %s", f.str("state"), f.str("spent"), f.str("limit"))
	}},
	{"reject", func(f fields) string {
		return f.with(fmt.Sprintf("%s rejected entering %s; back to %s", f.who(), f.str("state"), f.str("to")), "reason")
	}},
	{"rewind", func(f fields) string {
		cleared := strings.Join(texts(f["states"]), ", ")
		if f.str("kind") == checkpoint.RetryRewind {
			return fmt.Sprintf("back %s → %s to run failed workers again (%s no longer completed)", f.str("from"), f.str("to"), cleared)
		}
		return f.with(fmt.Sprintf("%s rewound %s → %s (%s no longer completed)", f.who(), f.str("from"), f.str("to"), cleared), "reason")
	}},
	{"retry_failed", func(f fields) string {
		return fmt.Sprintf("the workers of %s whose failure was accepted run again: %s", f.str("state"), strings.Join(texts(f["workers"]), ", "))
	}},
	{"pause", func(f fields) string { return f.with(f.who()+" paused it in "+f.str("state"), "reason") }},
	{"unpause", func(f fields) string { return f.who() + " let it go on in " + f.str("state") }},
	{"cancel", func(f fields) string { return f.with(f.who()+" cancelled it in "+f.str("state"), "reason") }},
	{"error", func(f fields) string { return f.with("error in "+f.str("state"), "error") }},
	{"retry", func(f fields) string {
		return fmt.Sprintf("retry %s of %s of %s", f.str("retry"), f.str("max"), f.str("state"))
	}},
	{"finish", func(f fields) string { return "finished as " + f.str("status") + " in " + f.str("state") }},
	{"worker", func(f fields) string {
		return fmt.Sprintf("%s worker %s recorded %s", f.str("state"), f.str("worker_id"), f.str("status"))
	}},
	{"supervisor-record", func(f fields) string {
		return fmt.Sprintf("%s recorded worker %s %s", f.str("supervisor"), f.str("worker_id"), f.str("status"))
	}},
	{"agent_launch", func(f fields) string { return f.agent() + " launched" }},
	{"agent_start", func(f fields) string { return f.agent() + " started" + f.in() }},
	{"agent_stop", func(f fields) string { return f.agent() + " stopped" + f.in() }},
	{"agent_failed", func(f fields) string { return f.with(f.agent()+"'s Agent call failed before it ran", "error") }},
	{"isolation", func(f fields) string {
		if f.str("worktrees") == "true" {
			return fmt.Sprintf("the workers of %s run each in a git worktree of its own, merged into %s", f.str("state"), f.str("branch"))
		}
		return fmt.Sprintf("the workers of %s share the project's tree: %s", f.str("state"), f.str("reason"))
	}},
	{"merge", merged},
	{usage.AgentEvent, func(f fields) string {
		return fmt.Sprintf("%s spent %s in %s, %s%s", f.agent(), tokens(f["usage"]), f.count("requests", "request"), f.count("tool_uses", "tool call"), model(f.str("model")))
	}},
	{usage.MainEvent, func(f fields) string {
		return fmt.Sprintf("main thread in %s spent %s in %s%s", f.str("state"), tokens(f["usage"]), f.count("requests", "request"), model(f.str("model")))
	}},
	{"migrated", func(f fields) string {
		return fmt.Sprintf("checkpoint migrated from %s to %s (original kept as %s)", f.str("from"), f.str("to"), f.str("backup"))
	}},
}

// merged says what became of a worker's branch (lib/worktree's
// statuses).
func merged(f fields) string {
	who := f.str("state") + " worker " + f.str("worker_id")
	kept := ""
	if p := f.str("patch"); p != "" {
		kept = "; its work is kept in " + p
	}
	switch f.str("status") {
	case "merged":
		return fmt.Sprintf("%s: branch %s merged (%s)", who, f.str("branch"), short(f.str("merge")))
	case "empty":
		return who + ": nothing to merge"
	case "conflict":
		return fmt.Sprintf("%s: branch %s conflicts with %s in %s, merge aborted%s", who, f.str("branch"),
			cmp.Or(strings.Join(texts(f["with"]), ", "), "the merged branches"), strings.Join(texts(f["files"]), ", "), kept)
	}
	return fmt.Sprintf("%s: attempt discarded, its worktree and branch removed%s", who, kept)
}

// short is a commit's abbreviation.
func short(sha string) string { return sha[:min(len(sha), 12)] }

// fields are an event's fields, as meanings read them.
type fields map[string]any

// in is where an isolated agent worked, "" for one in the project's tree.
func (f fields) in() string {
	if wt := f.str("worktree"); wt != "" {
		return " in worktree " + filepath.Base(wt)
	}
	return ""
}

// str is field k as one safe line.
func (f fields) str(k string) string { return text(f[k]) }

// count is field k, a number of things: "1 request", "3 requests".
func (f fields) count(k, thing string) string {
	n, err := strconv.Atoi(cmp.Or(f.str(k), "0"))
	if err != nil {
		return f.str(k) + " " + thing + "s"
	}
	return status.Count(n, thing)
}

// with is s, then ": " and field k when the event has it.
func (f fields) with(s, k string) string {
	if v := f.str(k); v != "" {
		return s + ": " + v
	}
	return s
}

// who is the person who acted, someone when the event does not say.
func (f fields) who() string {
	if who := f.str("by"); who != "" {
		return who
	}
	return "someone"
}

// agent is the agent's type and its worker.
func (f fields) agent() string {
	return strings.TrimSpace(f.str("agent_type") + " " + f.str("worker_id"))
}

func model(m string) string {
	if m == "" {
		return ""
	}
	return ", model " + m
}

// tokens is a recorded usage for people.
func tokens(v any) string {
	u := usage.FromFields(v)
	return fmt.Sprintf("%s tokens (input %s, output %s, cache read %s, cache write %s)", usage.Tokens(u.Total()),
		usage.Tokens(u.Input), usage.Tokens(u.Output), usage.Tokens(u.CacheRead), usage.Tokens(u.CacheWrite))
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

// Render lays the entries out for people, one event each: time (UTC),
// event, how long it took, and what it means (last, as it may be long,
// wrapped at width under its column; 0 keeps it on one line).
func Render(entries []Entry, width int) string {
	if len(entries) == 0 {
		return "no events recorded\n"
	}
	rows := [][4]string{{"TIME (UTC)", "EVENT", "TOOK", "WHAT"}}
	for _, e := range entries {
		took := ""
		if e.DurationMs != nil {
			took = status.Duration(e.Duration())
		}
		rows = append(rows, [4]string{e.TS.UTC().Format("2006-01-02 15:04:05"), kv.OneLine(e.Event), took, e.Summary})
	}
	var cols [3]int
	for _, r := range rows {
		for i := range cols {
			cols[i] = max(cols[i], term.Len(r[i]))
		}
	}
	indent := strings.Repeat(" ", cols[0]+cols[1]+cols[2]+6)
	var b strings.Builder
	for _, r := range rows {
		line := fmt.Sprintf("%-*s  %-*s  %-*s  %s", cols[0], r[0], cols[1], r[1], cols[2], r[2], term.Indent(r[3], width, indent))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// Spent is what the workflow spent, after its events: in all, and per
// state, agents and main thread together; nothing when no tokens were
// recorded.
func Spent(t timeline.Timeline, prices *usage.Prices) string {
	total := t.Total()
	if total.Zero() {
		return ""
	}
	perState, all, _ := t.Cost(prices)
	var column []float64
	for _, s := range t.Spent() {
		if !s.Usage.Zero() {
			column = append(column, perState[s.State])
		}
	}
	places := usage.Decimals(column...)
	_, unpriced := t.Unpriced(prices)
	money := func(state string) string {
		switch {
		case prices == nil:
			return ""
		case unpriced[state] && perState[state] == 0:
			return "  no price"
		case unpriced[state]:
			return "  " + prices.MoneyIn(perState[state], places) + " + unpriced"
		}
		return "  " + prices.MoneyIn(perState[state], places)
	}
	var b strings.Builder
	cost := ""
	if prices != nil {
		cost = "  " + prices.Money(all)
	}
	fmt.Fprintf(&b, "\nspent %s tokens (input %s, output %s, cache read %s, cache write %s)%s\n", usage.Tokens(total.Total()),
		usage.Tokens(total.Input), usage.Tokens(total.Output), usage.Tokens(total.CacheRead), usage.Tokens(total.CacheWrite), cost)
	if models, _ := t.Unpriced(prices); len(models) > 0 {
		fmt.Fprintf(&b, "  (%s: the money leaves their tokens out)\n", status.UnpricedText(models, total.Total()))
	}
	width := 0
	for _, s := range t.Spent() {
		width = max(width, term.Len(s.State))
	}
	for _, s := range t.Spent() {
		if !s.Usage.Zero() {
			fmt.Fprintf(&b, "  %-*s  %7s tokens%s\n", width, kv.OneLine(s.State), usage.Tokens(s.Usage.Total()), money(s.State))
		}
	}
	return b.String()
}
