package status

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/store"
)

func TestList(t *testing.T) {
	got := List([]store.Summary{
		{ID: "w2", Command: "coordinate", Scope: "research-only", CurrentState: "research", Status: "complete", UpdatedAt: "2025-11-07T14:30:22Z"},
		{ID: "old", Command: "c", Scope: "s", CurrentState: "plan", UpdatedAt: "2025-01-01T00:00:00Z"},
	}, 0)
	want := "ID   COMMAND     SCOPE          STATE     STATUS    UPDATED\n" +
		"w2   coordinate  research-only  research  complete  2025-11-07T14:30:22Z\n" +
		"old  c           s              plan      -         2025-01-01T00:00:00Z\n"
	if got != want {
		t.Errorf("List:\n%s\nwant:\n%s", got, want)
	}
	if got := List(nil, 80); got != "ID  COMMAND  SCOPE  STATE  STATUS  UPDATED\n" {
		t.Errorf("List(nil) = %q, want the header alone", got)
	}
}

// Fitted to a width, a row is shortened, never broken, and the ID stays
// whole.
func TestListFits(t *testing.T) {
	all := []store.Summary{
		{ID: "coordinate-20251107-143022-a1b2c3", Command: "coordinate", Scope: "full-implementation", CurrentState: "implement", Status: "awaiting_approval", UpdatedAt: "2025-11-07T14:30:22Z"},
		{ID: "orchestrate-20251106-090000-ffffff", Command: "orchestrate", Scope: "research-and-revise", CurrentState: "research", Status: "in_progress", UpdatedAt: "2025-11-06T09:00:00Z"},
	}
	for width, want := range map[int]string{
		140: "ID                                  COMMAND      SCOPE                STATE      STATUS             UPDATED\n" +
			"coordinate-20251107-143022-a1b2c3   coordinate   full-implementation  implement  awaiting_approval  2025-11-07T14:30:22Z\n" +
			"orchestrate-20251106-090000-ffffff  orchestrate  research-and-revise  research   in_progress        2025-11-06T09:00:00Z\n",
		100: "ID                                  SCOPE                STATE      STATUS             UPDATED\n" +
			"coordinate-20251107-143022-a1b2c3   full-implementation  implement  awaiting_approval  11-07 14:30\n" +
			"orchestrate-20251106-090000-ffffff  research-and-revise  research   in_progress        11-06 09:00\n",
		80: "ID                                  SCOPE      STATE      STATUS     UPDATED\n" +
			"coordinate-20251107-143022-a1b2c3   full-imp…  implement  awaiting…  11-07 14:30\n" +
			"orchestrate-20251106-090000-ffffff  research…  research   in_progr…  11-06 09:00\n",
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
