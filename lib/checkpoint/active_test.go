package checkpoint

import "testing"

// TestActive: of the statuses Validate accepts, only in_progress is
// active; "" (a document older than the field) is too.
func TestActive(t *testing.T) {
	want := map[string]bool{"": true, "in_progress": true, "complete": false, "failed": false, "abandoned": false}
	for _, s := range statuses {
		if _, ok := want[s]; !ok {
			t.Errorf("status %q has no expectation here: decide whether it is active", s)
		}
	}
	for s, w := range want {
		if got := Active(s); got != w {
			t.Errorf("Active(%q) = %v, want %v", s, got, w)
		}
	}
}
