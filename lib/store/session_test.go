package store

import (
	"os"
	"testing"
)

func testProject(t *testing.T) *Project {
	t.Helper()
	dir := t.TempDir()
	p, err := FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClearSessionOnlyTheExpectedPointer: a pointer moved to another
// workflow since the caller judged it is kept; only the one still naming
// the expected workflow goes.
func TestClearSessionOnlyTheExpectedPointer(t *testing.T) {
	p := testProject(t)
	if err := p.SetSession("s1", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if err := p.ClearSession("s1", "wf-old"); err != nil {
		t.Fatal(err)
	}
	if id, err := p.SessionWorkflow("s1"); err != nil || id != "wf-new" {
		t.Fatalf("a pointer moved to wf-new was touched: %q %v", id, err)
	}
	if err := p.ClearSession("s1", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s1")); !os.IsNotExist(err) {
		t.Errorf("pointer naming the expected workflow not removed: %v", err)
	}
	if err := p.ClearSession("s1", "wf-new"); err != nil {
		t.Errorf("clearing a missing pointer: %v", err)
	}

	// A pointer naming no valid workflow is cleared with "" only.
	if err := os.WriteFile(p.SessionPointer("s2"), []byte("../etc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := p.SessionWorkflow("s2"); err != nil || id != "" {
		t.Fatalf("SessionWorkflow of a bad pointer = %q, %v", id, err)
	}
	if err := p.ClearSession("s2", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s2")); err != nil {
		t.Errorf("a bad pointer was removed though it does not name wf-new: %v", err)
	}
	if err := p.ClearSession("s2", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s2")); !os.IsNotExist(err) {
		t.Errorf("bad pointer not removed: %v", err)
	}
}
