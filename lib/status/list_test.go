package status

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/store"
)

func TestList(t *testing.T) {
	got := List([]Row{
		{Summary: store.Summary{ID: "w2", Command: "coordinate", Scope: "research-only", CurrentState: "research", Status: "complete", UpdatedAt: "2025-11-07T14:30:22Z"},
			Took: "1m10s", Tokens: "12.3k", Cost: "0.0400 USD"},
		{Summary: store.Summary{ID: "w1", Command: "coordinate", Scope: "research-only", CurrentState: "research", Status: "complete", UpdatedAt: "2025-11-07T14:00:00Z"},
			Took: "58.0s", Tokens: "980", Cost: "≥0.0040 USD"},
		{Summary: store.Summary{ID: "old", Command: "c", Scope: "s", CurrentState: "plan", UpdatedAt: "2025-01-01T00:00:00Z"}},
	}, 0)
	want := "ID   COMMAND     SCOPE          STATE     STATUS     TOOK  TOKENS         COST  UPDATED\n" +
		"w2   coordinate  research-only  research  complete  1m10s   12.3k   0.0400 USD  2025-11-07T14:30:22Z\n" +
		"w1   coordinate  research-only  research  complete  58.0s     980  ≥0.0040 USD  2025-11-07T14:00:00Z\n" +
		"old  c           s              plan      -                                     2025-01-01T00:00:00Z\n"
	if got != want {
		t.Errorf("List:\n%s\nwant:\n%s", got, want)
	}
	if got := List([]Row{{Summary: store.Summary{ID: "w"}, Took: "1.0s", Tokens: "1"}}, 0); strings.Contains(got, "COST") {
		t.Errorf("a COST column without prices:\n%s", got)
	}
}

// Fitted to a width, a row is shortened, never broken, and the ID stays
// whole.
func TestListFits(t *testing.T) {
	all := []Row{
		{Summary: store.Summary{ID: "coordinate-20251107-143022-a1b2c3", Command: "coordinate", Scope: "full-implementation", CurrentState: "implement", Status: "awaiting_approval", UpdatedAt: "2025-11-07T14:30:22Z"},
			Took: "12m30s", Tokens: "3.38M", Cost: "7.21 USD"},
		{Summary: store.Summary{ID: "orchestrate-20251106-090000-ffffff", Command: "orchestrate", Scope: "research-and-revise", CurrentState: "research", Status: "in_progress", UpdatedAt: "2025-11-06T09:00:00Z"},
			Took: "2m01s", Tokens: "212k", Cost: "0.61 USD"},
	}
	for width, want := range map[int]string{
		160: "ID                                  COMMAND      SCOPE                STATE      STATUS               TOOK  TOKENS      COST  UPDATED\n" +
			"coordinate-20251107-143022-a1b2c3   coordinate   full-implementation  implement  awaiting_approval  12m30s   3.38M  7.21 USD  2025-11-07T14:30:22Z\n" +
			"orchestrate-20251106-090000-ffffff  orchestrate  research-and-revise  research   in_progress         2m01s    212k  0.61 USD  2025-11-06T09:00:00Z\n",
		135: "ID                                  SCOPE                STATE      STATUS               TOOK  TOKENS      COST  UPDATED\n" +
			"coordinate-20251107-143022-a1b2c3   full-implementation  implement  awaiting_approval  12m30s   3.38M  7.21 USD  11-07 14:30\n" +
			"orchestrate-20251106-090000-ffffff  research-and-revise  research   in_progress         2m01s    212k  0.61 USD  11-06 09:00\n",
		120: "ID                                  SCOPE                STATE      STATUS               TOOK  TOKENS      COST\n" +
			"coordinate-20251107-143022-a1b2c3   full-implementation  implement  awaiting_approval  12m30s   3.38M  7.21 USD\n" +
			"orchestrate-20251106-090000-ffffff  research-and-revise  research   in_progress         2m01s    212k  0.61 USD\n",
		80: "ID                                  STATE     STATUS      TOOK  TOKENS      COST\n" +
			"coordinate-20251107-143022-a1b2c3   impleme…  awaitin…  12m30s   3.38M  7.21 USD\n" +
			"orchestrate-20251106-090000-ffffff  research  in_prog…   2m01s    212k  0.61 USD\n",
	} {
		got := List(all, width)
		if got != want {
			t.Errorf("List at %d columns:\n%s\nwant:\n%s", width, got, want)
		}
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if n := len([]rune(line)); n > width {
				t.Errorf("%d columns: a line of %d: %q", width, n, line)
			}
		}
	}
}
