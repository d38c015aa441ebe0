package checkpoint

import "testing"

// TestActive: of the statuses Validate accepts, in_progress and the two a
// person holds a workflow in are active (unfinished); only in_progress
// lets the command move on; "" (a document older than the field) counts
// as in_progress.
func TestActive(t *testing.T) {
	type verdict struct{ active, running, held bool }
	want := map[string]verdict{
		"":                  {true, true, false},
		"in_progress":       {true, true, false},
		"awaiting_approval": {true, false, true},
		"paused":            {true, false, true},
		"complete":          {},
		"failed":            {},
		"abandoned":         {},
		"cancelled":         {},
	}
	for _, s := range statuses {
		if _, ok := want[s]; !ok {
			t.Errorf("status %q has no expectation here: decide whether it is active", s)
		}
	}
	for s, w := range want {
		if got := (verdict{Active(s), Running(s), Held(s)}); got != w {
			t.Errorf("status %q: (active, running, held) = %v, want %v", s, got, w)
		}
	}
}
