package orchestrate

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

func TestOutputString(t *testing.T) {
	tests := []struct {
		out  Output
		want string
	}{
		{Output{}, ""},
		{Output{Pairs: kv.Pairs{{Key: "A", Value: "1"}, {Key: "NEXT", Value: "phase"}}, Warnings: []Warning{{Text: "not printed"}}}, "A=1\nNEXT=phase\n"},
		{Output{Pairs: kv.Pairs{{Key: "EMPTY", Value: ""}}}, "EMPTY=\n"},
		{Output{Pairs: kv.Pairs{{Key: "A", Value: "1"}}, Signal: "SUPERVISOR_COMPLETE: {}"}, "SUPERVISOR_COMPLETE: {}\n"},
	}
	for _, tt := range tests {
		if got := tt.out.String(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.out, got, tt.want)
		}
	}
	var o Output
	o.add("N", 3)
	o.add("M", int64(-1))
	o.add(numbered("TOPIC", 0), "x")
	if got := o.String(); got != "N=3\nM=-1\nTOPIC_1=x\n" {
		t.Errorf("add: got %q", got)
	}
}

func TestOutputsAndArtifacts(t *testing.T) {
	rec := func(path, status string) supervisor.Record {
		return supervisor.Record{WorkerID: path, OutputPath: path, Status: status}
	}
	records := map[string]map[string]supervisor.Record{
		"research_supervisor": {"b": rec("/r/002.md", checkpoint.WorkerCompleted), "a": rec("/r/001.md", checkpoint.WorkerCompleted), "c": rec("/r/003.md", checkpoint.WorkerFailed)},
		"plan_architect":      {"p": rec("/p/001.md", checkpoint.WorkerCompleted)},
		"debug_analyst":       {},
		"doc_writer":          {"d": rec("/s/sum.md", checkpoint.WorkerPending)},
	}
	m := machine.Default()
	got := outputs(m, records)
	want := map[string][]string{"research": {"/r/001.md", "/r/002.md"}, "plan": {"/p/001.md"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outputs = %v, want %v", got, want)
	}
	tests := []struct {
		in   map[string][]string
		want []string
	}{
		{nil, nil},
		{got, []string{"/r/001.md", "/r/002.md", "/p/001.md"}},
		{map[string][]string{"document": {"d"}, "test": {"t"}, "research": {"r"}}, []string{"r", "t", "d"}},
	}
	for _, tt := range tests {
		if got := artifacts(m, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("artifacts(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func project(t *testing.T) *store.Project {
	dir := t.TempDir()
	return &store.Project{Dir: dir, StateDir: filepath.Join(dir, ".claude", "state"), LockWait: time.Second, Now: time.Now}
}

// idOf is the workflow a step's output is about: its WORKFLOW_ID, else
// the last part of its SPEC_DIR.
func idOf(t *testing.T, out Output) string {
	t.Helper()
	for _, p := range out.Pairs {
		if p.Key == "WORKFLOW_ID" {
			return p.Value
		}
	}
	return filepath.Base(value(t, out, "SPEC_DIR"))
}

// outputPath is the path of the i-th worker's artifact in a plan's output.
func outputPath(t *testing.T, out Output, i int) string {
	t.Helper()
	return filepath.Join(value(t, out, "SPEC_DIR"), value(t, out, fmt.Sprintf("OUTPUT_%d", i)))
}

// shown is path as flowstate's messages name it: from the project's root.
func shown(t *testing.T, p *store.Project, path string) string {
	t.Helper()
	rel, err := filepath.Rel(p.Dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		t.Fatalf("%s is not in the project %s", path, p.Dir)
	}
	return rel
}

func value(t *testing.T, out Output, key string) string {
	t.Helper()
	for _, p := range out.Pairs {
		if p.Key == key {
			return p.Value
		}
	}
	t.Fatalf("no %s in\n%s", key, out)
	return ""
}

// TestResearchOnly runs a research-only workflow through the files: start,
// plan one worker, a missing report fails verify, the report verifies, the
// next plan finishes the workflow, and resume then reports it finished.
func TestResearchOnly(t *testing.T) {
	p := project(t)
	out, err := Start(p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Workflow(idOf(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if out, err = Plan(w, Options{}); err != nil {
		t.Fatal(err)
	}
	if value(t, out, "WORKER_COUNT") != "1" || value(t, out, "AGENT") != "research-specialist" {
		t.Fatalf("plan:\n%s", out)
	}
	report := outputPath(t, out, 1)
	// Right after the plan, with no agent on record yet, a verify waits
	// for the hooks to record one; once that grace is over it fails.
	if out, err := Verify(w, Options{}); err != nil || value(t, out, "NEXT") != "verify" {
		t.Fatalf("verify right after the plan: %v\n%s", err, out)
	}
	p.Now = func() time.Time { return time.Now().Add(hookGrace) }
	if _, err := Verify(w, Options{}); fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), "wrote no research report at "+shown(t, p, report)) {
		t.Fatalf("verify without the report: %v", err)
	}
	md := "# Auth\n\n## Executive Summary\n\nTokens.\n\n## Key Findings\n\n- one place\n"
	if err := os.WriteFile(report, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	// Verified, the workflow is done: the same step says so.
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "NEXT") != "done" || value(t, out, "ARTIFACT_COUNT") != "1" {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	if out, err = Resume(p, ResumeRequest{ID: w.ID, Actor: sm.Actor{By: "t"}}, store.Selector{Session: "s2"}, Options{}); err != nil || value(t, out, "ARTIFACT_COUNT") != "1" {
		t.Fatalf("resume of a finished workflow: %v\n%s", err, out)
	}
	if _, err := Resume(p, ResumeRequest{Actor: sm.Actor{By: "t"}}, store.Selector{Session: "s2"}, Options{}); fail.Code(err) != fail.Usage {
		t.Errorf("resume with nothing unfinished: %v, want usage error", err)
	}
}

// TestClassifyFirst covers the pending-classification file: the first
// start keeps the id, the classified start creates that workflow and
// removes the file.
func TestClassifyFirst(t *testing.T) {
	p := project(t)
	out, err := Start(p, Request{Command: "coordinate", Description: "compare\nauth", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if value(t, out, "NEXT") != "classify" || value(t, out, "DESCRIPTION") != "compare auth" {
		t.Fatalf("first start:\n%s", out)
	}
	cls := `{"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 1, "research_topics": ["auth"], "reasoning": "r"}`
	if err := os.WriteFile(value(t, out, "CLASSIFICATION_PATH"), []byte(cls), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := Start(p, Request{Command: "coordinate", Description: "compare\nauth", Session: "s1", Classified: true})
	if err != nil {
		t.Fatal(err)
	}
	if id := idOf(t, second); !strings.Contains(value(t, out, "CLASSIFICATION_PATH"), id) {
		t.Errorf("workflow %s is not the one the classifier wrote for", id)
	}
	if _, err := Start(p, Request{Command: "coordinate", Description: "x", Session: "s1", Classified: true}); fail.Code(err) != fail.Usage {
		t.Errorf("a second classified start: %v, want usage error (nothing pending)", err)
	}
	if _, err := Start(p, Request{Command: "coordinate", Description: "x", Mode: "magic"}); fail.Code(err) != fail.Usage {
		t.Errorf("FLOWSTATE_CLASSIFICATION=magic: %v, want usage error", err)
	}
}

// TestImplementationLines checks that phase-verify aggregates as
// `flowstate aggregate` does: the lines of the files an implementation
// summary lists are counted from the project, not recorded as 0.
func TestImplementationLines(t *testing.T) {
	p := project(t)
	out, err := Start(p, Request{Command: "orchestrate", Scope: "implement-only", Description: "add a", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Workflow(idOf(t, out))
	if err != nil {
		t.Fatal(err)
	}
	// A scope given by the user is classify.Given's: confidence 1, one research worker.
	start, err := w.ReadCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	cls := gjson.GetBytes(start, "state_machine.classification")
	if cls.Get("confidence").Float() != 1 || cls.Get("research_complexity").Int() != 1 || cls.Get("reasoning").String() != "scope given by the user" {
		t.Errorf("classification of a given scope: %s", cls.Raw)
	}
	if out, err = Plan(w, Options{}); err != nil || value(t, out, "AGENT") != "implementation-executor" {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(p.Dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "src", "a.go"), []byte(strings.Repeat("x\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	md := "# Add a\n\n## Executive Summary\n\nAdded a.\n\n## Files Modified\n\n- `src/a.go`\n"
	if err := os.WriteFile(outputPath(t, out, 1), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	// Verify's writes are checkpoint edits like any other: they touch updated_at.
	later := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	p.Now = func() time.Time { return later }
	before, err := w.ReadCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if out, err = Verify(w, Options{}); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	// The records and their aggregate are one locked write; finishing the
	// workflow (implement is the terminal state) the other.
	if n := gjson.GetBytes(doc, "metadata.revision").Int() - gjson.GetBytes(before, "metadata.revision").Int(); n != 2 {
		t.Errorf("verify wrote the checkpoint %d times, want twice", n)
	}
	agg := gjson.GetBytes(doc, "supervisor_state.implementation_supervisor.aggregated_metadata")
	if agg.Get("files_modified").Int() != 1 || agg.Get("total_lines").Int() != 50 {
		t.Errorf("aggregated_metadata = %s, want 1 file of 50 lines", agg.Raw)
	}
	for _, path := range []string{"updated_at", "metadata.updated_at"} {
		if got := gjson.GetBytes(doc, path).String(); got != "2030-01-02T03:04:05Z" {
			t.Errorf("%s = %q after verify, want the time of the write", path, got)
		}
	}
}

// TestOutputFoldsPaths: the writer keeps every value on its line, paths
// too, so a project directory holding a line break cannot print a key.
func TestOutputFoldsPaths(t *testing.T) {
	p := project(t)
	p.Dir = filepath.Join(p.Dir, "x\nNEXT=done")
	out, err := Start(p, Request{Command: "coordinate", Description: "auth", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "CLASSIFICATION_PATH=") || !strings.Contains(lines[1], "x NEXT=done/.flowstate/specs/") || lines[2] != "NEXT=classify" {
		t.Errorf("output:\n%s", out)
	}
}
