package report

import (
	"bytes"
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
	err := Render(&b, Input{Run: run, Generated: t0, Version: "1", StateOrder: []string{"research"},
		Artifact: func(p string) string { return "../" + p }})
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
		"r1&#34;&gt;&lt;b&gt; · 1.2k</a>", `background-color:#8ecae6`, `<span id="total-tokens">1.2k</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestTicks(t *testing.T) {
	for span, want := range map[time.Duration]int{30 * time.Second: 7, 31*time.Minute + 41*time.Second: 7, 3 * time.Hour: 7} {
		if got := len(ticks(span)); got != want {
			t.Errorf("ticks(%v): %d, want %d", span, got, want)
		}
	}
}
