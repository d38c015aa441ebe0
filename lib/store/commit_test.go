package store

import (
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
)

// TestUncommittedEvents: events naming the revision after the
// checkpoint's (a writer killed between its events and its checkpoint)
// are left out by ReadEvents and cut by the next commit, even one of
// events alone, so they never end up inside the log; events of an older
// revision (a checkpoint restored by hand) stay.
func TestUncommittedEvents(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	edit := func(tx *Tx) (err error) {
		tx.Checkpoint, err = sjson.SetBytes(tx.Checkpoint, "phase_data.x.n", 1)
		tx.Event("edited", nil)
		return err
	}
	if err := w.Update(edit); err != nil {
		t.Fatal(err)
	}
	cp, err := w.ReadCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	rev := gjson.GetBytes(cp, checkpoint.PathRevision).Int()
	if rev != 1 {
		t.Fatalf("revision %d after one edit", rev)
	}
	f, err := os.OpenFile(w.EventsPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	orphan := `{"event":"transition","ts":"2026-01-01T00:00:00Z","rev":2}` + "\n"
	if _, err := f.WriteString(orphan); err != nil {
		t.Fatal(err)
	}
	f.Close()
	events := func() string {
		b, err := w.ReadEvents()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if strings.Contains(events(), `"transition"`) {
		t.Errorf("ReadEvents shows an uncommitted event:\n%s", events())
	}
	if err := w.Update(func(tx *Tx) error { tx.Event("agent_start", nil); return nil }); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(w.EventsPath())
	if strings.Contains(string(raw), `"transition"`) || !strings.Contains(events(), `"agent_start"`) {
		t.Errorf("after an events-only commit the log is:\n%s", raw)
	}
	if got := strings.Count(events(), "\n"); got != 3 {
		t.Errorf("ReadEvents has %d lines, want init, edited and agent_start:\n%s", got, events())
	}
}
