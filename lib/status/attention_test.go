package status

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// TestNotes: what a person should know first, and the command to type
// as they type it: a gate and who approves it (an install's
// /workflow-approve), a spend limit, a pause, a cancel, the workers a
// user's own command went on without (its own --resume --retry-failed),
// the models without a price and their share of the tokens.
func TestNotes(t *testing.T) {
	own := Hints{Resume: "/audit --resume audit-1", Retry: "/audit --resume --retry-failed audit-1", Approve: "/workflow-approve", Reject: "/workflow-reject"}
	prices := &usage.Prices{Currency: "USD", PerM: map[string]usage.Rate{"m1": {Input: 1}}}
	priced := func(model string, n int64) *timeline.Timeline {
		return &timeline.Timeline{Agents: []timeline.Agent{{State: "a", Model: "m1", Usage: usage.Usage{Input: 300}}, {State: "a", Model: model, Usage: usage.Usage{Input: n}}}}
	}
	for _, tc := range []struct {
		name, doc string
		run       *timeline.Timeline
		prices    *usage.Prices
		hints     Hints
		want      string
	}{
		{"gate", `{"status":"awaiting_approval","hold":{"kind":"approval","since":"x","state":"implement","from":"plan","message":"Approve the plan"}}`, nil, nil, own,
			"gate: waits for a person to approve entering implement: Approve the plan | the user approves with /workflow-approve [NOTE] (in a shell: flowstate approve --workflow wf-1), or sends it back with /workflow-reject REASON; the model may not"},
		{"budget", `{"status":"awaiting_approval","hold":{"kind":"budget","since":"x","from":"plan","message":"spent 1.20M tokens of 1.00M"}}`, nil, nil, Hints{},
			"budget: held at its spend limit: spent 1.20M tokens of 1.00M | a person allows more with /flowstate:workflow-approve --budget AMOUNT (in a shell: flowstate approve --budget AMOUNT --workflow wf-1), or cancels it (flowstate cancel --reason TEXT)"},
		{"paused", `{"status":"paused","hold":{"kind":"pause","since":"x","from":"plan","by":"bob","reason":"lunch"}}`, nil, nil, own,
			"paused: paused by bob: lunch | flowstate unpause --workflow wf-1, or /audit --resume audit-1"},
		{"cancelled", `{"status":"cancelled","hold":{"kind":"cancel","since":"x","from":"plan","by":"ann","reason":"wrong repo"}}`, nil, nil, own,
			"cancelled: cancelled by ann: wrong repo | "},
		{"accepted failures, finished", `{"status":"complete","phase_data":{"review":{"partial_failures":["r2","r3"]}},"supervisor_state":{"s":{"workers":[` +
			`{"worker_id":"r1","status":"completed"},{"worker_id":"r2","status":"failed","error":"no file"},{"worker_id":"r3","status":"failed"}]}}}`, nil, nil, own,
			"failed: 2 workers failed and the workflow went on without them: r2 (no file); r3 | run them again with /audit --resume --retry-failed audit-1"},
		{"a failure it stopped on, over", `{"status":"failed","supervisor_state":{"s":{"workers":[{"worker_id":"r2","status":"failed"}]}}}`, nil, nil, own,
			"failed: 1 worker failed: r2 | "},
		{"unpriced", `{"status":"complete"}`, priced("m2", 100), prices, own,
			"unpriced: no price for m2 (25% of the tokens): the money leaves their tokens out | add their prices to .claude/flowstate.json"},
		{"no prices, no note", `{"status":"complete"}`, priced("m2", 100), nil, own, ""},
		{"all went well", `{"status":"complete"}`, priced("m1", 100), prices, own, ""},
	} {
		run := tc.run
		if run == nil {
			run = &timeline.Timeline{}
		}
		var got []string
		for _, n := range Notes("wf-1", []byte(tc.doc), run, tc.prices, tc.hints) {
			got = append(got, n.Kind+": "+n.Text+" | "+n.Do)
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 workers", 1: "1 worker", 2: "2 workers"} {
		if got := Count(n, "worker"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := fmt.Sprint(Count(1, "retry"), ", ", Count(3, "retry"), ", ", Count(2, "request"), ", ", Count(2, "status")); got != "1 retry, 3 retries, 2 requests, 2 statuses" {
		t.Errorf("plurals: %s", got)
	}
}

func TestRel(t *testing.T) {
	for _, tc := range [][3]string{
		{"/p", "/p/.flowstate/specs/x.md", ".flowstate/specs/x.md"},
		{"/p", "/q/x.md", "/q/x.md"},
		{"/p", "/p/../x.md", "/p/../x.md"},
		{"/p", "rel/x.md", "rel/x.md"},
		{"", "/p/x.md", "/p/x.md"},
	} {
		if got := Rel(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Rel(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
