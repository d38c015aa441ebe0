package compat

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

var t0 = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

func compact(raw string) string { return string(pretty.Ugly([]byte(raw))) }

// mustSetRaw edits a fixture behind Set's back (no validation, no touch).
func mustSetRaw(t testing.TB, doc []byte, path, raw string) []byte {
	t.Helper()
	out, err := sjson.SetRawBytes(doc, path, []byte(raw))
	if err != nil {
		t.Fatalf("sjson.SetRaw(%s): %v", path, err)
	}
	return out
}

// files is a fake file system for the checks: path -> mtime.
type files map[string]int64

func (f files) stat(path string) (int64, bool) {
	m, ok := f[path]
	return m, ok
}

// newDoc is a fresh checkpoint of workflow coordinate_1795291157304325067.
func newDoc(t *testing.T) []byte {
	t.Helper()
	doc, err := checkpoint.New(checkpoint.Params{
		WorkflowID: "coordinate_1795291157304325067", Command: "coordinate", Description: "Research auth",
		Scope: "research-and-plan", ProjectName: "auth_system", InitialState: "initialize", TerminalState: "plan",
		Transitions: machine.Default().Transitions, Now: t0,
	})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestSaveLegacyDoc: the state's 1.x fields reach the top level as the bash
// save put them, minus its bugs, and flowstate's own fields stay.
func TestSaveLegacyDoc(t *testing.T) {
	fs := files{"plans/001.md": 1700000000}
	base := newDoc(t)
	base = mustSetRaw(t, base, "replanning_count", "4")
	base = mustSetRaw(t, base, "last_error", `"old failure"`)
	state := `{"plan_path": "plans/001.md", "tests_passing": false, "current_phase": 2,
		"last_error": null, "status": "complete", "state_machine": {"current_state": "debug"},
		"topic_directory": "specs/042"}`
	out, err := SaveLegacyDoc(base, []byte(state), "implement", "auth", fs.stat, t0)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"tests_passing":                "false", // the bash save made it true
		"current_phase":                "2",
		"replanning_count":             "4",    // not in the state: kept
		"last_error":                   "null", // null in the state: the default
		"total_phases":                 "0",    // nowhere: the default
		"replan_history":               "[]",
		"topic_directory":              `"specs/042"`,
		"workflow_type":                `"implement"`,
		"project_name":                 `"auth"`,
		"metadata.project_name":        `"auth"`,
		"checkpoint_id":                `"coordinate_1795291157304325067"`,
		"plan_modification_time":       "1700000000",
		"status":                       `"in_progress"`, // flowstate's, not the state's
		"state_machine.current_state":  `"initialize"`,
		"workflow_state.status":        `"complete"`, // the state is kept whole
		"updated_at":                   `"2026-04-01T12:00:00Z"`,
		"workflow_state.tests_passing": "false",
	} {
		if got := gjson.GetBytes(out, path).Raw; got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}

	out, err = SaveLegacyDoc(out, []byte(`{"plan_path": "gone.md", "tests_passing": null}`), "implement", "auth", fs.stat, t0)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"plan_modification_time": "null", "tests_passing": "true", "current_phase": "2"} {
		if got := gjson.GetBytes(out, path).Raw; got != want {
			t.Errorf("second save: %s = %s, want %s", path, got, want)
		}
	}

	for _, bad := range []string{`[1]`, `null`, `{`, `"x"`} {
		if _, err := SaveLegacyDoc(base, []byte(bad), "implement", "auth", fs.stat, t0); fail.Code(err) != fail.Invalid {
			t.Errorf("state %s: err %v, want invalid", bad, err)
		}
	}
	if _, err := SaveLegacyDoc(base, []byte(`{}`), "", "auth", fs.stat, t0); fail.Code(err) != fail.Usage {
		t.Errorf("empty type: err %v, want usage", err)
	}
	// An empty state is fine: it only sets the type, project and defaults.
	if _, err := SaveLegacyDoc(base, []byte(`{}`), "implement", "auth", fs.stat, t0); err != nil {
		t.Errorf("empty state: %v", err)
	}
}

// TestLegacyKeysFollowMigration: save lifts exactly the fields the
// migration steps add, plus its own five.
func TestLegacyKeysFollowMigration(t *testing.T) {
	keys := legacyKeys()
	for _, k := range []string{"replanning_count", "debug_iteration_count", "spec_maintenance", "tests_passing", "current_phase"} {
		if !slices.Contains(keys, k) {
			t.Errorf("legacyKeys lacks %s: %v", k, keys)
		}
	}
	if slices.Contains(keys, "schema_version") || slices.Contains(keys, "state_machine") {
		t.Errorf("legacyKeys holds a field flowstate owns: %v", keys)
	}
}

func TestReplanDoc(t *testing.T) {
	doc := newDoc(t)
	var n int64
	var err error
	for i, phase := range []string{"3", "3", "5"} {
		if doc, n, err = ReplanDoc(doc, phase, "reason \"quoted\" "+phase, t0); err != nil {
			t.Fatal(err)
		}
		if n != int64(i+1) {
			t.Errorf("replan %d: count %d", i, n)
		}
	}
	for path, want := range map[string]string{
		"replanning_count":            "3",
		"replan_phase_counts":         `{"phase_3":2,"phase_5":1}`,
		"last_replan_reason":          `"reason \"quoted\" 5"`,
		"replan_history.#":            "3",
		"replan_history.2":            `{"phase":5,"reason":"reason \"quoted\" 5","timestamp":"2026-04-01T12:00:00Z"}`,
		"metadata.updated_at":         `"2026-04-01T12:00:00Z"`,
		"state_machine.current_state": `"initialize"`,
	} {
		if got := compact(gjson.GetBytes(doc, path).Raw); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1.5"} {
		if _, _, err := ReplanDoc(doc, bad, "r", t0); fail.Code(err) != fail.Invalid {
			t.Errorf("phase %q: err %v, want invalid", bad, err)
		}
	}
}

func TestCheck(t *testing.T) {
	fs := files{"plan.md": 100, "ctx.md": 1}
	saved, err := SaveLegacyDoc(newDoc(t), []byte(`{"plan_path": "plan.md"}`), "implement", "auth", fs.stat, t0)
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	tests := []struct {
		name, kind, doc string
		now             time.Time
		fs              files
		errs, warns     []string
	}{
		{"resume: safe", CheckResume, string(saved), t0.Add(7 * day), fs, nil, nil},
		{"resume: fresh workflow", CheckResume, string(newDoc(t)), t0, nil, nil, nil},
		{"resume: tests_passing as text", CheckResume, `{"tests_passing": "true", "status": "in_progress", "updated_at": "2026-04-01T12:00:00Z"}`, t0, nil, nil, nil},
		{"resume: tests_passing other text", CheckResume, `{"tests_passing": "no", "status": "in_progress", "updated_at": "2026-04-01T12:00:00Z"}`, t0, nil, []string{"Tests failing in last run"}, nil},
		{"resume: every condition fails, in order", CheckResume,
			`{"tests_passing": false, "last_error": "boom", "status": "failed", "updated_at": "2026-03-01T00:00:00Z",
			  "plan_modification_time": 50, "workflow_state": {"plan_path": "plan.md"}}`, t0, fs,
			[]string{"Tests failing in last run", "Last run had errors", "Checkpoint status: failed (expected: in_progress)",
				"Checkpoint 31 days old (max: 7 days)", "Plan file modified since checkpoint"}, nil},
		{"resume: error_state counts, the hour of slack", CheckResume,
			`{"error_state": {"last_error": "x"}, "status": "in_progress", "updated_at": "2026-03-25T11:00:00Z"}`, t0, fs,
			[]string{"Last run had errors"}, nil},
		{"resume: 8 days", CheckResume, `{"status": "in_progress", "updated_at": "2026-03-24T12:00:00Z"}`, t0, fs,
			[]string{"Checkpoint 8 days old (max: 7 days)"}, nil},
		{"resume: created_at when no updated_at; a deleted plan does not block", CheckResume,
			`{"status": "in_progress", "created_at": "2026-04-01T11:00:00Z", "plan_modification_time": 5, "workflow_state": {"plan_path": "gone.md"}}`, t0, fs, nil, nil},
		{"resume: no time", CheckResume, `{"status": "in_progress"}`, t0, fs, []string{"Checkpoint has no readable updated_at or created_at"}, nil},
		{"iteration: ok", CheckIteration, `{"iteration": 5, "plan_path": "plan.md", "work_remaining": ["a"], "halt_reason": "stuck", "continuation_context": "ctx.md"}`, t0, fs, nil, nil},
		{"iteration: warnings only", CheckIteration, `{"iteration": 1, "plan_path": "plan.md", "halt_reason": "bored", "continuation_context": "nope.md", "work_remaining": null}`, t0, fs,
			nil, []string{"continuation_context file not found: nope.md", `halt_reason "bored" is not one of [context_threshold max_iterations stuck completion user_abort error]`}},
		{"iteration: errors", CheckIteration, `{"iteration": 6, "work_remaining": 3}`, t0, fs,
			[]string{"iteration 6 exceeds max_iterations 5", "work_remaining must be a string, an array or null", "plan_path is missing"}, nil},
		{"iteration: own maximum, missing plan", CheckIteration, `{"iteration": 6, "max_iterations": 8, "plan_path": "x.md", "work_remaining": "all"}`, t0, fs,
			[]string{"plan file not found: x.md"}, nil},
		{"iteration: no number", CheckIteration, `{"iteration": "2", "plan_path": "plan.md"}`, t0, fs, []string{"iteration is missing or not a number"}, nil},
		{"operation: ok", CheckOperation, `{"checkpoint_id": "p", "operation_type": "expand", "plan_path": "plan.md", "created_at": "2026-04-01T12:00:00Z"}`, t0, fs, nil, nil},
		{"operation: plan gone", CheckOperation, `{"checkpoint_id": "p", "operation_type": "expand", "plan_path": "x.md", "created_at": "t"}`, t0, fs, nil, []string{"Plan file not found: x.md"}},
		{"operation: missing fields", CheckOperation, `{"checkpoint_id": "p"}`, t0, fs,
			[]string{"Missing required field: operation_type", "Missing required field: plan_path", "Missing required field: created_at"}, nil},
		{"checkpoint: valid", CheckDocument, string(saved), t0, fs, nil, nil},
	}
	for _, tc := range tests {
		errs, warns, err := Check(tc.kind, []byte(tc.doc), tc.now, tc.fs.stat)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(errs, tc.errs) || !slices.Equal(warns, tc.warns) {
			t.Errorf("%s:\n errors   %q, want %q\n warnings %q, want %q", tc.name, errs, tc.errs, warns, tc.warns)
		}
	}

	if errs, _, _ := Check(CheckDocument, []byte(`{"schema_version": "9.0"}`), t0, fs.stat); len(errs) != 1 || !strings.Contains(errs[0], "9.0") {
		t.Errorf("checkpoint of an unknown version: %q", errs)
	}
	if _, _, err := Check(CheckResume, []byte(`[1]`), t0, fs.stat); fail.Code(err) != fail.Invalid {
		t.Errorf("not an object: %v", err)
	}
	if _, _, err := Check("nope", []byte(`{}`), t0, fs.stat); fail.Code(err) != fail.Usage {
		t.Errorf("unknown kind: %v", err)
	}
}
