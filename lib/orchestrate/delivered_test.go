package orchestrate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// researchDefined starts a research-only workflow of session s1 on the
// default definition as change leaves it, with topics, and plans it as a
// flat phase (no sub-supervisor).
func researchDefined(t *testing.T, change func(w *machine.Work), topics ...string) (*store.Workflow, Output) {
	t.Helper()
	m := machine.Default()
	research := m.Work["research"]
	research.Supervisor = nil
	change(&research)
	m.Work["research"] = research
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = machine.Parse(b); err != nil {
		t.Fatal(err)
	}
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth", Session: "s1", Machine: m, MachineJSON: b})
	if err := w.Update(func(tx *store.Tx) error {
		return set(tx, "state_machine.classification.research_topics", topics)
	}); err != nil {
		t.Fatal(err)
	}
	out, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w, out
}

// TestMinDeliveredZeroAcceptsNoFailure: min_delivered 0 is "every
// worker must deliver": two of three is not enough.
func TestMinDeliveredZeroAcceptsNoFailure(t *testing.T) {
	w, out := researchDefined(t, func(w *machine.Work) { w.MinDelivered = &machine.Share{} }, "a", "b", "c")
	deliver(t, w, out, 3, 1, 3)
	if got, err := Verify(w, Options{}); err == nil || !strings.Contains(err.Error(), "research_2 wrote no research report") {
		t.Fatalf("verify with min_delivered 0 and one of three missing: %v\n%s, want it stopped", err, got)
	}
}

// TestMinDeliveredWithoutAggregate: the default min_delivered (2)
// applies to a fan-out that aggregates nothing too: two of three
// delivered, the workflow goes on without the third.
func TestMinDeliveredWithoutAggregate(t *testing.T) {
	w, out := researchDefined(t, func(w *machine.Work) { w.Aggregate = "" }, "a", "b", "c")
	deliver(t, w, out, 3, 1, 3)
	got, err := Verify(w, Options{})
	if err != nil || value(t, got, "NEXT") != "done" {
		t.Fatalf("verify with two of three delivered and no aggregate: %v\n%s, want the workflow to go on", err, got)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0].Text, "finished without workers research_2 (research)") {
		t.Errorf("warnings %q", got.Warnings)
	}
	doc, _ := w.ReadCheckpoint()
	if g := gjson.GetBytes(doc, "phase_data.research.partial_failures").Raw; g != `["research_2"]` {
		t.Errorf("partial_failures = %s", g)
	}
}

// TestMinDeliveredPercentage: "75%" of four workers is three: three of
// four delivered go on; two of four, which the default count (2) would
// take, stop.
func TestMinDeliveredPercentage(t *testing.T) {
	most := func(w *machine.Work) { w.MinDelivered = &machine.Share{N: 75, Percent: true} }
	w, out := researchDefined(t, most, "a", "b", "c", "d")
	deliver(t, w, out, 4, 1, 2, 3)
	if got, err := Verify(w, Options{}); err != nil || value(t, got, "NEXT") != "done" {
		t.Fatalf("three of four delivered with min_delivered 75%%: %v\n%s, want the workflow to go on", err, got)
	}
	w, out = researchDefined(t, most, "a", "b", "c", "d")
	deliver(t, w, out, 4, 1, 3)
	if got, err := Verify(w, Options{}); err == nil || !strings.Contains(err.Error(), "wrote no research report") {
		t.Fatalf("two of four delivered with min_delivered 75%%: %v\n%s, want it stopped", err, got)
	}
}
