package status

import (
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// costLog is a research phase with two researchers side by side, one
// done and recorded, one at work, and the main thread's usage.
var costLog = events(ev(at(0), "init", ""), to(5, "research"),
	ev(at(6), "agent_launch", `"session":"s","agent_type":"research-specialist","worker_id":"research_1"`),
	ev(at(6.2), "agent_start", `"session":"s","agent_id":"a1","agent_type":"research-specialist"`),
	ev(at(6.1), "agent_launch", `"session":"s","agent_type":"research-specialist","worker_id":"research_2"`),
	ev(at(6.3), "agent_start", `"session":"s","agent_id":"a2","agent_type":"research-specialist"`),
	ev(at(40), "agent_stop", `"session":"s","agent_id":"a1","agent_type":"research-specialist","worker_id":"research_1"`),
	ev(at(40.1), "agent_usage", `"session":"s","agent_id":"a1","agent_type":"research-specialist","worker_id":"research_1","model":"m","usage":{"input_tokens":1000,"output_tokens":2000,"cache_read_tokens":30000,"cache_write_tokens":500},"requests":4,"duration_ms":34000,"status":"completed"`),
	ev(at(40.2), "worker", `"state":"research","worker_id":"research_1","status":"completed"`),
	ev(at(41), "main_usage", `"session":"s","state":"initialize","model":"m","usage":{"input_tokens":10,"output_tokens":20,"cache_read_tokens":300,"cache_write_tokens":5},"requests":2`))

func TestRenderTokens(t *testing.T) {
	doc := `{"command":"coordinate","status":"in_progress","session_id":"s","workflow_description":"Add login","state_machine":{"current_state":"research","completed_states":["initialize"],"workflow_config":{"scope":"research-only"}}}`
	in := Input{ID: "wf-1", Checkpoint: []byte(doc), Events: []byte(costLog), Machine: machine.Default(), Now: at(70), StuckAfter: time.Hour,
		Prices: &usage.Prices{Currency: "USD", PerM: map[string]usage.Rate{"m": {Input: 10, Output: 50, CacheRead: 1, CacheWrite: 10}}}}
	tl := timeline.Build(timeline.Input{ID: "wf-1", Checkpoint: in.Checkpoint, Events: in.Events, Initial: "initialize", Now: in.Now, StuckAfter: time.Hour})
	// What a running agent spent so far, as `flowstate status` reads it
	// from its transcript.
	tl.Agents[1].Usage, tl.Agents[1].Model = usage.Usage{Input: 700}, "m"
	in.Timeline = &tl
	got := Render(in)
	want := "wf-1  coordinate · research-only · in_progress\nAdd login\n\n" +
		"  ✓ initialize  5.0s          335 tokens, 0.0014 USD\n" +
		"  ▶ research    1m05s so far  34.2k tokens, 0.1520 USD\n" +
		"  spent 34.5k tokens (input 1.7k, output 2.0k, cache read 30.3k, cache write 505), 0.15 USD\n" +
		"\nagents in research\n" +
		"  ✓ research-specialist research_1  done after 33.8s, 33.5k tokens, 0.1450 USD\n" +
		"  ▶ research-specialist research_2  running 1m03s, 700 tokens so far, 0.0070 USD\n"
	if got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestTimeline(t *testing.T) {
	doc := `{"command":"coordinate","status":"in_progress","state_machine":{"current_state":"research"}}`
	tl := timeline.Build(timeline.Input{ID: "wf-1", Checkpoint: []byte(doc), Events: []byte(costLog), Initial: "initialize", Now: at(70), StuckAfter: time.Hour})
	got := Timeline(tl, 60, false)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{
		"wf-1  in_progress · 1m10s · 33.8k tokens",
		"          ┊0.0s           ┊22.4s          ┊44.8s",
		"states    iiirrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr",
		"agents        █████████████████████████",
		"              >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>",
	}
	if strings.Join(lines[:5], "\n") != strings.Join(want, "\n") {
		t.Errorf("Timeline:\n%s\nwant first lines:\n%s", got, strings.Join(want, "\n"))
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 60 {
			t.Errorf("a line of %d columns at 60: %q", n, l)
		}
	}
	if !strings.Contains(got, "i initialize 5.0s 335 tokens · r research 1m05s 33.5k tokens") {
		t.Errorf("no legend of the states:\n%s", got)
	}
	if colored := Timeline(tl, 60, true); !strings.Contains(colored, green+"█"+reset) || strings.Contains(got, "\x1b") {
		t.Errorf("colour only when asked")
	}
}

// TestCanvas: a span is drawn from its start's column to its end's, both
// kept on the axis, and the row starts blank again after it is drawn.
func TestCanvas(t *testing.T) {
	t0 := at(0)
	c := newCanvas(t0, t0.Add(10*time.Second), 10, 3, painter(false))
	for _, tc := range []struct {
		from, to time.Duration
		want     string
	}{
		{0, 10 * time.Second, "x   ##########"},
		{2 * time.Second, 4*time.Second - time.Nanosecond, "x     ##"},
		{-5 * time.Second, time.Second, "x   ##"},
		{9 * time.Second, time.Hour, "x            #"},
		{5 * time.Second, 5 * time.Second, "x        #"},
	} {
		c.fill(t0.Add(tc.from), t0.Add(tc.to), '#', "")
		c.draw("x")
		lines := strings.Split(strings.TrimSuffix(c.out.String(), "\n"), "\n")
		if got := lines[len(lines)-1]; got != tc.want {
			t.Errorf("fill %v to %v: %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

// TestTimelineLegendAndEnd: at 80 columns each phrase of the legend is
// on one line, and a run that ended by its transition into complete draws
// complete as a point at the axis's end, not as a span.
func TestTimelineLegendAndEnd(t *testing.T) {
	doc := `{"command":"coordinate","status":"complete"}`
	log := costLog + events(to(80, "complete"))
	tl := timeline.Build(timeline.Input{ID: "wf-1", Checkpoint: []byte(doc), Events: []byte(log), Initial: "initialize", Now: at(4000)})
	got := Timeline(tl, 80, false)
	for _, phrase := range []string{"█▓ done", "? never seen stopping", "▒ waiting for a person", "✗ error ↻ retry ↺ rewind",
		"i initialize 5.0s 335 tokens", "r research 1m15s 33.5k tokens", "c complete 0.0s"} {
		found := false
		for _, l := range strings.Split(got, "\n") {
			found = found || strings.Contains(l, phrase)
		}
		if !found {
			t.Errorf("%q is not on one line:\n%s", phrase, got)
		}
	}
	states := strings.Split(got, "\n")[2]
	if !strings.HasSuffix(states, "rc") || strings.Count(states, "c") != 1 {
		t.Errorf("the state it ended in is not a point at the end: %q", states)
	}
	if !strings.Contains(strings.Split(got, "\n")[0], "1m20s") {
		t.Errorf("the run took 1m20s, until its transition into complete: %s", strings.Split(got, "\n")[0])
	}
}
