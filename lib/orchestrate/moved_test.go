package orchestrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/store"
)

// TestMovedProject: a workflow left half-way is continued after its
// project was moved (renamed, copied elsewhere). Its records name the
// files where the project was; the plan is read, and the next workers
// are sent, where it is now: the brief names every earlier artifact from
// the project's root, and no step prints or stores the old place.
func TestMovedProject(t *testing.T) {
	p := project(t)
	w, _ := throughThePlan(t, p, false)
	old, moved := move(t, p, w)
	out, err := Plan(moved, Options{Cwd: p.Dir})
	if err != nil || value(t, out, "TOPIC_1") != "Phase 1: A" {
		t.Fatalf("the moved project's plan: %v\n%s", err, out)
	}
	if strings.Contains(out.String(), old) {
		t.Errorf("the plan printed the old place %s:\n%s", old, out)
	}
	brief, err := os.ReadFile(BriefPath(specDir(p, w.ID), role("implement")))
	if err != nil {
		t.Fatal(err)
	}
	_, read, _ := strings.Cut(string(brief), "## Read first\n\n")
	read, _, _ = strings.Cut(read, "\n\n")
	if strings.Contains(string(brief), old) || !strings.HasPrefix(read, "- ") {
		t.Fatalf("the brief after the move:\n%s", brief)
	}
	for _, line := range strings.Split(read, "\n") {
		path := strings.TrimPrefix(line, "- ")
		if filepath.IsAbs(path) {
			t.Errorf("the brief names %s, not from the project's root", path)
		}
		if _, err := os.Stat(filepath.Join(p.Dir, path)); err != nil {
			t.Errorf("the brief sends the workers to %s: %v", path, err)
		}
	}
}

// move moves project p elsewhere, and returns where it was and its
// workflow w where it is now.
func move(t *testing.T, p *store.Project, w *store.Workflow) (string, *store.Workflow) {
	t.Helper()
	old := p.Dir
	p.Dir = filepath.Join(t.TempDir(), "moved")
	p.StateDir = filepath.Join(p.Dir, ".claude", "state")
	if err := os.Rename(old, p.Dir); err != nil {
		t.Fatal(err)
	}
	moved, err := p.Workflow(w.ID)
	if err != nil {
		t.Fatal(err)
	}
	return old, moved
}

// TestMovedProjectAtTheGate: a workflow that waits for a person's
// approval of its plan, its project moved since, names the plan to
// review where it is now, from the project's root.
func TestMovedProjectAtTheGate(t *testing.T) {
	p := project(t)
	w, out := throughThePlan(t, p, true)
	if value(t, out, "NEXT") != Stopped {
		t.Fatalf("the verify of the plan, with a gate after it:\n%s", out)
	}
	old, moved := move(t, p, w)
	out, err := Plan(moved, Options{Cwd: p.Dir})
	if err != nil || value(t, out, "NEXT") != Stopped || strings.Contains(out.String(), old) {
		t.Fatalf("the moved project at the gate: %v\n%s", err, out)
	}
	review := value(t, out, "REVIEW")
	if _, err := os.Stat(filepath.Join(p.Dir, review)); err != nil || filepath.IsAbs(review) || !strings.Contains(value(t, out, "MESSAGE"), "Review "+review+".") {
		t.Errorf("the plan to review is not named from the project's root: %v\n%s", err, out)
	}
}
