package orchestrate

import (
	"os"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/store"
)

// TestUnstarted: a phase step the model runs after skipping the classified
// start does that start's work: it asks the classifier again while none
// ran, creates the workflow from the classification once it is written,
// and plans its first phase; run again, it is the ordinary step.
func TestUnstarted(t *testing.T) {
	p := project(t)
	if _, ok, err := Unstarted(p, "s1", "", Options{}); ok || err != nil {
		t.Fatalf("a session without a command: %v, %v", ok, err)
	}
	out, err := Start(p, Request{Command: "coordinate", Description: "study auth", Session: "s1"})
	if err != nil || value(t, out, "NEXT") != "classify" {
		t.Fatalf("start: %v\n%s", err, out)
	}
	class := value(t, out, "CLASSIFICATION_PATH")
	// The classifier was skipped too: it is asked for again.
	p.Now = func() time.Time { return time.Now().Add(time.Minute) }
	out, ok, err := Unstarted(p, "s1", "", Options{})
	if !ok || err != nil || value(t, out, "NEXT") != "classify" || len(out.Warnings) == 0 {
		t.Fatalf("before the classifier ran: %v, %v\n%s", ok, err, out)
	}
	cls := `{"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 2, "research_topics": ["a", "b"], "reasoning": "r"}`
	if err := os.WriteFile(class, []byte(cls), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok, err = Unstarted(p, "s1", "", Options{})
	if !ok || err != nil || value(t, out, "NEXT") != "work" || value(t, out, "WORKER_COUNT") != "2" {
		t.Fatalf("with the classification written: %v, %v\n%s", ok, err, out)
	}
	if _, ok, err := Unstarted(p, "s1", "", Options{}); ok || err != nil {
		t.Errorf("once the workflow exists the step is the ordinary one: %v, %v", ok, err)
	}
	for sel, want := range map[store.Selector]bool{{Session: "s1"}: false, {Session: "s2"}: true, {}: false, {Session: "s2", Flag: "x"}: false} {
		if out, ok := NoStart(p, sel); ok != want || ok && value(t, out, "NEXT") != "start" {
			t.Errorf("NoStart(%+v) = %v\n%s; want %v (s1 started its command, s2 none, no session is no Claude Code)", sel, ok, out, want)
		}
	}
}
