package supervisor

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

func TestRecords(t *testing.T) {
	tests := []struct {
		doc  string
		ids  []string
		code int
		msg  string
	}{
		{`{}`, nil, fail.OK, ""},
		{`{"supervisor_state":{"r":{}}}`, nil, fail.OK, ""},
		{`{"supervisor_state":{"r":{"workers":null}}}`, nil, fail.OK, ""},
		{`{"supervisor_state":{"r":{"workers":[{"worker_id":"a","status":"completed"},{"worker_id":"b","status":"failed"}]}}}`, []string{"a", "b"}, fail.OK, ""},
		{`{"supervisor_state":{"r":{"workers":{"worker_id":"a"}}}}`, nil, fail.Invalid, "workflow wf, supervisor_state.r.workers: worker records:"},
		{`{"supervisor_state":{"r":{"workers":[{"worker_id":"a","status":"done"}]}}}`, nil, fail.Invalid, "workflow wf, supervisor_state.r.workers: worker record 1:"},
	}
	for _, tt := range tests {
		recs, err := Records([]byte(tt.doc), "wf", "r")
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.WorkerID)
		}
		if fail.Code(err) != tt.code || !reflect.DeepEqual(ids, tt.ids) || err != nil && !strings.HasPrefix(err.Error(), tt.msg) {
			t.Errorf("Records(%s) = %v, %v; want %v, exit %d, %q", tt.doc, ids, err, tt.ids, tt.code, tt.msg)
		}
	}
}

// workflow is a fresh research-only workflow in a temp project.
func workflow(t *testing.T) *store.Workflow {
	t.Helper()
	dir := t.TempDir()
	p := &store.Project{Dir: dir, StateDir: filepath.Join(dir, ".claude", "state"), LockWait: time.Second, Now: time.Now}
	w, _, err := sm.Init(p, sm.InitParams{Description: "d", Command: "c", Scope: "research-only", Machine: machine.Default(),
		Classification: classify.Classification{WorkflowType: "research-only", Confidence: 1, ResearchComplexity: 1, ResearchTopics: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestUpsertStatus(t *testing.T) {
	w := workflow(t)
	for _, r := range []Record{
		{WorkerID: "a", Status: checkpoint.WorkerPending},
		{WorkerID: "b", Status: checkpoint.WorkerFailed, Error: "x"},
		{WorkerID: "a", Status: checkpoint.WorkerCompleted},
	} {
		if err := Upsert(w, "research_supervisor", r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Status(w, "research_supervisor", []string{"a", "c"})
	if err != nil {
		t.Fatal(err)
	}
	want := Progress{Completed: []string{"a"}, Failed: []string{"b"}, Pending: []string{"c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status = %+v, want %+v", got, want)
	}
	if got, err := Status(w, "nobody", nil); err != nil || len(got.Completed)+len(got.Failed)+len(got.Pending) != 0 {
		t.Errorf("a supervisor without records: %+v, %v", got, err)
	}
}

// TestUpsertTx: several records in one locked write, which touches
// updated_at as every checkpoint edit does.
func TestUpsertTx(t *testing.T) {
	w := workflow(t)
	later := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	w.P.Now = func() time.Time { return later }
	err := w.Update(func(tx *store.Tx) error {
		if err := UpsertTx(tx, "research_supervisor"); err != nil { // nothing to store
			return err
		}
		return UpsertTx(tx, "research_supervisor",
			Record{WorkerID: "a", Status: checkpoint.WorkerPending},
			Record{WorkerID: "b", Status: checkpoint.WorkerCompleted},
			Record{WorkerID: "a", Status: checkpoint.WorkerFailed, Error: "x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Status(w, "research_supervisor", nil)
	if want := (Progress{Completed: []string{"b"}, Failed: []string{"a"}, Pending: []string{}}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Status = %+v, %v; want %+v", got, err, want)
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(doc, "updated_at").String(); got != "2030-01-02T03:04:05Z" {
		t.Errorf("updated_at = %q, want the time of the upsert", got)
	}
	err = w.Update(func(tx *store.Tx) error {
		return UpsertTx(tx, "research_supervisor", Record{WorkerID: "c", Status: "done"})
	})
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "supervisor_state.research_supervisor.workers: ") {
		t.Errorf("an invalid record: %v, want invalid naming the path", err)
	}
}

func TestAggregate(t *testing.T) {
	cwd, project := t.TempDir(), t.TempDir()
	report := "# T\n\n## Executive Summary\n\nDone.\n\n## Key Findings\n\n- one\n\n## Files Modified\n\n- src/a.go\n"
	if err := os.WriteFile(filepath.Join(cwd, "r1.md"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "src", "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{WorkerID: "w1", Track: "one", Status: checkpoint.WorkerCompleted, OutputPath: "r1.md"},
		{WorkerID: "w2", Track: "two", Status: checkpoint.WorkerFailed, Error: "timeout"},
	}
	out, warnings, err := Aggregate(Implementation, recs, Dirs{Cwd: cwd, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"total_lines":3,`) {
		t.Errorf("the modified file's 3 lines are not counted from the project: %s", out)
	}
	if want := []Warning{{Worker: "w2", Failed: true, Text: "worker w2 failed: timeout"}}; !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	recs[0].Status, recs[0].Error = checkpoint.WorkerFailed, "gone"
	_, warnings, err = Aggregate(Research, recs, Dirs{Cwd: cwd})
	if fail.Code(err) != fail.Refused || len(warnings) != 0 {
		t.Errorf("all failed: %v, warnings %q; want refused and no warnings", err, warnings)
	}
}
