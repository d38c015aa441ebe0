package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every invalid fixture with the start of the error it must produce: the
// path first, then what is wrong.
var invalidFixtures = map[string]string{
	"invalid/future-3.0.json":                  `schema_version: "3.0" is not supported`,
	"invalid/old-2.0.json":                     `schema_version: "2.0" is an older schema; migrate`,
	"invalid/wrong-type-current-state.json":    `state_machine.current_state: must be a string, got number 3`,
	"invalid/wrong-type-completed-states.json": `state_machine.completed_states: must be an array of states, got string`,
	"invalid/comma-transition-table.json":      `state_machine.transition_table.initialize: must be an array of states, got the string "research,implement" (a 2.0 comma list? migrate`,
	"invalid/bad-status.json":                  `status: must be one of in_progress, awaiting_approval, paused, complete, failed, abandoned, cancelled, got string "completed"`,
	"invalid/hold-bad-kind.json":               `hold.kind: must be one of approval, pause, cancel, budget, got string "approve"`,
	"invalid/complexity-out-of-range.json":     `state_machine.classification.research_complexity: must be 1, 2, 3 or 4, got 7`,
	"invalid/confidence-percent.json":          `state_machine.classification.confidence: must be from 0 to 1, got 92`,
	"invalid/topics-objects.json":              `state_machine.classification.research_topics.0: must be a string, got an object`,
	"invalid/topic-details-not-objects.json":   `state_machine.classification.research_topic_details.0: must be an object`,
	"invalid/timestamp-not-utc.json":           `updated_at: must be an RFC 3339 UTC time`,
	"invalid/timestamp-impossible-date.json":   `metadata.created_at: must be an RFC 3339 UTC time`,
	"invalid/classified-at-empty.json":         `state_machine.classification.classified_at: must be null or an RFC 3339 UTC time`,
	"invalid/missing-classification.json":      `state_machine.classification: required field is missing`,
	"invalid/missing-workflow-id.json":         `workflow_id: required field is missing`,
	"invalid/missing-terminal-state.json":      `state_machine.workflow_config.terminal_state: required field is missing`,
	"invalid/worker-bad-status.json":           `supervisor_state.implementation_supervisor.workers.0.status: must be one of completed, failed, pending, running, in_progress, got string "underway"`,
	"invalid/worker-missing-id.json":           `supervisor_state.implementation_supervisor.workers.1.worker_id: required field is missing`,
	"invalid/supervisor-not-object.json":       `supervisor_state.testing_supervisor: must be an object, got an array`,
	"invalid/retry-count-negative.json":        `error_state.retry_count: must not be negative, got -1`,
	"invalid/retry-count-fraction.json":        `error_state.retry_count: must be an integer, got number 1.5`,
	"invalid/last-error-object.json":           `error_state.last_error: must be a string or null, got an object`,
	"invalid/phase-data-not-object.json":       `phase_data.plan: must be an object, got string "done"`,
	"invalid/metadata-missing-updated-at.json": `metadata.updated_at: required field is missing`,
	"invalid/completed-states-duplicate.json":  `state_machine.completed_states.2: "research" is listed twice`,
	"invalid/corrupt-truncated.json":           `not valid JSON`,
	"invalid/not-an-object.json":               `(document): must be a JSON object, got an array`,
	"invalid/empty.json":                       `not valid JSON`,

	"invalid-semantic/current-state-unknown.json":     `state_machine.current_state: "deploy" is not a state of state_machine.transition_table (states: initialize, research, plan, implement, test, debug, document, complete)`,
	"invalid-semantic/gate-state-unknown.json":        `state_machine.gates.deploy: "deploy" is not a state of state_machine.transition_table`,
	"invalid-semantic/terminal-state-unknown.json":    `state_machine.workflow_config.terminal_state: "done" is not a state`,
	"invalid-semantic/completed-state-unknown.json":   `state_machine.completed_states.2: "planning" is not a state`,
	"invalid-semantic/transition-target-unknown.json": `state_machine.transition_table.implement.1: "ship" is not a state`,
	"invalid-semantic/failed-state-unknown.json":      `error_state.failed_state: "testing" is not a state`,
	"invalid-semantic/retries-state-unknown.json":     `error_state.retries.reserch: "reserch" is not a state`,
	"invalid-semantic/duplicate-key.json":             `status: appears twice`,
}

func fixtures(t testing.TB, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = strings.TrimPrefix(filepath.ToSlash(n), "testdata/")
	}
	return names
}

func TestValidateFixtures(t *testing.T) {
	for _, name := range fixtures(t, "valid") {
		t.Run(name, func(t *testing.T) {
			if err := Validate(readFixture(t, name)); err != nil {
				t.Fatalf("want valid, got %v", err)
			}
		})
	}
	// Every invalid fixture on disk has an expected error, and vice versa.
	onDisk := append(fixtures(t, "invalid"), fixtures(t, "invalid-semantic")...)
	if len(onDisk) != len(invalidFixtures) {
		t.Errorf("%d invalid fixtures on disk, %d in invalidFixtures", len(onDisk), len(invalidFixtures))
	}
	for _, name := range onDisk {
		t.Run(name, func(t *testing.T) {
			want, ok := invalidFixtures[name]
			if !ok {
				t.Fatalf("no expected error for %s in invalidFixtures", name)
			}
			err := Validate(readFixture(t, name))
			if err == nil {
				t.Fatal("want an error, got nil")
			}
			if fail.Code(err) != fail.Invalid {
				t.Errorf("exit code %d, want %d", fail.Code(err), fail.Invalid)
			}
			if !strings.HasPrefix(err.Error(), "checkpoint: "+want) {
				t.Errorf("error\n  %v\nwant prefix\n  checkpoint: %s", err, want)
			}
			var sem *semanticError
			if got := errors.As(err, &sem); got != strings.HasPrefix(name, "invalid-semantic/") {
				t.Errorf("semantic error = %v, want it only for invalid-semantic/ fixtures", got)
			}
		})
	}
}

func TestValidateEdgeCases(t *testing.T) {
	base := readFixture(t, "valid/v2.1-custom-machine.json")
	tests := []struct {
		name, path, raw, want string // want "" = valid
	}{
		{"integer written as 2.0", "state_machine.classification.research_complexity", `2.0`, ""},
		{"integer written as 1e0", "error_state.retry_count", `1e0`, ""},
		{"fractional seconds", "created_at", `"2026-03-02T09:00:00.123456789Z"`, ""},
		{"lowercase z", "created_at", `"2026-03-02T09:00:00z"`, "created_at: must be an RFC 3339 UTC time"},
		{"no seconds", "created_at", `"2026-03-02T09:00Z"`, "created_at: must be an RFC 3339 UTC time"},
		{"space separator", "created_at", `"2026-03-02 09:00:00Z"`, "created_at: must be an RFC 3339 UTC time"},
		{"empty fraction", "created_at", `"2026-03-02T09:00:00.Z"`, "created_at: must be an RFC 3339 UTC time"},
		{"hour 24", "created_at", `"2026-03-02T24:00:00Z"`, "created_at: must be an RFC 3339 UTC time"},
		{"confidence 0", "state_machine.classification.confidence", `0`, ""},
		{"confidence negative", "state_machine.classification.confidence", `-0.1`, "state_machine.classification.confidence: must be from 0 to 1"},
		{"confidence string", "state_machine.classification.confidence", `"0.9"`, "state_machine.classification.confidence: must be a number"},
		{"complexity 0", "state_machine.classification.research_complexity", `0`, "research_complexity: must be 1, 2, 3 or 4"},
		{"complexity fraction", "state_machine.classification.research_complexity", `2.5`, "research_complexity: must be an integer"},
		{"classified_at absent", "state_machine.classification", `{"workflow_type":"x","research_complexity":1,"research_topics":[],"confidence":0,"reasoning":""}`, ""},
		{"empty table", "state_machine.transition_table", `{}`, "state_machine.transition_table: must name at least one state"},
		{"empty state name", "state_machine.transition_table", `{"":[],"draft":[],"review":[],"published":[]}`, "state_machine.transition_table: a state name must not be empty"},
		{"terminal null", "state_machine.transition_table.published", `null`, "state_machine.transition_table.published: must be an array of states, got null"},
		{"duplicate target", "state_machine.transition_table.review", `["draft","draft"]`, `state_machine.transition_table.review.1: "draft" is listed twice`},
		{"empty workflow_id", "workflow_id", `""`, "workflow_id: must not be empty"},
		{"empty checkpoint_id", "metadata.checkpoint_id", `""`, "metadata.checkpoint_id: must not be empty"},
		{"workers not array", "supervisor_state.s", `{"workers":{}}`, "supervisor_state.s.workers: must be an array"},
		{"worker not object", "supervisor_state.s", `{"workers":["w1"]}`, "supervisor_state.s.workers.0: must be an object"},
		{"worker without workers key", "supervisor_state.s", `{"tracks":[{"status":"whatever"}]}`, ""},
		{"retries ok", "error_state.retries", `{"review":2}`, ""},
		{"retries negative", "error_state.retries", `{"review":-2}`, "error_state.retries.review: must not be negative"},
		{"failed_state set", "error_state.failed_state", `"review"`, ""},
		{"failed_state number", "error_state.failed_state", `1`, "error_state.failed_state: must be a state or null"},
		{"schema_version number", "schema_version", `2.1`, `schema_version: must be the string "2.1", got number 2.1`},
		{"schema_version banana", "schema_version", `"banana"`, `schema_version: "banana" is not supported`},
		{"extra top-level key", "my_data", `{"anything":[1,2,3]}`, ""},
		{"extra nested key", "state_machine.note", `"kept"`, ""},
		{"project_name null", "project_name", `null`, "project_name: must be a string, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustSetRaw(t, base, tt.path, tt.raw)
			err := Validate(doc)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("want %q, got valid", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
}
