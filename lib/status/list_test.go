package status

import (
	"testing"

	"github.com/flowstate-dev/flowstate/lib/store"
)

func TestList(t *testing.T) {
	got := List([]store.Summary{
		{ID: "w2", Command: "coordinate", Scope: "research-only", CurrentState: "research", Status: "complete", UpdatedAt: "2025-11-07T14:30:22Z"},
		{ID: "old", Command: "c", Scope: "s", CurrentState: "plan", UpdatedAt: "2025-01-01T00:00:00Z"},
	})
	want := "ID   COMMAND     SCOPE          STATE     STATUS    UPDATED\n" +
		"w2   coordinate  research-only  research  complete  2025-11-07T14:30:22Z\n" +
		"old  c           s              plan      -         2025-01-01T00:00:00Z\n"
	if got != want {
		t.Errorf("List:\n%s\nwant:\n%s", got, want)
	}
	if got := List(nil); got != "ID  COMMAND  SCOPE  STATE  STATUS  UPDATED\n" {
		t.Errorf("List(nil) = %q, want the header alone", got)
	}
}
