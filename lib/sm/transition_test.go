package sm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// newWorkflow starts a full-implementation workflow in a fresh project
// and moves it to state at (initialize or research).
func newWorkflow(t *testing.T, at string) *store.Workflow {
	t.Helper()
	dir := t.TempDir()
	p, err := store.FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := Init(p, InitParams{Description: "d", Command: "build", Scope: "full-implementation", Machine: machine.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if at != "initialize" {
		if _, err := Transition(w, at, ""); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// TestTransitionOptions: --from makes a transition conditional and
// --checkpoint merges in the same write; whatever is refused writes
// nothing at all.
func TestTransitionOptions(t *testing.T) {
	tests := []struct {
		name    string
		at, to  string
		opts    []Option
		code    int    // 0: success
		msg     string // in the error
		state   string // current state afterwards
		changed bool
		merged  map[string]string // path -> raw JSON afterwards
	}{
		{name: "from the current state", at: "research", to: "plan", opts: []Option{From("research")}, state: "plan", changed: true},
		{name: "from another state", at: "research", to: "plan", opts: []Option{From("initialize")},
			code: fail.Refused, msg: `is in "research", not "initialize"`, state: "research"},
		{name: "from, already there (run again)", at: "research", to: "research", opts: []Option{From("initialize")}, state: "research"},
		{name: "from an unknown state", at: "research", to: "plan", opts: []Option{From("planning")},
			code: fail.Refused, msg: `unknown state "planning"`, state: "research"},
		{name: "with a checkpoint", at: "research", to: "plan", opts: []Option{WithCheckpoint([]byte(`{"research_reports": ["r1.md"]}`))},
			state: "plan", changed: true, merged: map[string]string{"research_reports": `["r1.md"]`, "state_machine.completed_states": `["initialize","research"]`}},
		{name: "with a checkpoint, already there", at: "research", to: "research", opts: []Option{WithCheckpoint([]byte(`{"k": 1}`))},
			state: "research", merged: map[string]string{"k": "1"}},
		{name: "both", at: "research", to: "plan", opts: []Option{From("research"), WithCheckpoint([]byte(`{"phase_data": {"research": {"n": 2}}}`))},
			state: "plan", changed: true, merged: map[string]string{"phase_data.research.n": "2"}},
		{name: "invalid JSON", at: "research", to: "plan", opts: []Option{WithCheckpoint([]byte(`{"k": `))},
			code: fail.Invalid, msg: "not a JSON object", state: "research"},
		{name: "an owned field", at: "research", to: "plan", opts: []Option{WithCheckpoint([]byte(`{"status": "failed"}`))},
			code: fail.Invalid, msg: "status is flowstate's own field", state: "research"},
		{name: "a refused transition merges nothing", at: "research", to: "test", opts: []Option{WithCheckpoint([]byte(`{"k": 1}`))},
			code: fail.Refused, msg: "not allowed", state: "research"},
		{name: "a checkpoint that does not validate", at: "research", to: "plan", opts: []Option{WithCheckpoint([]byte(`{"phase_data": {"plan": []}}`))},
			code: fail.Invalid, msg: "phase_data.plan", state: "research"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkflow(t, tc.at)
			before, err := w.ReadCheckpoint()
			if err != nil {
				t.Fatal(err)
			}
			events, _ := w.ReadEvents()
			changed, err := Transition(w, tc.to, "why", tc.opts...)
			after, rerr := w.ReadCheckpoint()
			if rerr != nil {
				t.Fatal(rerr)
			}
			if got := gjson.GetBytes(after, checkpoint.PathCurrentState).String(); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
			if tc.code != 0 {
				if fail.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("err %v, want code %d naming %q", err, tc.code, tc.msg)
				}
				if !bytes.Equal(before, after) {
					t.Errorf("a refused call changed the checkpoint")
				}
				if now, _ := w.ReadEvents(); !bytes.Equal(now, events) {
					t.Errorf("a refused call added events:\n%s", now[len(events):])
				}
				return
			}
			if err != nil || changed != tc.changed {
				t.Fatalf("changed %v, err %v; want changed %v", changed, err, tc.changed)
			}
			for path, want := range tc.merged {
				if got := gjson.GetBytes(after, path); got.Raw == "" || string(pretty.Ugly([]byte(got.Raw))) != want {
					t.Errorf("%s = %s, want %s", path, got.Raw, want)
				}
			}
		})
	}
}
