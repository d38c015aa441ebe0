package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func TestSummaryActive(t *testing.T) {
	tests := []struct {
		s        Summary
		want     bool
		finished bool
	}{
		{Summary{CurrentState: "research", Terminal: "plan", Status: "in_progress"}, true, false},
		{Summary{CurrentState: "research", Terminal: "plan"}, true, false},
		{Summary{CurrentState: "plan", Terminal: "plan", Status: "in_progress"}, true, false},
		{Summary{CurrentState: "plan", Terminal: "plan", Status: "complete"}, false, true},
		{Summary{CurrentState: "research", Terminal: "plan", Status: "abandoned"}, false, true},
		{Summary{CurrentState: "research", Terminal: "plan", Status: "failed"}, false, true},
		// Unreadable: neither picked by discovery nor cleaned up as finished.
		{Summary{CurrentState: "unreadable", Status: "unreadable"}, false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Active(); got != tt.want {
			t.Errorf("%+v.Active() = %v", tt.s, got)
		}
		if got := tt.s.Finished(); got != tt.finished {
			t.Errorf("%+v.Finished() = %v", tt.s, got)
		}
	}
}

// TestSummaryOfOne: Summary reads one workflow as List does, tells a
// missing (or linked) one from an unreadable one, and WorkflowIDs lists
// the directories without reading them.
func TestSummaryOfOne(t *testing.T) {
	p := testProject(t)
	m := machine.Default()
	cp, err := checkpoint.New(checkpoint.Params{
		WorkflowID: "wf-1", Command: "coordinate", Description: "d", Scope: "research-only",
		InitialState: m.Initial, TerminalState: "research", Transitions: m.Transitions, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create("wf-1", cp, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(p.workflowsDir(), "wf-damaged"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(p.workflowsDir(), "wf-linked")); err != nil {
		t.Fatal(err)
	}
	list, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range list {
		if got, ok := p.Summary(want.ID); !ok || got != want {
			t.Errorf("Summary(%s) = %+v, %v; List says %+v", want.ID, got, ok, want)
		}
	}
	if s, ok := p.Summary("wf-1"); !ok || s.Command != "coordinate" || s.CurrentState != "initialize" || !s.Active() {
		t.Errorf("Summary(wf-1) = %+v, %v", s, ok)
	}
	if s, ok := p.Summary("wf-damaged"); !ok || s.Status != Unreadable || s.Active() || s.Finished() {
		t.Errorf("Summary(wf-damaged) = %+v, %v", s, ok)
	}
	for _, id := range []string{"wf-gone", "wf-linked", "../wf-1", ""} {
		if s, ok := p.Summary(id); ok {
			t.Errorf("Summary(%q) = %+v, want none", id, s)
		}
	}
	ids, err := p.WorkflowIDs()
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"wf-1", "wf-damaged"}) {
		t.Errorf("WorkflowIDs = %q, %v", ids, err)
	}
	if dir, err := p.WorkflowDir("wf-1"); err != nil || dir != filepath.Join(p.StateDir, "workflows", "wf-1") {
		t.Errorf("WorkflowDir(wf-1) = %q, %v", dir, err)
	}
	if _, err := p.WorkflowDir("wf-linked"); fail.Code(err) != fail.Usage {
		t.Errorf("WorkflowDir of a link = %v, want a usage error", err)
	}
	if _, err := p.WorkflowDir("../x"); fail.Code(err) != fail.Invalid {
		t.Errorf("WorkflowDir of a bad id = %v", err)
	}
}

// TestResolveReservedID: a session pointing at a workflow not created yet
// (compat's init_workflow_state reserves the id) is told so; the
// project's only other active workflow is never taken in its place.
func TestResolveReservedID(t *testing.T) {
	p := testProject(t)
	if _, err := p.Create("other", newCheckpoint(t, "other"), nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.SetSession("s1", "reserved"); err != nil {
		t.Fatal(err)
	}
	w, err := p.Resolve(Selector{Session: "s1"})
	if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), "this session's workflow reserved does not exist (yet)") {
		t.Fatalf("Resolve = %v, %v; want the reserved id named", w, err)
	}
	if w, err := p.Resolve(Selector{Session: "s2"}); err != nil || w.ID != "other" {
		t.Errorf("another session without a pointer: %v, %v; want the only active workflow", w, err)
	}
}
