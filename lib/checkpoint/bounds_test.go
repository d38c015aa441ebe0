package checkpoint

import (
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestCheckEdit: what checkpoint-set checks before the lock. The value
// must fit at its path within limit.MaxDepth levels (an append one level
// deeper) and be valid UTF-8 JSON.
func TestCheckEdit(t *testing.T) {
	for _, tt := range []struct {
		path, value string
		appending   bool
		want        string // "" for no error
	}{
		{"phase_data.a", nested(limit.MaxDepth - 2), false, ""},
		{"phase_data.a", nested(limit.MaxDepth - 1), false, "past 64 levels"},
		{"phase_data.a", nested(limit.MaxDepth - 2), true, "past 64 levels"},
		{"phase_data.a", nested(10000), false, "more than 64 levels"},
		{"phase_data.a", "\"caf\xe9\"", false, "UTF-8"},
		{"phase_data.a", "not json", false, "not valid JSON"},
		{"phase_data..a", "1", false, "empty component"},
	} {
		err := CheckEdit(tt.path, []byte(tt.value), tt.appending)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckEdit(%s, %.20s): %v", tt.path, tt.value, err)
		case tt.want != "" && (fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckEdit(%s, %.20s, %v) = %v, want exit 4 with %q", tt.path, tt.value, tt.appending, err, tt.want)
		}
	}
}

// TestValidateBounds: a checkpoint that is not UTF-8 or nests too deep
// is invalid however it was made, so nothing writes one and nothing
// reads one past these checks; Migrate refuses the same.
func TestValidateBounds(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	for name, bad := range map[string][]byte{
		"latin-1":   mustSetRaw(t, doc, "phase_data.note", "\"caf\xe9\""),
		"too deep":  mustSetRaw(t, doc, "phase_data.deep", nested(limit.MaxDepth)),
		"very deep": mustSetRaw(t, doc, "phase_data.deep", nested(100000)),
	} {
		start := time.Now()
		for fn, err := range map[string]error{"Validate": Validate(bad), "Migrate": func() error { _, _, err := Migrate(bad, intent.Scope); return err }()} {
			if fail.Code(err) != fail.Invalid {
				t.Errorf("%s of %s: %v", fn, name, err)
			}
		}
		if _, err := Set(bad, "phase_data.x", []byte("1"), time.Now()); fail.Code(err) != fail.Invalid {
			t.Errorf("Set on %s: %v", name, err)
		}
		t.Logf("%s refused in %v", name, time.Since(start))
	}
}
