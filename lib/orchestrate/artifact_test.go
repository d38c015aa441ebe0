package orchestrate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func TestCheckArtifactAndWorkerRecord(t *testing.T) {
	report := []byte("# T\n\n## Executive Summary\n\nShort.\n\n## Key Findings\n\n- k\n\n## Files Modified\n\n- src/a.go\n")
	implement := role("implement")
	c, err := CheckArtifact(implement, report)
	if err != nil || !reflect.DeepEqual(c.FilesModified, []string{"src/a.go"}) {
		t.Fatalf("CheckArtifact(summary) = %+v, %v", c, err)
	}
	rec := WorkerRecord(implement, Worker{ID: "phase_1", Label: "Phase 1", Output: "/o.md"}, c, nil)
	if rec.Track != "Phase 1" || rec.Status != checkpoint.WorkerCompleted || rec.Validate() != nil {
		t.Errorf("WorkerRecord = %+v", rec)
	}
	test := role("test")
	c, err = CheckArtifact(test, []byte(`{"total_tests": 2, "tests_passed": 1, "tests_failed": 1, "failures": [{"name": "TestA"}]}`))
	if n, fs := failing(test, c.Metadata); err != nil || n != 1 || FailureLine(test, n, fs) != "1 failing tests; TestA" {
		t.Errorf("CheckArtifact(results) = %+v, %v", c, err)
	}
	for _, tc := range []struct {
		role Role
		bad  string
	}{{role("plan"), "# Plan\n\nno phases\n"}, {test, "{}"}, {implement, "placeholder"}} {
		_, err := CheckArtifact(tc.role, []byte(tc.bad))
		if fail.Code(err) != fail.Invalid {
			t.Errorf("CheckArtifact(%s, %q): %v, want invalid data", tc.role.State, tc.bad, err)
		}
		rec := WorkerRecord(tc.role, Worker{ID: "w"}, Checked{}, err)
		if rec.Status != checkpoint.WorkerFailed || rec.Error == "" {
			t.Errorf("WorkerRecord of a failure = %+v", rec)
		}
	}
}

// role is the default machine's role of state.
func role(state string) Role {
	r, _ := RoleOf(machine.Default(), state)
	return r
}

// A definition's own formats: markdown with sections, JSON with fields,
// and a fail_when number.
func TestCheckArtifactDefinitionFormats(t *testing.T) {
	md := Role{State: "review", Work: machine.Work{Format: machine.FormatMarkdown, Sections: []string{"Verdict", "Findings"}}}
	c, err := CheckArtifact(md, []byte("# Review\n\n## Verdict\n\nShip it.\n\n## Findings\n\n- none\n"))
	if err != nil || !strings.Contains(string(c.Metadata), `"Verdict":"Ship it."`) {
		t.Errorf("markdown with its sections: %s, %v", c.Metadata, err)
	}
	if _, err := CheckArtifact(md, []byte("# Review\n\n## Verdict\n\nShip it.\n")); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), `no "## Findings" section`) {
		t.Errorf("markdown without a section: %v", err)
	}
	js := Role{State: "check", Work: machine.Work{Format: machine.FormatJSON, Fields: []machine.Field{{Name: "verdict"}}, FailWhen: "errors"}}
	c, err = CheckArtifact(js, []byte(`{"verdict": "bad", "errors": 3}`))
	if n, _ := failing(js, c.Metadata); err != nil || n != 3 || FailureLine(js, n, nil) != "errors: 3 in the check" {
		t.Errorf("json with fail_when: %+v, %v", c, err)
	}
	for _, bad := range []string{`{"errors": 0}`, `{"verdict": null, "errors": 0}`, `{"verdict": 1, "errors": -1}`, `{"verdict": 1, "errors": "2"}`, `[1]`} {
		if _, err := CheckArtifact(js, []byte(bad)); fail.Code(err) != fail.Invalid {
			t.Errorf("CheckArtifact(json, %s) = %v, want invalid data", bad, err)
		}
	}
}

// A field's type and values: the check names the field, what it is and
// what it must be.
func TestCheckArtifactFieldTypes(t *testing.T) {
	js := Role{State: "triage", Work: machine.Work{Format: machine.FormatJSON, Fields: []machine.Field{
		{Name: "file"}, {Name: "severity", Values: []string{"low", "high"}}, {Name: "score", Type: machine.TypeNumber},
		{Name: "notes", Type: machine.TypeArray}, {Name: "where", Type: machine.TypeObject}, {Name: "fixed", Type: machine.TypeBoolean}}}}
	good := `{"file": 1, "severity": "low", "score": 2.5, "notes": [], "where": {}, "fixed": false}`
	if _, err := CheckArtifact(js, []byte(good)); err != nil {
		t.Fatalf("a good object: %v", err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"severity": "low"`, `"severity": "urgent"`, `field "severity" is "urgent", not one of low, high`},
		{`"severity": "low"`, `"severity": 3`, `field "severity" must be a string, not a number (3)`},
		{`"score": 2.5`, `"score": "2.5"`, `field "score" must be a number, not a string ("2.5")`},
		{`"notes": []`, `"notes": "a, b"`, `field "notes" must be an array, not a string`},
		{`"where": {}`, `"where": []`, `field "where" must be an object, not an array`},
		{`"fixed": false`, `"fixed": "no"`, `field "fixed" must be a boolean, not a string`},
	} {
		_, err := CheckArtifact(js, []byte(strings.Replace(good, tc.from, tc.to, 1)))
		if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.to, err, tc.want)
		}
	}
}
