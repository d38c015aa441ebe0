package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func newCheckpoint(t *testing.T, id string) []byte {
	t.Helper()
	m := machine.Default()
	cp, err := checkpoint.New(checkpoint.Params{
		WorkflowID: id, Command: "coordinate", Description: "d", Scope: "research-only",
		InitialState: m.Initial, TerminalState: "research", Transitions: m.Transitions, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TestCreateIsWhole: Create checks the session id before it writes
// anything, clears what a killed Create left, builds the workflow out of
// sight, points the session at it, and refuses an id that exists.
func TestCreateIsWhole(t *testing.T) {
	p := testProject(t)
	if _, err := p.Create("wf-1", newCheckpoint(t, "wf-1"), nil, "bad session"); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "nothing was created") {
		t.Errorf("Create with a bad session id = %v", err)
	}
	if _, err := os.Lstat(p.StateDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused Create made the state directory (%v)", err)
	}
	// What a killed Create leaves: a hidden directory, half built.
	left := filepath.Join(p.workflowsDir(), creating)
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "state"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if ids, _ := p.WorkflowIDs(); len(ids) != 0 {
		t.Errorf("a half-built workflow is listed: %q", ids)
	}
	w, err := p.Create("wf-1", newCheckpoint(t, "wf-1"), []byte(`{"m":1}`), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed Create's directory is still there (%v)", err)
	}
	for _, f := range []string{checkpointFile, stateFile, eventsFile, machineFile} {
		if st, err := os.Stat(w.path(f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", f, st, err)
		}
	}
	if id, err := p.SessionWorkflow("s1"); err != nil || id != "wf-1" {
		t.Errorf("session s1 points at %q, %v", id, err)
	}
	if _, err := p.Create("wf-1", newCheckpoint(t, "wf-1"), nil, ""); fail.Code(err) != fail.Usage {
		t.Errorf("Create of an existing id = %v", err)
	}
}

// TestCreateFailureLeavesNothing: when the session pointer cannot be
// written (here a directory stands where it goes), the workflow built for
// it is removed again.
func TestCreateFailureLeavesNothing(t *testing.T) {
	p := testProject(t)
	if err := os.MkdirAll(filepath.Join(p.SessionPointer("s1"), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create("wf-1", newCheckpoint(t, "wf-1"), nil, "s1"); err == nil || !strings.Contains(err.Error(), "nothing was created") {
		t.Fatalf("Create = %v", err)
	}
	if entries, _ := os.ReadDir(p.workflowsDir()); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

// TestStateBound: the state file never grows past limit.MaxState; an
// append that would is compacted first, and refused when the state is
// still too large, with nothing stored.
func TestStateBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	w := testWorkflow(t, testProject(t), "wf-1")
	value := strings.Repeat("v", limit.Max)
	for _, k := range []string{"A", "B", "C"} {
		if err := w.AppendState([][2]string{{k, value}}); err != nil {
			t.Fatal(err)
		}
	}
	// Overwrites: compacted instead of growing past the bound.
	for range 3 {
		if err := w.AppendState([][2]string{{"C", value}}); err != nil {
			t.Fatal(err)
		}
	}
	err := w.AppendState([][2]string{{"D", value}})
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "nothing was stored") {
		t.Fatalf("the append past the bound: %v", err)
	}
	st, err := w.LoadState()
	if err != nil || len(st.Values) != 3 || st.Values["C"] != value {
		t.Errorf("after the refusal: %d keys, %v", len(st.Values), err)
	}
	if info, _ := os.Stat(w.path(stateFile)); info.Size() > limit.MaxState {
		t.Errorf("state file of %d bytes", info.Size())
	}
}
