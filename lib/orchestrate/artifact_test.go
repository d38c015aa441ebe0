package orchestrate

import (
	"reflect"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestCheckArtifactAndWorkerRecord(t *testing.T) {
	report := []byte("# T\n\n## Executive Summary\n\nShort.\n\n## Key Findings\n\n- k\n\n## Files Modified\n\n- src/a.go\n")
	implement, _ := RoleOf("implement")
	c, err := CheckArtifact(implement, report)
	if err != nil || !reflect.DeepEqual(c.FilesModified, []string{"src/a.go"}) {
		t.Fatalf("CheckArtifact(summary) = %+v, %v", c, err)
	}
	rec := WorkerRecord(implement, Worker{ID: "phase_1", Label: "Phase 1", Output: "/o.md"}, c, nil)
	if rec.Track != "Phase 1" || rec.Status != checkpoint.WorkerCompleted || rec.Validate() != nil {
		t.Errorf("WorkerRecord = %+v", rec)
	}
	test, _ := RoleOf("test")
	c, err = CheckArtifact(test, []byte(`{"total_tests": 2, "tests_passed": 1, "tests_failed": 1, "failures": [{"name": "TestA"}]}`))
	if err != nil || c.TestsFailed != 1 || FailureLine(c.TestsFailed, c.Failures) != "1 failing tests; TestA" {
		t.Errorf("CheckArtifact(results) = %+v, %v", c, err)
	}
	plan, _ := RoleOf("plan")
	for role, bad := range map[Role]string{plan: "# Plan\n\nno phases\n", test: "{}", implement: "placeholder"} {
		_, err := CheckArtifact(role, []byte(bad))
		if fail.Code(err) != fail.Invalid {
			t.Errorf("CheckArtifact(%s, %q): %v, want invalid data", role.State, bad, err)
		}
		rec := WorkerRecord(role, Worker{ID: "w"}, Checked{}, err)
		if rec.Status != checkpoint.WorkerFailed || rec.Error == "" {
			t.Errorf("WorkerRecord of a failure = %+v", rec)
		}
	}
}
