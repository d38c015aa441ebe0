package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Text from a checkpoint or the event log (a cloned repository's) is text
// on the page, never markup, and every value reaches it escaped.
func TestRenderEscapesAndLinks(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	run := timeline.Timeline{
		ID: "wf", Command: "coordinate", Description: `<script>alert(1)</script> & "x"`, Status: "complete",
		Start: t0, End: t0.Add(time.Minute), Lanes: 1,
		States: []timeline.State{{Name: "research", Start: t0, End: t0.Add(time.Minute)}},
		Agents: []timeline.Agent{{ID: "a1", Type: "research-specialist", Worker: `r1"><b>`, State: "research", Start: t0.Add(time.Second), End: t0.Add(30 * time.Second),
			Status: timeline.Failed, Usage: usage.Usage{Input: 1000, Output: 234}, Measured: true, Wave: 1, Artifact: "specs/r1.md", Error: "<img src=x>"}},
	}
	var b bytes.Buffer
	err := Render(&b, Input{Run: run, Generated: t0, Version: "1", Project: "/p", Page: "/p/out"})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", `"><b>`, "<img", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;x&#34;", `href="../specs/r1.md"`, `class="bar agent failed"`,
		"r1&#34;&gt;&lt;b&gt; · 1.2k</a>", `<span id="total-tokens">1.2k</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestLink: an artifact's link works wherever the page is written:
// relative from a page in the project, a file: URL from one outside it
// (which html/template turned into #ZgotmplZ); a path a cloned
// repository's checkpoint carries is escaped, never a scheme of its own.
func TestLink(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{"/p/reports", "/p/.flowstate/specs/w/r 1.md", "../.flowstate/specs/w/r%201.md"},
		{"/p", "specs/r1.md", "specs/r1.md"},
		{"/tmp/out", "/p/.flowstate/specs/w/r1.md", "file:///p/.flowstate/specs/w/r1.md"},
		{"/p", "javascript:alert(1)", "./javascript:alert%281%29"},
		{"/p", "/p/a#b?c.md", "a%23b%3Fc.md"},
	} {
		if got := string(Link("/p", tc.dir, tc.path)); got != tc.want {
			t.Errorf("Link(/p, %s, %s) = %s, want %s", tc.dir, tc.path, got, tc.want)
		}
	}
	t0 := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	run := timeline.Timeline{ID: "wf", Status: "complete", Start: t0, End: t0.Add(time.Minute), Lanes: 1,
		Agents: []timeline.Agent{{ID: "a1", Type: "r", Worker: "r1", State: "research", Start: t0, End: t0.Add(time.Second), Status: timeline.Done, Artifact: "/p/.flowstate/specs/w/r1.md"}}}
	var b bytes.Buffer
	if err := Render(&b, Input{Run: run, Generated: t0, Project: "/p", Page: "/tmp/out"}); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); !strings.Contains(page, `href="file:///p/.flowstate/specs/w/r1.md" title=".flowstate/specs/w/r1.md"><code>r1.md<wbr></code>`) ||
		strings.Contains(page, "ZgotmplZ") || !strings.Contains(page, "Artifacts are in <code>.flowstate/specs/w/</code>") {
		t.Errorf("a page outside the project does not link or show the artifact project-relative:\n%s", page)
	}
	// A file a failed worker never wrote is named, not linked.
	b.Reset()
	if err := Render(&b, Input{Run: run, Generated: t0, Project: "/p", Page: "/tmp/out", Exists: func(string) bool { return false }}); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); strings.Contains(page, `class="artifact"`) || !strings.Contains(page, `<code title=".flowstate/specs/w/r1.md">r1.md<wbr></code>`) {
		t.Errorf("a missing artifact is linked, or not named")
	}
}

// TestTicks: 5 to 10 marks on any span, to the longest a time.Duration
// holds (a run whose damaged log dates it to year 1), which once took the
// loop past the span's end into an overflow and never returned.
func TestTicks(t *testing.T) {
	for span, want := range map[time.Duration]int{30 * time.Second: 7, 31*time.Minute + 41*time.Second: 7, 3 * time.Hour: 7,
		9 * 24 * time.Hour: 5, 20 * 24 * time.Hour: 7, time.Duration(math.MaxInt64): 8} {
		if got := len(ticks(span)); got != want {
			t.Errorf("ticks(%v): %d, want %d", span, got, want)
		}
	}
	if got := ticks(20 * 24 * time.Hour); got[1].Label != "72h00m" {
		t.Errorf("ticks of 20 days: a mark every %s, want every 3 days", got[1].Label)
	}
}

// A run whose log has no dated event (lost, or the checkpoint is older
// than it) spans from its checkpoint's creation, not from the zero time:
// its page is made, and small.
func TestRenderWithoutEvents(t *testing.T) {
	now := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	run := timeline.Build(timeline.Input{ID: "wf", Checkpoint: []byte(`{"status": "in_progress", "created_at": "2026-05-04T09:00:00Z"}`), Initial: "initialize", Now: now})
	var b bytes.Buffer
	if err := Render(&b, Input{Run: run, Generated: now}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2026-05-04 09:00:00 UTC") || b.Len() > 64<<10 {
		t.Errorf("a page of %d bytes, started %s", b.Len(), run.Start)
	}
}

// TestWaves: a wave's bracket spans its agents' bars and counts them, and
// waves that start together keep the order of their first agents, so the
// same run always makes the same page.
func TestWaves(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	agent := func(state string, wave, lane int, from, to time.Duration) timeline.Agent {
		return timeline.Agent{Type: "w", State: state, Wave: wave, Lane: lane, Start: t0.Add(from), End: t0.Add(to), Status: timeline.Done}
	}
	run := timeline.Timeline{ID: "wf", Start: t0, End: t0.Add(100 * time.Second), Lanes: 4, Agents: []timeline.Agent{
		agent("review", 1, 0, 10*time.Second, 20*time.Second),
		agent("audit", 1, 1, 10*time.Second, 30*time.Second),
		agent("review", 1, 2, 12*time.Second, 40*time.Second),
		agent("review", 2, 3, 50*time.Second, 60*time.Second),
	}}
	v := build(Input{Run: run})
	var got []string
	for _, w := range v.Waves {
		got = append(got, fmt.Sprintf("%s %.0f-%.0f", w.Title, w.Left, w.Left+w.Width))
	}
	want := []string{"review wave 1: 2 agents 10-40", "audit wave 1: 1 agent 10-30", "review wave 2: 1 agent 50-60"}
	if !slices.Equal(got, want) {
		t.Errorf("waves %q, want %q", got, want)
	}
}

// TestStays: a state's time is the sum of its stays, and what befell any
// of them is noted once, in the order first met.
func TestStays(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	states := []timeline.State{
		{Name: "test", Start: t0, End: t0.Add(time.Minute), Failed: true},
		{Name: "debug", Start: t0.Add(time.Minute), End: t0.Add(2 * time.Minute), Rewound: true},
		{Name: "test", Start: t0.Add(2 * time.Minute), End: t0.Add(4 * time.Minute), Failed: true, Partial: true, Rewound: true},
	}
	took, notes := stays(states, "test")
	if want := []string{"error", "rewound", "partial failure"}; took != 3*time.Minute || !slices.Equal(notes, want) {
		t.Errorf("stays: %v %q, want 3m0s %q", took, notes, want)
	}
	if took, notes := stays(states, "plan"); took != 0 || notes != nil {
		t.Errorf("stays in a state never entered: %v %q", took, notes)
	}
}
