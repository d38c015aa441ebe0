package hook

import (
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/store"
)

// now is the sweep's clock in every case; ages are relative to it.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// workflows is what p.Summary reports: one of each status that decides
// a pointer's fate.
var workflows = map[string]store.Summary{
	"wf-running":   {ID: "wf-running", Status: "in_progress"},
	"wf-unstarted": {ID: "wf-unstarted"}, // no status yet: active
	"wf-complete":  {ID: "wf-complete", Status: "complete"},
	"wf-failed":    {ID: "wf-failed", Status: "failed"},
	"wf-abandoned": {ID: "wf-abandoned", Status: "abandoned"},
	"wf-damaged":   {ID: "wf-damaged", CurrentState: store.Unreadable, Status: store.Unreadable},
}

const (
	gone     = "its workflow no longer exists"
	finished = "its workflow is finished"
)

// TestStale: only old pointers are judged, and only a finished or missing
// workflow makes one stale; names no session can have are never touched.
func TestStale(t *testing.T) {
	for _, c := range []struct {
		name     string
		session  string
		age      time.Duration
		workflow string
		why      string // "" when the pointer is kept
	}{
		{"fresh pointer to a finished workflow", "s1", time.Hour, "wf-complete", ""},
		{"fresh pointer to a missing workflow", "s1", StaleAfter - time.Second, "wf-gone", ""},
		{"old pointer to a running workflow", "s1", 30 * 24 * time.Hour, "wf-running", ""},
		{"old pointer to a workflow without status", "s1", 30 * 24 * time.Hour, "wf-unstarted", ""},
		{"old pointer to a complete workflow", "s1", StaleAfter, "wf-complete", finished},
		{"old pointer to a failed workflow", "s1", 2 * StaleAfter, "wf-failed", finished},
		{"old pointer to an abandoned workflow", "s1", 2 * StaleAfter, "wf-abandoned", finished},
		{"old pointer to a missing workflow", "s1", 2 * StaleAfter, "wf-gone", gone},
		{"old pointer to an unreadable workflow", "s1", 2 * StaleAfter, "wf-damaged", ""},
		{"old unreadable pointer", "s1", 2 * StaleAfter, "", gone},
		{"hidden file: an atomic writer's temp", ".s1123", 2 * StaleAfter, "", ""},
		{"name no session id can have", "-s1", 2 * StaleAfter, "", ""},
		{"name with a space", "s 1", 2 * StaleAfter, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			lk := fakeProject{pointers: map[string]string{c.session: c.workflow}}
			got := stale([]pointerFile{{Session: c.session, Modified: now.Add(-c.age)}}, lk, now)
			var want []Pointer
			if c.why != "" {
				want = []Pointer{{Session: c.session, Workflow: c.workflow, Why: c.why}}
			}
			if len(got) != len(want) || len(got) == 1 && got[0] != want[0] {
				t.Errorf("stale = %+v, want %+v", got, want)
			}
		})
	}
}

// fakeProject answers recordLookup from pointers, runs and workflows.
type fakeProject struct{ pointers, runs map[string]string }

func (f fakeProject) RunWorkflow(session string) string { return f.runs[session] }

func (f fakeProject) SessionWorkflow(session string) (string, error) { return f.pointers[session], nil }

func (f fakeProject) Summary(id string) (store.Summary, bool) {
	s, ok := workflows[id]
	return s, ok
}

// TestAtEnd: SessionEnd keeps everything of an active workflow, and only
// looks for temp files in a workflow that still exists.
func TestAtEnd(t *testing.T) {
	for _, c := range []struct {
		workflow       string
		pointer, temps bool
	}{
		{"wf-running", false, false},
		{"wf-unstarted", false, false},
		{"wf-complete", true, true},
		{"wf-failed", true, true},
		{"wf-abandoned", true, true},
		{"wf-gone", true, false},
		{"wf-damaged", false, false}, // may be active behind a damaged file
	} {
		pointer, temps := atEnd(fakeProject{}.Summary(c.workflow))
		if pointer != c.pointer || temps != c.temps {
			t.Errorf("atEnd(%s) = pointer %v, temps %v; want %v, %v", c.workflow, pointer, temps, c.pointer, c.temps)
		}
	}
}

// TestStaleRecord: a session's run and prompt records go only when old,
// with no pointer left and no run of an active workflow.
func TestStaleRecord(t *testing.T) {
	old := 2 * StaleAfter
	for _, c := range []struct {
		name    string
		session string
		age     time.Duration
		pointer string // the workflow the session points at
		run     string // the workflow of its run record
		stale   bool
	}{
		{"old, no pointer, no run", "s1", old, "", "", true},
		{"old, run of a complete workflow", "s1", old, "", "wf-complete", true},
		{"old, run of a missing workflow", "s1", old, "", "wf-gone", true},
		{"old, run of a running workflow", "s1", old, "", "wf-running", false},
		{"old, run of an unreadable workflow", "s1", old, "", "wf-damaged", false},
		{"old, a pointer left", "s1", old, "wf-complete", "", false},
		{"fresh, nothing else", "s1", time.Hour, "", "", false},
		{"hidden temp", ".s1123", old, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			lk := fakeProject{pointers: map[string]string{c.session: c.pointer}, runs: map[string]string{c.session: c.run}}
			if got := staleRecord(pointerFile{Session: c.session, Modified: now.Add(-c.age)}, lk, now); got != c.stale {
				t.Errorf("staleRecord = %v, want %v", got, c.stale)
			}
		})
	}
}
