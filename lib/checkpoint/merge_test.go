package checkpoint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestMerge: objects meet key by key, everything else replaces, and
// flowstate's own fields may be repeated but not changed.
func TestMerge(t *testing.T) {
	base, err := New(defaultParams())
	if err != nil {
		t.Fatal(err)
	}
	base = mustSetRaw(t, base, "phase_data", `{"research": {"reports": ["a.md"], "done": false}}`)
	tests := []struct {
		name, patch string
		want        map[string]string // path -> raw JSON after the merge
		code        int               // fail code; 0 for success
		msg         string
	}{
		{name: "new top-level key", patch: `{"research_reports": ["/r/1.md"]}`,
			want: map[string]string{"research_reports": `["/r/1.md"]`, "updated_at": `"2026-04-01T12:00:00Z"`, "metadata.updated_at": `"2026-04-01T12:00:00Z"`}},
		{name: "objects merge at depth, arrays replace", patch: `{"phase_data": {"research": {"reports": ["b.md"], "metadata": {"n": 2}}}}`,
			want: map[string]string{"phase_data.research.reports": `["b.md"]`, "phase_data.research.done": "false", "phase_data.research.metadata": `{"n":2}`}},
		{name: "null stores null", patch: `{"phase_data": {"research": {"done": null}}}`,
			want: map[string]string{"phase_data.research.done": "null"}},
		{name: "an owned field repeated as it is", patch: `{"workflow_id": "coordinate_1795291157304325067", "state_machine": {"current_state": "initialize"}}`,
			want: map[string]string{"workflow_id": `"coordinate_1795291157304325067"`}},
		{name: "empty object", patch: `{}`, want: map[string]string{"status": `"in_progress"`}},
		{name: "state_machine changed", patch: `{"state_machine": {"current_state": "plan"}}`, code: fail.Invalid, msg: "sm-transition"},
		{name: "status changed", patch: `{"status": "complete"}`, code: fail.Invalid, msg: "sm-finish"},
		{name: "workflow_id changed", patch: `{"workflow_id": "other"}`, code: fail.Invalid, msg: "leave it out"},
		{name: "session_id added", patch: `{"session_id": "s2"}`, code: fail.Invalid, msg: "session_id"},
		{name: "invalid result", patch: `{"phase_data": {"research": 3}}`, code: fail.Invalid, msg: "phase_data.research"},
		{name: "not an object", patch: `["x"]`, code: fail.Invalid, msg: "not a JSON object"},
		{name: "not JSON", patch: `{"a": `, code: fail.Invalid, msg: "not a JSON object"},
		{name: "too deep", patch: strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), code: fail.Invalid, msg: "levels"},
	}
	for _, tc := range tests {
		out, err := Merge(base, []byte(tc.patch), t0)
		if tc.code != 0 {
			if fail.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: err %v, want code %d naming %q", tc.name, err, tc.code, tc.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for path, want := range tc.want {
			if got := compact(gjson.GetBytes(out, path).Raw); got != want {
				t.Errorf("%s: %s = %s, want %s", tc.name, path, got, want)
			}
		}
		if err := Validate(out); err != nil {
			t.Errorf("%s: result invalid: %v", tc.name, err)
		}
	}
	// Merging the same object twice is the same as once.
	once, err := Merge(base, []byte(`{"k": {"v": [1, 2]}}`), t0)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Merge(once, []byte(`{"k": {"v": [1, 2]}}`), t0)
	if err != nil || !bytes.Equal(once, twice) {
		t.Errorf("merge is not idempotent: %v\n%s\n%s", err, once, twice)
	}
}
