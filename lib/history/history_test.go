package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

const log = `{"ts":"2026-04-01T10:00:00Z","event":"init"}
{"ts":"2026-04-01T10:00:01Z","event":"transition","from":"initialize","to":"research","reason":"classified"}
{"ts":"2026-04-01T10:00:02Z","event":"agent_launch","session":"s","agent_type":"research-specialist","worker_id":"research_1"}
{"ts":"2026-04-01T10:00:03Z","event":"agent_start","session":"s","agent_id":"a1","agent_type":"research-specialist"}
{"ts":"2026-04-01T10:00:43Z","event":"agent_stop","session":"s","agent_id":"a1","agent_type":"research-specialist","worker_id":"research_1"}
{"ts":"2026-04-01T10:00:43.5Z","event":"agent_usage","session":"s","agent_id":"a1","agent_type":"research-specialist","worker_id":"research_1","model":"claude-opus-5-5","usage":{"input_tokens":1200,"output_tokens":340,"cache_read_tokens":45000,"cache_write_tokens":2100},"requests":7,"tool_uses":6,"duration_ms":40500,"status":"completed","source":"transcript"}
{"ts":"2026-04-01T10:00:43.6Z","event":"main_usage","session":"s","state":"research","model":"claude-opus-5-5","usage":{"input_tokens":10,"output_tokens":20,"cache_read_tokens":3000,"cache_write_tokens":400},"requests":3,"cursor":{"offset":100}}
{"ts":"2026-04-01T10:00:44Z","event":"worker","state":"research","worker_id":"research_1","status":"completed"}
this line was torn by a crash
{"ts":"2026-04-01T10:01:00Z","event":"transition","from":"research","to":"plan"}
{"ts":"2026-04-01T10:02:00Z","event":"gate","state":"implement","from":"plan","message":"Approve the plan"}
{"ts":"2026-04-01T10:12:00Z","event":"reject","state":"implement","from":"plan","to":"plan","reason":"too vague","by":"ann","via":"shell"}
{"ts":"2026-04-01T10:12:00Z","event":"rewind","from":"plan","to":"plan","states":["plan"],"reason":"too vague","by":"ann","via":"shell"}
{"ts":"2026-04-01T10:13:00Z","event":"pause","state":"plan","reason":"lunch\u001b[31m","by":"bob"}
{"ts":"2026-04-01T11:13:00Z","event":"unpause","state":"plan","by":"bob"}
{"ts":"2026-04-01T11:14:00Z","event":"gate","state":"implement","from":"plan","message":"Approve the plan"}
{"ts":"2026-04-01T11:15:30Z","event":"approve","state":"implement","from":"plan","note":"ok","by":"ann","via":"claude-code"}
{"ts":"2026-04-01T11:15:30Z","event":"transition","from":"plan","to":"implement","reason":"approved by ann"}
{"ts":"2026-04-01T11:16:00Z","event":"cancel","state":"implement","reason":"wrong repo","by":"ann"}
{"ts":"2026-04-01T11:16:01Z","event":"custom","b":2,"a":"x"}
`

func TestParse(t *testing.T) {
	// The start names no worker: the timeline's pairing does.
	run := timeline.Build(timeline.Input{ID: "wf", Checkpoint: []byte(`{"status":"cancelled"}`), Events: []byte(log), Initial: "initialize"})
	entries, skipped := Parse([]byte(log), run.Workers())
	if skipped != 1 {
		t.Errorf("skipped %d lines, want the torn one", skipped)
	}
	type row struct {
		summary string
		took    time.Duration // -1: none
	}
	want := []row{
		{"workflow created", -1},
		{"initialize → research: classified", time.Second},
		{"research-specialist research_1 launched", -1},
		{"research-specialist research_1 started", -1},
		{"research-specialist research_1 stopped", 40 * time.Second},
		{"research-specialist research_1 spent 48.6k tokens (input 1.2k, output 340, cache read 45.0k, cache write 2.1k) in 7 requests, 6 tool calls, model claude-opus-5-5", 40500 * time.Millisecond},
		{"main thread in research spent 3.4k tokens (input 10, output 20, cache read 3.0k, cache write 400) in 3 requests, model claude-opus-5-5", -1},
		{"research worker research_1 recorded completed", -1},
		{"research → plan", 59 * time.Second},
		{"waits for approval to enter implement: Approve the plan", -1},
		{"ann rejected entering implement; back to plan: too vague", 10 * time.Minute},
		{"ann rewound plan → plan (plan no longer completed): too vague", 11 * time.Minute},
		{"bob paused it in plan: lunch [31m", -1},
		{"bob let it go on in plan", time.Hour},
		{"waits for approval to enter implement: Approve the plan", -1},
		{"ann approved entering implement: ok", 90 * time.Second},
		{"plan → implement: approved by ann", time.Hour + 3*time.Minute + 30*time.Second},
		{"ann cancelled it in implement: wrong repo", -1},
		{"a=x b=2", -1},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(entries), len(want))
	}
	for i, e := range entries {
		if e.Seq != i+1 {
			t.Errorf("entry %d: seq %d", i, e.Seq)
		}
		if e.Summary != want[i].summary {
			t.Errorf("entry %d (%s): summary %q, want %q", i+1, e.Event, e.Summary, want[i].summary)
		}
		switch {
		case want[i].took < 0 && e.DurationMs != nil:
			t.Errorf("entry %d (%s): took %s, want none", i+1, e.Event, e.Duration())
		case want[i].took >= 0 && (e.DurationMs == nil || e.Duration() != want[i].took):
			t.Errorf("entry %d (%s): took %v, want %s", i+1, e.Event, e.DurationMs, want[i].took)
		}
	}
}

// TestJSONIsStable: the document's shape is the contract for tools.
func TestJSONIsStable(t *testing.T) {
	entries, _ := Parse([]byte(log), nil)
	b, err := json.Marshal(Document{WorkflowID: "w", Events: entries[4:5], Agents: []timeline.AgentDoc{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"workflow_id":"w","events":[{"seq":5,"ts":"2026-04-01T10:00:43Z","event":"agent_stop","summary":"research-specialist research_1 stopped","duration_ms":40000,` +
		`"fields":{"agent_id":"a1","agent_type":"research-specialist","session":"s","worker_id":"research_1"}}],` +
		`"agents":[],"tokens":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"total":0}}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
}

func TestRender(t *testing.T) {
	entries, _ := Parse([]byte(log), nil)
	out := Render(entries[:5], 0)
	want := "TIME (UTC)           EVENT         TOOK   WHAT\n" +
		"2026-04-01 10:00:00  init                 workflow created\n" +
		"2026-04-01 10:00:01  transition    1.0s   initialize → research: classified\n" +
		"2026-04-01 10:00:02  agent_launch         research-specialist research_1 launched\n" +
		"2026-04-01 10:00:03  agent_start          research-specialist started\n" +
		"2026-04-01 10:00:43  agent_stop    40.0s  research-specialist research_1 stopped\n"
	if out != want {
		t.Errorf("Render:\n%s\nwant\n%s", out, want)
	}
	if strings.Contains(Render(entries, 0), "\x1b") {
		t.Error("an escape sequence from the log reached the terminal")
	}
	if got := Render(nil, 0); got != "no events recorded\n" {
		t.Errorf("Render(nil, 0) = %q", got)
	}
}

// TestClockSteppedBack: when the clock went back between two events, what
// the later one ends took no time, never a negative one, and the events
// keep the order they were written in.
func TestClockSteppedBack(t *testing.T) {
	const back = `{"ts":"2026-04-01T12:00:00Z","event":"init"}
{"ts":"2026-04-01T10:00:00Z","event":"transition","from":"initialize","to":"research"}
{"ts":"2026-04-01T10:00:05Z","event":"agent_start","agent_id":"a1","agent_type":"research-specialist"}
{"ts":"2026-04-01T09:00:00Z","event":"agent_stop","agent_id":"a1","agent_type":"research-specialist"}
{"ts":"2026-04-01T09:00:09Z","event":"transition","from":"research","to":"plan"}
`
	entries, _ := Parse([]byte(back), nil)
	var order []string
	for _, e := range entries {
		order = append(order, e.Event)
		if e.DurationMs != nil && *e.DurationMs < 0 {
			t.Errorf("%d %s took %d ms", e.Seq, e.Event, *e.DurationMs)
		}
	}
	if want := "init transition agent_start agent_stop transition"; strings.Join(order, " ") != want {
		t.Errorf("order %q, want the order written, %q", order, want)
	}
	if d := entries[4].Duration(); d != 0 {
		t.Errorf("research, entered at 10:00:00 and left at 09:00:09, took %v; want 0", d)
	}
}

// TestSummary: the kinds of events TestParse's log does not hold.
func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		fields map[string]any
		want   string
	}{
		{"error", map[string]any{"state": "test", "error": "3 failed"}, "error in test: 3 failed"},
		{"error", map[string]any{"state": "test"}, "error in test"},
		{"retry", map[string]any{"state": "test", "retry": json.Number("1"), "max": json.Number("2")}, "retry 1 of 2 of test"},
		{"finish", map[string]any{"state": "complete", "status": "complete"}, "finished as complete in complete"},
		{"supervisor-record", map[string]any{"supervisor": "sub-supervisor", "worker_id": "w1", "status": "failed"}, "sub-supervisor recorded worker w1 failed"},
		{"migrated", map[string]any{"from": "2.0", "to": "2.1", "backup": "checkpoint.json.2.0"}, "checkpoint migrated from 2.0 to 2.1 (original kept as checkpoint.json.2.0)"},
		{"pause", map[string]any{"state": "plan"}, "someone paused it in plan"},
		{"rewind", map[string]any{"from": "test", "to": "plan", "states": []any{"plan", "test"}, "by": "ann", "reason": "split it"},
			"ann rewound test → plan (plan, test no longer completed): split it"},
		{"rewind", map[string]any{"from": "complete", "to": "review", "states": []any{"review", "complete"}, "by": "unknown", "kind": "retry"},
			"back complete → review to run failed workers again (review, complete no longer completed)"},
		{"retry_failed", map[string]any{"state": "review", "workers": []any{"review_2"}}, "the workers of review whose failure was accepted run again: review_2"},
		{"agent_stop", map[string]any{"agent_type": "tester"}, "tester stopped"},
		{"odd", map[string]any{}, ""},
	} {
		if got := summary(tc.kind, tc.fields); got != tc.want {
			t.Errorf("summary(%s, %v) = %q, want %q", tc.kind, tc.fields, got, tc.want)
		}
	}
}

// TestSpent: the totals after the events, money in one precision down its
// column, a state whose model has no price said so (never 0.00), the
// model named with its share of the tokens; counts in the singular for
// one.
func TestSpent(t *testing.T) {
	run := timeline.Build(timeline.Input{ID: "wf", Checkpoint: []byte(`{"status":"complete"}`), Initial: "initialize", Events: []byte(
		`{"ts":"2026-04-01T10:00:00Z","event":"init"}
{"ts":"2026-04-01T10:00:01Z","event":"agent_usage","agent_id":"c","agent_type":"workflow-classifier","model":"cheap","usage":{"input_tokens":100},"requests":1,"tool_uses":1,"duration_ms":1000}
{"ts":"2026-04-01T10:00:02Z","event":"transition","from":"initialize","to":"research"}
{"ts":"2026-04-01T10:00:03Z","event":"main_usage","state":"research","model":"m1","usage":{"input_tokens":1000,"output_tokens":100},"requests":1}
{"ts":"2026-04-01T10:00:04Z","event":"main_usage","state":"plan","model":"m1","usage":{"input_tokens":100000},"requests":3}
`)})
	prices := &usage.Prices{Currency: "USD", PerM: map[string]usage.Rate{"m1": {Input: 1, Output: 10}}}
	want := "\nspent 101k tokens (input 101k, output 100, cache read 0, cache write 0)  0.10 USD\n" +
		"  (no price for cheap (<1% of the tokens): the money leaves their tokens out)\n" +
		"  initialize      100 tokens  no price\n" +
		"  research       1.1k tokens  0.0020 USD\n" +
		"  plan           100k tokens  0.1000 USD\n"
	if got := Spent(run, prices); got != want {
		t.Errorf("Spent:\n%s\nwant\n%s", got, want)
	}
	entries, _ := Parse([]byte(`{"ts":"2026-04-01T10:00:01Z","event":"agent_usage","agent_id":"c","agent_type":"x","usage":{"input_tokens":100},"requests":1,"tool_uses":1}
{"ts":"2026-04-01T10:00:03Z","event":"main_usage","state":"research","usage":{"input_tokens":1000},"requests":2}`), nil)
	if got := entries[0].Summary + " | " + entries[1].Summary; !strings.Contains(got, "in 1 request, 1 tool call |") || !strings.Contains(got, "in 2 requests") {
		t.Errorf("counts: %s", got)
	}
}
