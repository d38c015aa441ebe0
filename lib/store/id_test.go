package store

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestValidID(t *testing.T) {
	ok := []string{"a", "coordinate-20261121-203835-75dc60", "orchestrate_billing_20251102_160312", "A.b-c_9", strings.Repeat("x", 128)}
	bad := []string{"", "../etc", "a/b", "/abs", "..", "a..b", ".hidden", "-flag", "new\nline", "nul\x00", "sp ace", "é", strings.Repeat("x", 129), strings.Repeat("y", 10240)}
	for _, id := range ok {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v", id, err)
		}
	}
	for _, id := range bad {
		err := ValidID(id)
		if fail.Code(err) != fail.Invalid {
			t.Errorf("ValidID(%.20q) = %v, want invalid", id, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x00") {
			t.Errorf("error for %.20q spans lines: %q", id, err)
		}
	}
}

func TestNewID(t *testing.T) {
	now := time.Date(2026, 11, 21, 20, 38, 35, 0, time.UTC)
	re := regexp.MustCompile(`^([a-z0-9-]+)-20261121-203835-[0-9a-f]{6}$`)
	for cmd, prefix := range map[string]string{"coordinate": "coordinate", "My Command!": "my-command", "": "wf", "///": "wf"} {
		id := NewID(cmd, now)
		m := re.FindStringSubmatch(id)
		if m == nil || m[1] != prefix {
			t.Errorf("NewID(%q) = %q, want prefix %q", cmd, id, prefix)
		}
		if err := ValidID(id); err != nil {
			t.Errorf("NewID(%q) = %q is not a valid id: %v", cmd, id, err)
		}
	}
	// Random suffixes: a repeat is a 1 in 2^24 chance per pair.
	if a, b := NewID("x", now), NewID("x", now); a == b {
		t.Errorf("two ids in the same second are equal: %s", a)
	}
}
