package checkpoint

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Each legacy fixture migrates to its .migrated.json golden file, which
// validates and migrates to itself.
func TestMigrateGolden(t *testing.T) {
	wantFrom := map[string]string{
		"legacy/v1.0.json": "1.0", "legacy/v1.3.json": "1.3", "legacy/v2.0.json": "2.0",
		"legacy/v2.0-revise.json": "2.0", "legacy/v2.1-bash.json": "2.1",
	}
	for name, from := range wantFrom {
		t.Run(name, func(t *testing.T) {
			out, got, err := Migrate(readFixture(t, name), intent.Scope)
			if err != nil {
				t.Fatal(err)
			}
			if got != from {
				t.Errorf("from = %q, want %q", got, from)
			}
			golden := strings.TrimSuffix(name, ".json") + ".migrated.json"
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", golden), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := readFixture(t, golden); !bytes.Equal(out, want) {
				t.Errorf("output differs from %s (go test -update to rewrite):\n%s", golden, out)
			}
			again, from2, err := Migrate(out, intent.Scope)
			if err != nil || from2 != SchemaVersion || !bytes.Equal(again, out) {
				t.Errorf("not idempotent: from %q, err %v, same bytes %v", from2, err, bytes.Equal(again, out))
			}
		})
	}
	for _, name := range fixtures(t, "legacy") {
		if _, ok := wantFrom[name]; !ok && !strings.HasSuffix(name, ".migrated.json") {
			t.Errorf("legacy fixture %s is not in the table", name)
		}
	}
}

// The bugs the bash migrations had, each pinned on the golden outputs.
func TestMigrateFixesBashBugs(t *testing.T) {
	get := func(name, path string) gjson.Result {
		t.Helper()
		out, _, err := Migrate(readFixture(t, name), intent.Scope)
		if err != nil {
			t.Fatal(err)
		}
		return gjson.GetBytes(out, path)
	}
	newest := `{"complete":[],"debug":["test","document","complete"],"document":["complete"],"implement":["test","complete"],"initialize":["research","implement"],"plan":["implement","complete","debug"],"research":["plan","complete"],"test":["debug","document","complete"]}`
	checks := []struct{ name, path, want string }{
		// 1.3 → 2.0 wrote the old table (bug 12); 2.0 files carrying it get the newest.
		{"legacy/v1.0.json", "state_machine.transition_table", newest},
		{"legacy/v2.0.json", "state_machine.transition_table", newest},
		{"legacy/v2.1-bash.json", "state_machine.transition_table", newest},
		// tests_passing false stays false (bug 13).
		{"legacy/v1.0.json", "tests_passing", `false`},
		{"legacy/v2.0-revise.json", "tests_passing", `false`},
		// Phases 0..7 map to states.
		{"legacy/v1.0.json", "state_machine.current_state", `"test"`},
		{"legacy/v1.0.json", "state_machine.completed_states", `["initialize","research","plan","implement"]`},
		{"legacy/v1.3.json", "state_machine.current_state", `"plan"`},
		// Scope from the description, terminal state from the scope.
		{"legacy/v1.3.json", "state_machine.workflow_config.scope", `"research-and-plan"`},
		{"legacy/v1.3.json", "state_machine.workflow_config.terminal_state", `"plan"`},
		{"legacy/v1.0.json", "state_machine.workflow_config.terminal_state", `"complete"`},
		// research-and-revise ends at plan (bug 11).
		{"legacy/v2.0-revise.json", "state_machine.workflow_config.terminal_state", `"plan"`},
		// Classification defaults.
		{"legacy/v2.0.json", "state_machine.classification", `{"classified_at":null,"confidence":0,"reasoning":"migrated from 2.0; re-classify","research_complexity":2,"research_topics":[],"workflow_type":"research-and-plan"}`},
		// Required 2.1 fields filled from what the document had.
		{"legacy/v2.0.json", "workflow_id", `"coordinate_20251107_143022"`},
		{"legacy/v2.0.json", "command", `"coordinate"`},
		{"legacy/v2.0.json", "project_name", `"claude-config"`},
		{"legacy/v2.0.json", "created_at", `"2025-11-07T14:30:22Z"`},
		{"legacy/v2.0.json", "version", ``}, // superseded by schema_version
		{"legacy/v1.0.json", "workflow_id", `"implement_auth_system_20251020_091500"`},
		{"legacy/v1.0.json", "error_state.last_error", `"npm test: 3 failing (auth.controller.test.ts)"`},
		// Times normalised to UTC, duplicates dropped, worker statuses mapped.
		{"legacy/v2.0-revise.json", "created_at", `"2025-11-08T09:15:00Z"`},
		{"legacy/v2.0-revise.json", "metadata.created_at", `"2025-11-08T09:15:00Z"`},
		{"legacy/v2.0-revise.json", "state_machine.completed_states", `["initialize","research"]`},
		{"legacy/v2.0-revise.json", "supervisor_state.research_supervisor.workers.1.status", `"running"`},
		// Legacy fields are kept.
		{"legacy/v1.3.json", "replan_history.0.reason", `"phase 2 scope too large"`},
		{"legacy/v1.0.json", "replanning_count", `0`},
		{"legacy/v1.0.json", "topic_number", `"042"`},
		{"legacy/v2.0.json", "state_machine.workflow_config.topic_path", `"/home/user/.claude/specs/042_auth"`},
	}
	for _, c := range checks {
		got := get(c.name, c.path)
		if compact(got.Raw) != c.want {
			t.Errorf("%s: %s = %s, want %s", c.name, c.path, compact(got.Raw), c.want)
		}
	}
}

func compact(raw string) string { return string(pretty.Ugly([]byte(raw))) }

func TestMigrateAlready21(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	out, from, err := Migrate(doc, intent.Scope)
	if err != nil || from != "2.1" {
		t.Fatalf("from %q, err %v", from, err)
	}
	if &out[0] != &doc[0] {
		t.Error("a valid 2.1 document must come back as the same bytes")
	}
	// A flowstate 2.1 document that is invalid is an error, not "migrated".
	if _, _, err := Migrate(readFixture(t, "invalid/missing-classification.json"), intent.Scope); err == nil || fail.Code(err) != fail.Invalid {
		t.Errorf("invalid 2.1: err %v", err)
	}
}

func TestMigrateErrors(t *testing.T) {
	valid := string(readFixture(t, "valid/v2.1-full.json"))
	tests := []struct{ name, doc, want string }{
		{"future 3.0", strings.Replace(valid, `"schema_version": "2.1"`, `"schema_version": "3.0"`, 1), `schema version "3.0" is newer than this flowstate understands (2.1); upgrade flowstate`},
		{"future 2.2", `{"schema_version":"2.2"}`, `schema version "2.2" is newer`},
		{"banana", `{"version":"banana"}`, `schema version "banana" is unknown (this flowstate migrates 1.0, 1.1, 1.2, 1.3, 2.0 and reads 2.1); fix version`},
		{"number", `{"schema_version":2.0}`, `schema_version must be a string such as "2.1", got number 2.0`},
		{"corrupt", valid[:500], `checkpoint: not valid JSON`},
		{"array", `[1,2]`, `must be a JSON object, got an array`},
		{"no time", `{"schema_version":"1.3","workflow_type":"x"}`, `cannot migrate 2.0 to 2.1: created_at: no usable timestamp`},
		{"no time 2.0", `{"version":"2.0","state_machine":{"current_state":"plan"}}`, `created_at: no usable timestamp`},
		{"table not object", `{"version":"2.0","created_at":"2025-01-01T00:00:00Z","state_machine":{"transition_table":"a,b"}}`, `state_machine.transition_table: must be an object, got a string`},
		{"unmappable result", `{"version":"2.0","created_at":"2025-01-01T00:00:00Z","phase_data":{"research":"done"}}`, `phase_data.research: must be an object`},
		{"custom table no terminal", `{"version":"2.0","created_at":"2025-01-01T00:00:00Z","state_machine":{"current_state":"a","transition_table":{"a":"b","b":"a"}}}`, `terminal_state: missing and cannot be inferred`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Migrate([]byte(tt.doc), intent.Scope)
			if err == nil {
				t.Fatal("want an error")
			}
			if fail.Code(err) != fail.Invalid {
				t.Errorf("code %d, want %d", fail.Code(err), fail.Invalid)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
}

func decodeT(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonT(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// One row per step: input document -> output document (encoding/json's
// sorted compact form).
func TestMigrationSteps(t *testing.T) {
	tests := []struct {
		name string
		step step
		in   string
		want string
	}{
		{"1.0→1.1 defaults", migrate10to11, `{}`,
			`{"last_replan_reason":null,"replan_history":[],"replan_phase_counts":{},"replanning_count":0,"schema_version":"1.1"}`},
		{"1.0→1.1 keeps values", migrate10to11, `{"replanning_count":3}`,
			`{"last_replan_reason":null,"replan_history":[],"replan_phase_counts":{},"replanning_count":3,"schema_version":"1.1"}`},
		{"1.1→1.2", migrate11to12, `{"schema_version":"1.1"}`,
			`{"debug_iteration_count":0,"debug_report_path":null,"schema_version":"1.2","user_last_choice":null}`},
		{"1.2→1.3 from workflow_state", migrate12to13, `{"workflow_state":{"topic_number":"042"}}`,
			`{"context_preservation":{"artifact_metadata_cache":{},"pruning_log":[],"subagent_output_references":[]},"schema_version":"1.3","spec_maintenance":{"checkbox_propagation_log":[],"grandparent_plan_path":null,"parent_plan_path":null,"spec_updater_invocations":[]},"template_source":null,"template_variables":null,"topic_directory":null,"topic_number":"042","workflow_state":{"topic_number":"042"}}`},
		{"1.3→2.0 phases", migrate13to20, `{"current_phase":5,"completed_phases":[0,"1",9,1],"workflow_description":"Fix the flaky login test","workflow_type":"debug","last_error":"boom"}`,
			`{"completed_phases":[0,"1",9,1],"current_phase":5,"error_state":{"failed_state":null,"last_error":"boom","retry_count":0},"last_error":"boom","metadata":{"checkpoint_id":null,"created_at":null,"project_name":null,"updated_at":null},"phase_data":{},"schema_version":"2.0","state_machine":{"completed_states":["initialize","research"],"current_state":"debug","transition_table":{"complete":[],"debug":["test","document","complete"],"document":["complete"],"implement":["test","complete"],"initialize":["research","implement"],"plan":["implement","complete","debug"],"research":["plan","complete"],"test":["debug","document","complete"]},"workflow_config":{"command":"debug","description":"Fix the flaky login test","scope":"test-and-debug","terminal_state":"complete"}},"supervisor_state":{},"workflow_description":"Fix the flaky login test","workflow_type":"debug"}`},
		{"1.3→2.0 keeps a state machine", migrate13to20, `{"state_machine":{"current_state":"plan"},"phase_data":{"a":{}},"error_state":{"retry_count":2},"metadata":{"checkpoint_id":"c"}}`,
			`{"error_state":{"retry_count":2},"metadata":{"checkpoint_id":"c"},"phase_data":{"a":{}},"schema_version":"2.0","state_machine":{"current_state":"plan"},"supervisor_state":{}}`},
		{"2.0→2.1 custom table kept, comma strings split", migrate20to21, `{"created_at":"2025-01-01T00:00:00Z","command":"rel","state_machine":{"current_state":"draft","transition_table":{"draft":"review, draft ,review","review":""},"workflow_config":{"scope":"notes"}}}`,
			`{"command":"rel","created_at":"2025-01-01T00:00:00Z","error_state":{"failed_state":null,"last_error":null,"retry_count":0},"metadata":{"checkpoint_id":"rel_20250101_000000","created_at":"2025-01-01T00:00:00Z","project_name":"","updated_at":"2025-01-01T00:00:00Z"},"phase_data":{},"project_name":"","schema_version":"2.1","state_machine":{"classification":{"classified_at":null,"confidence":0,"reasoning":"migrated from 2.0; re-classify","research_complexity":2,"research_topics":[],"workflow_type":"notes"},"completed_states":[],"current_state":"draft","transition_table":{"draft":["review","draft"],"review":[]},"workflow_config":{"command":"rel","description":"","scope":"notes","terminal_state":"review"}},"status":"in_progress","supervisor_state":{},"updated_at":"2025-01-01T00:00:00Z","workflow_description":"","workflow_id":"rel_20250101_000000"}`},
		{"2.0→2.1 classification completed", migrate20to21, `{"created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-02T00:00:00Z","status":"paused-by-user","state_machine":{"classification":{"research_complexity":65,"research_topics":[{"short_name":"Auth"},"Sessions"],"confidence":0.9,"classified_at":"2025-01-01T01:00:00+01:00"}}}`,
			`{"command":"","created_at":"2025-01-01T00:00:00Z","error_state":{"failed_state":null,"last_error":null,"retry_count":0},"legacy_status":"paused-by-user","metadata":{"checkpoint_id":"workflow_20250101_000000","created_at":"2025-01-01T00:00:00Z","project_name":"","updated_at":"2025-01-02T00:00:00Z"},"phase_data":{},"project_name":"","schema_version":"2.1","state_machine":{"classification":{"classified_at":"2025-01-01T00:00:00Z","confidence":0.9,"reasoning":"","research_complexity":3,"research_topics":["Auth","Sessions"],"workflow_type":"full-implementation"},"completed_states":[],"current_state":"initialize","transition_table":{"complete":[],"debug":["test","document","complete"],"document":["complete"],"implement":["test","complete"],"initialize":["research","implement"],"plan":["implement","complete","debug"],"research":["plan","complete"],"test":["debug","document","complete"]},"workflow_config":{"command":"","description":"","scope":"full-implementation","terminal_state":"complete"}},"status":"in_progress","supervisor_state":{},"updated_at":"2025-01-02T00:00:00Z","workflow_description":"","workflow_id":"workflow_20250101_000000"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := decodeT(t, tt.in)
			if err := tt.step(m, known{guess: intent.Scope}); err != nil {
				t.Fatal(err)
			}
			if got := jsonT(t, m); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestGuessScopeAndTerminal(t *testing.T) {
	for _, tt := range []struct{ desc, current, want string }{
		{"Research authentication patterns", "initialize", "research-only"},
		{"research the auth flow and plan the migration", "research", "research-and-plan"},
		{"RESEARCH caching", "", "research-only"},
		{"Research and implement OAuth", "initialize", "full-implementation"},
		{"Troubleshoot CI", "debug", "debug-only"},
		{"Add user authentication", "initialize", "full-implementation"},
		{"", "initialize", "full-implementation"},
		// The bash migration's keyword rules made these three
		// full-implementation, full-implementation and debug-only.
		{"Revise plans/003_auth.md", "plan", "research-and-revise"},
		{"Implement plans/003_auth.md", "implement", "implement-only"},
		{"Fix the flaky login test", "test", "test-and-debug"},
		// The state overrules a text whose scope never reaches it.
		{"Research authentication patterns", "implement", "full-implementation"},
		{"Fix the flaky login test", "research", "full-implementation"},
		// A state the default machine lacks says nothing about its scopes.
		{"Research authentication patterns", "draft", "research-only"},
	} {
		if got := guessScope(intent.Scope, tt.desc, tt.current); got != tt.want {
			t.Errorf("guessScope(%q, %q) = %q, want %q", tt.desc, tt.current, got, tt.want)
		}
	}
	table := defaultTable()
	for scope, want := range map[string]string{
		"research-only": "research", "research-and-plan": "plan", "research-and-revise": "plan",
		"full-implementation": "complete", "debug-only": "debug", "implement-only": "implement",
		"test-and-debug": "complete", "custom": "complete",
	} {
		if got, err := terminalFor(scope, table, machine.Default()); err != nil || got != want {
			t.Errorf("terminalFor(%q) = %q, %v; want %q", scope, got, err, want)
		}
	}
	if got := NormalizeComplexity(json.Number("4.9")); got != "4" {
		t.Errorf("NormalizeComplexity(4.9) = %s", got)
	}
	for in, want := range map[string]json.Number{
		"0": "1", "1": "1", "4": "4", "04": "4", "08": "1", "3.7": "3", "29": "1", "30": "2", "49": "2", "50": "3",
		"69": "3", "70": "4", "1000": "4", "99999999999999999999999": "4",
		"abc": "2", "": "2", "-5": "2", "+3": "2", " 3": "2", "1e2": "2", ".5": "2",
	} {
		if got := NormalizeComplexity(in); got != want {
			t.Errorf("NormalizeComplexity(%q) = %s, want %s", in, got, want)
		}
	}
	if !reflect.DeepEqual(splitComma(" a, b,,a "), []any{"a", "b"}) {
		t.Error("splitComma")
	}
}

// TestMigrationUsesTheDefaultMachine: a migrated workflow is run by
// machine.Default, so its table and terminal states are that machine's.
func TestMigrationUsesTheDefaultMachine(t *testing.T) {
	m := machine.Default()
	got, _ := json.Marshal(defaultTable())
	want, _ := json.Marshal(m.Transitions)
	if string(got) != string(want) {
		t.Errorf("defaultTable() = %s, want the default machine's %s", got, want)
	}
	for name, sc := range m.Scopes {
		if got, err := terminalFor(name, defaultTable(), machine.Default()); err != nil || got != sc.Terminal {
			t.Errorf("terminalFor(%s) = %q, %v; the default machine ends it at %q", name, got, err, sc.Terminal)
		}
	}
}

// TestFirstTime: migrated times are written as Timestamp writes new ones.
func TestFirstTime(t *testing.T) {
	for in, want := range map[any]string{
		"2025-11-07T14:30:22.123456+02:00": "2025-11-07T12:30:22Z",
		"2025-11-07T14:30:22Z":             "2025-11-07T14:30:22Z",
		"2025-11-07 14:30:22":              "2025-11-07T14:30:22Z",
		json.Number("1762525822"):          "2025-11-07T14:30:22Z",
	} {
		if got, err := firstTime("created_at", nil, "not a time", in); err != nil || got != want {
			t.Errorf("firstTime(%v) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := firstTime("created_at", nil, ""); err == nil {
		t.Error("no usable time: want an error")
	}
}

// TestMigrateTakesTheScopeGuess: the scope of a document that names none
// is its caller's guess, checked against the state it is in; no word list
// of this package's own decides it. The 1.3 fixture is in plan, its
// description asks for research and a plan.
func TestMigrateTakesTheScopeGuess(t *testing.T) {
	doc := readFixture(t, "legacy/v1.3.json")
	for _, tt := range []struct {
		name            string
		guess           ScopeGuesser
		scope, terminal string
	}{
		{"the offline classifier", intent.Scope, "research-and-plan", "plan"},
		{"another guess", func(string) string { return "research-and-revise" }, "research-and-revise", "plan"},
		{"a guess whose route never reaches plan", func(string) string { return "research-only" }, "full-implementation", "complete"},
		{"no guess", nil, "full-implementation", "complete"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Migrate(doc, tt.guess)
			if err != nil {
				t.Fatal(err)
			}
			v := ViewOf(out)
			if v.Scope != tt.scope || v.TerminalState != tt.terminal {
				t.Errorf("scope %q ending in %q, want %q ending in %q", v.Scope, v.TerminalState, tt.scope, tt.terminal)
			}
			if got := gjson.GetBytes(out, PathClassification+".workflow_type").String(); got != tt.scope {
				t.Errorf("classified as %q, want the scope %q", got, tt.scope)
			}
		})
	}
}

// A 2.0 document the bash libraries' callers wrote records only the rows
// its workflow used, as comma strings, and no terminal state: the
// libraries ran on their own table whatever the document said. Such a
// table of the machine's states migrates to the machine's table, and the
// terminal state is the scope's: the built-in scopes for the default
// machine, a definition's own for a workflow running it.
func TestMigratePartialTable(t *testing.T) {
	notes, err := machine.Parse([]byte(`{"name": "notes", "initial": "draft",
		"transitions": {"draft": ["review"], "review": ["publish", "draft"], "publish": []},
		"scopes": {"notes": {"terminal": "review", "route": ["draft", "review"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := func(table, scope, current string) []byte {
		return []byte(`{"schema_version": "2.0", "created_at": "2025-11-07T12:00:00Z", "workflow_description": "d",
			"state_machine": {"current_state": "` + current + `", "completed_states": ["` + current + `"],
			"transition_table": ` + table + `, "workflow_config": {"scope": "` + scope + `", "command": "c"}}}`)
	}
	for _, tt := range []struct {
		name                 string
		doc                  []byte
		runs                 *machine.Machine
		wantTerminal         string
		wantTable, wantError string
	}{
		{"research-and-plan, comma strings", doc(`{"initialize": "research", "research": "plan,complete"}`, "research-and-plan", "research"), nil, "plan", "default", ""},
		{"full-implementation, three rows", doc(`{"initialize": "research", "research": "plan,complete", "plan": "implement,complete"}`, "full-implementation", "plan"), nil, "complete", "default", ""},
		{"research-only, the terminal's own row only", doc(`{"research": "plan,complete"}`, "research-only", "research"), nil, "research", "default", ""},
		{"a definition's scope", doc(`{"draft": "review"}`, "notes", "draft"), notes, "review", "notes", ""},
		{"a definition's scope, its machine not known", doc(`{"draft": "review"}`, "notes", "draft"), nil, "", "", "cannot be inferred for scope \"notes\""},
		{"states of no machine stay the user's", doc(`{"initialize": "triage"}`, "research-and-plan", "initialize"), nil, "", "", "cannot be inferred"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := MigrateRunning(tt.doc, intent.Scope, tt.runs)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := ViewOf(out)
			if v.TerminalState != tt.wantTerminal {
				t.Errorf("terminal state %q, want %q", v.TerminalState, tt.wantTerminal)
			}
			want := machine.Default()
			if tt.wantTable == "notes" {
				want = notes
			}
			got, _ := json.Marshal(gjson.GetBytes(out, PathTransitionTable).Value())
			if wantJSON, _ := json.Marshal(tableOf(want)); string(got) != string(wantJSON) {
				t.Errorf("table %s, want the %s machine's %s", got, tt.wantTable, wantJSON)
			}
			if cur := gjson.GetBytes(out, PathCurrentState).String(); cur != gjson.GetBytes(tt.doc, "state_machine.current_state").String() {
				t.Errorf("current state became %q", cur)
			}
		})
	}
}
