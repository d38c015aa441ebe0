package checkpoint

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/tidwall/gjson"
)

var t0 = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

func TestGet(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	tests := []struct {
		path, raw, display string
		ok                 bool
	}{
		{"state_machine.current_state", `"implement"`, "implement", true},
		{"state_machine.completed_states.0", `"initialize"`, "initialize", true},
		{"state_machine.completed_states.9", "", "", false},
		{"state_machine.classification.research_complexity", `3`, "3", true},
		{"state_machine.classification.classified_at", `"2025-11-07T14:30:25Z"`, "2025-11-07T14:30:25Z", true},
		{"error_state.failed_state", `null`, "null", true},
		{"supervisor_state.research_supervisor.workers.2.status", `"failed"`, "failed", true},
		{"phase_data.plan.estimated_hours", `6.5`, "6.5", true},
		{"state_machine.transition_table.complete", `[]`, "[]", true},
		{"user_notes", "", `{"reviewer":"alice","ticket":"AUTH-42"}`, true},
		{"workflow_description", "", "Research authentication patterns and implement session-based login with <RBAC> & tests", true},
		{"nope", "", "", false},
		{"status.deeper", "", "", false}, // through a scalar: absent
	}
	for _, tt := range tests {
		raw, ok, err := Get(doc, tt.path)
		if err != nil || ok != tt.ok {
			t.Errorf("Get(%s) = %q, %v, %v", tt.path, raw, ok, err)
			continue
		}
		if tt.raw != "" && raw != tt.raw {
			t.Errorf("Get(%s) raw = %s, want %s", tt.path, raw, tt.raw)
		}
		if ok && Display(raw) != tt.display {
			t.Errorf("Display(Get(%s)) = %s, want %s", tt.path, Display(raw), tt.display)
		}
	}
}

func TestDisplay(t *testing.T) {
	for raw, want := range map[string]string{
		`"a\nb \"q\" \u00e9"`: "a\nb \"q\" é",
		`160`:                 "160",
		`-1.5e3`:              "-1.5e3",
		`true`:                "true",
		`null`:                "null",
		"[1, 2,\n 3]":         "[1,2,3]",
		`{ "a" : [ ] }`:       `{"a":[]}`,
		`""`:                  "",
	} {
		if got := Display(raw); got != want {
			t.Errorf("Display(%s) = %q, want %q", raw, got, want)
		}
	}
}

// Paths that gjson/sjson would read as syntax, and malformed paths, are
// refused before anything is touched.
func TestBadPaths(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	bad := []string{
		"", ".", "a.", ".a", "a..b", "phase_data.*", "phase_data.re?earch", "state_machine.completed_states.#",
		"@this", "a|b", `a\.b`, "users.:2313", "!true", "a b", "ä", "phase_data.{a,b}", "a[0]", "x=1",
		"state_machine.completed_states.01", strings.Repeat("a.", 300) + "a",
	}
	for _, p := range bad {
		_, _, err := Get(doc, p)
		if fail.Code(err) != fail.Invalid {
			t.Errorf("Get(%q): err %v, want Invalid", p, err)
		}
		if _, err := Set(doc, p, []byte(`1`), t0); fail.Code(err) != fail.Invalid {
			t.Errorf("Set(%q): err %v, want Invalid", p, err)
		}
		if _, _, err := Increment(doc, p, 1, t0); fail.Code(err) != fail.Invalid {
			t.Errorf("Increment(%q): err %v, want Invalid", p, err)
		}
		if _, err := Append(doc, p, []byte(`1`), t0); fail.Code(err) != fail.Invalid {
			t.Errorf("Append(%q): err %v, want Invalid", p, err)
		}
	}
	if _, err := parsePath("phase_data.*"); err == nil || !strings.Contains(err.Error(), `'*' is gjson/sjson syntax, not allowed`) {
		t.Errorf("message for *: %v", err)
	}
}

func TestSet(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	tests := []struct {
		name, path, value, want string // want: compact value read back, or error substring after "ERR "
	}{
		{"replace string", "state_machine.current_state", `"test"`, `"test"`},
		{"replace with object", "phase_data.plan", `{"plan_path":"/p.md"}`, `{"plan_path":"/p.md"}`},
		{"new nested keys", "phase_data.test.results.unit", `{"passed":23,"failed":0}`, `{"passed":23,"failed":0}`},
		{"new top-level key", "my-data", `[1,"two",{"3":3}]`, `[1,"two",{"3":3}]`},
		{"digit key in object", "phase_data.plan.7", `"seven"`, `"seven"`},
		{"digit key under new object", "user_notes.by_phase.x", `1`, `1`},
		{"array element", "state_machine.completed_states.2", `"debug"`, `"debug"`},
		{"array end appends", "state_machine.completed_states.3", `"implement"`, `"implement"`},
		{"in array of objects", "supervisor_state.research_supervisor.workers.2.status", `"completed"`, `"completed"`},
		{"key with dash", "user_notes.follow-up", `"yes"`, `"yes"`},
		{"html stays literal", "workflow_description", `"a <b> & c"`, `"a <b> & c"`},
		{"pretty value", "phase_data.x", "{\n  \"a\": [1,\n 2]\n}", `{"a":[1,2]}`},
		{"explicit updated_at wins", "updated_at", `"2030-01-01T00:00:00Z"`, `"2030-01-01T00:00:00Z"`},

		{"index past end", "state_machine.completed_states.5", `"x"`, "ERR index 5 out of range, state_machine.completed_states has 3 elements"},
		{"non-index on array", "state_machine.completed_states.first", `"x"`, `ERR state_machine.completed_states is an array; "first" is not an index`},
		{"through a scalar", "status.sub", `1`, "ERR status holds string \"in_progress\", not an object or array"},
		{"index creates array", "phase_data.new.0", `1`, "ERR phase_data.new does not exist, and an index cannot create an array; append to create it"},
		{"invalid JSON value", "user_notes.x", `{"broken":`, "ERR value \"{\\\"broken\\\":\" is not valid JSON"},
		{"unquoted string", "user_notes.x", `hello`, "ERR value \"hello\" is not valid JSON; quote strings"},
		{"empty value", "user_notes.x", ``, "ERR is not valid JSON"},
		{"non-JSON whitespace", "user_notes.x", "\u00a00", "ERR is not valid JSON"},
		{"breaks schema", "state_machine.current_state", `"deploy"`, `ERR refusing to set state_machine.current_state: checkpoint: state_machine.current_state: "deploy" is not a state`},
		{"wrong type", "error_state.retry_count", `"1"`, "ERR refusing to set error_state.retry_count: checkpoint: error_state.retry_count: must be an integer"},
		{"future version", "schema_version", `"3.0"`, "ERR refusing to set schema_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Set(doc, tt.path, []byte(tt.value), t0)
			if strings.HasPrefix(tt.want, "ERR ") {
				if err == nil || !strings.Contains(err.Error(), tt.want[4:]) {
					t.Fatalf("err %v, want %q", err, tt.want[4:])
				}
				if fail.Code(err) != fail.Invalid {
					t.Errorf("code %d, want Invalid", fail.Code(err))
				}
				if out != nil {
					t.Error("output on error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, ok, err := Get(out, tt.path)
			if err != nil || !ok || compact(raw) != tt.want {
				t.Fatalf("read back %s = %s (%v %v), want %s", tt.path, raw, ok, err, tt.want)
			}
			if tt.path != "updated_at" {
				for _, p := range []string{"updated_at", "metadata.updated_at"} {
					if got := gjson.GetBytes(out, p).Str; got != "2026-04-01T12:00:00Z" {
						t.Errorf("%s = %s, want the edit time", p, got)
					}
				}
			}
			if gjson.GetBytes(out, "created_at").Str != "2025-11-07T14:30:22Z" {
				t.Error("created_at changed")
			}
			if err := Validate(out); err != nil {
				t.Error(err)
			}
			if !bytes.HasSuffix(out, []byte("}\n")) || !bytes.Contains(out, []byte("\n  \"schema_version\": \"2.1\",\n")) {
				t.Errorf("output not in the package's layout:\n%.200s", out)
			}
		})
	}
}

func TestSetOnInvalidInput(t *testing.T) {
	if _, err := Set([]byte(`{"a":`), "a", []byte(`1`), t0); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("corrupt: %v", err)
	}
	doc := readFixture(t, "invalid/bad-status.json")
	_, err := Set(doc, "phase_data.x", []byte(`{}`), t0)
	if err == nil || !strings.Contains(err.Error(), "already invalid before this edit") {
		t.Errorf("invalid input: %v", err)
	}
	// ...and an edit that repairs it is fine.
	if _, err := Set(doc, "status", []byte(`"complete"`), t0); err != nil {
		t.Errorf("repairing edit: %v", err)
	}
	if _, err := Set([]byte(`[1]`), "0", []byte(`1`), t0); fail.Code(err) != fail.Invalid {
		t.Errorf("array document: %v", err)
	}
}

func TestIncrement(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	tests := []struct {
		path  string
		delta int64
		want  int64
		err   string
	}{
		{"error_state.retry_count", 1, 2, ""},
		{"error_state.retries.research", 2, 3, ""},
		{"error_state.retries.test", 1, 1, ""}, // missing: starts at 0
		{"phase_data.implement.current_phase", -3, 0, ""},
		{"replanning_count", 5, 5, ""},
		{"counters.new.deep", 7, 7, ""},
		{"phase_data.plan.estimated_hours", 1, 0, "holds number 6.5, not a 64-bit integer"},
		{"status", 1, 0, `status: holds string "in_progress", not a number; only integers can be incremented`},
		{"error_state.retry_count", -5, 0, "error_state.retry_count: must not be negative"},
		{"state_machine.completed_states", 1, 0, "holds an array, not a number"},
	}
	for _, tt := range tests {
		out, n, err := Increment(doc, tt.path, tt.delta, t0)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || fail.Code(err) != fail.Invalid {
				t.Errorf("Increment(%s) err %v, want %q", tt.path, err, tt.err)
			}
			continue
		}
		if err != nil || n != tt.want {
			t.Errorf("Increment(%s, %d) = %d, %v; want %d", tt.path, tt.delta, n, err, tt.want)
			continue
		}
		if raw, _, _ := Get(out, tt.path); raw != strconv.FormatInt(tt.want, 10) {
			t.Errorf("stored %s, want %d", raw, tt.want)
		}
	}
	big := mustSetRaw(t, doc, "n", `9223372036854775807`)
	if _, _, err := Increment(big, "n", 1, t0); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("overflow: %v", err)
	}
	two := mustSetRaw(t, doc, "n", `2.0`)
	if _, n, err := Increment(two, "n", 1, t0); err != nil || n != 3 {
		t.Errorf("2.0 + 1 = %d, %v", n, err)
	}
}

func TestAppend(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-full.json")
	out, err := Append(doc, "state_machine.completed_states", []byte(`"implement"`), t0)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _, _ := Get(out, "state_machine.completed_states"); compact(raw) != `["initialize","research","plan","implement"]` {
		t.Errorf("completed_states = %s", raw)
	}
	out, err = Append(doc, "supervisor_state.research_supervisor.workers", []byte(`{"worker_id":"research_specialist_5","status":"pending"}`), t0)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _, _ := Get(out, "supervisor_state.research_supervisor.workers.4.worker_id"); raw != `"research_specialist_5"` {
		t.Errorf("worker 4 = %s", raw)
	}
	out, err = Append(doc, "phase_data.test.failures", []byte(`"auth.test.ts"`), t0) // missing: new array
	if err != nil {
		t.Fatal(err)
	}
	if raw, _, _ := Get(out, "phase_data.test.failures"); compact(raw) != `["auth.test.ts"]` {
		t.Errorf("failures = %s", raw)
	}
	out, err = Append(doc, "state_machine.transition_table.complete", []byte(`"initialize"`), t0)
	if err != nil || !strings.Contains(string(out), `"complete": ["initialize"]`) {
		t.Errorf("append to empty array: %v", err)
	}
	for _, c := range []struct{ path, value, want string }{
		{"status", `"x"`, `status: holds string "in_progress", not an array; append needs an array or a missing path`},
		{"user_notes", `1`, "user_notes: holds an object, not an array"},
		{"state_machine.completed_states", `"research"`, `"research" is listed twice`},
		{"state_machine.completed_states", `nope`, "is not valid JSON"},
	} {
		if _, err := Append(doc, c.path, []byte(c.value), t0); err == nil || !strings.Contains(err.Error(), c.want) || fail.Code(err) != fail.Invalid {
			t.Errorf("Append(%s, %s): %v, want %q", c.path, c.value, err, c.want)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	if err := CheckJSON([]byte(`{"a": [1]}`), "f.json"); err != nil {
		t.Errorf("a JSON document: %v", err)
	}
	for doc, want := range map[string]string{
		"{bad":                   "f.json: checkpoint: not valid JSON",
		"\"\xff\"":               "f.json is not valid UTF-8",
		strings.Repeat("[", 100): "f.json nests arrays and objects more than",
	} {
		err := CheckJSON([]byte(doc), "f.json")
		if fail.Code(err) != fail.Invalid || !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("CheckJSON(%.20q) = %v; want exit 4, %q", doc, err, want)
		}
	}
}
