package orchestrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// withTopics starts a workflow of session s1 in scope whose classifier
// found topics.
func withTopics(t *testing.T, scope string, topics ...string) (*store.Project, *store.Workflow) {
	t.Helper()
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: scope, Description: "auth", Session: "s1"})
	if err := w.Update(func(tx *store.Tx) error {
		return set(tx, "state_machine.classification.research_topics", topics)
	}); err != nil {
		t.Fatal(err)
	}
	return p, w
}

// researchWith starts a research-only workflow of session s1 with topics
// and plans it.
func researchWith(t *testing.T, topics ...string) (*store.Project, *store.Workflow, Output) {
	t.Helper()
	p, w := withTopics(t, "research-only", topics...)
	out, err := Plan(w, Options{Supervisor: true}) // the workers, as a sub-supervisor (or a flat phase) gets them
	if err != nil {
		t.Fatal(err)
	}
	return p, w, out
}

// deliver writes the reports of the workers numbered in ok, and records
// every worker's agent as launched and stopped, as the hooks would.
func deliver(t *testing.T, w *store.Workflow, out Output, n int, ok ...int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("research_%d", i)
		agentEvent(t, w, agentrun.Launch, "s1", "", "research-specialist", id)
		agentEvent(t, w, agentrun.Stop, "s1", "a"+id, "research-specialist", id)
	}
	for _, i := range ok {
		write(t, outputPath(t, out, i), report)
	}
}

// TestPartialFailureGoesOn: three of four workers delivered; the
// workflow goes on with their aggregate, the failure recorded and
// warned about; a resume asked to retry it runs that worker alone.
func TestPartialFailureGoesOn(t *testing.T) {
	p, w, out := researchWith(t, "a", "b", "c", "d")
	deliver(t, w, out, 4, 1, 3, 4)
	got, err := Verify(w, Options{})
	if err != nil || value(t, got, "NEXT") != "done" {
		t.Fatalf("verify: %v\n%s", err, got)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0].Text, "finished without workers research_2 (research)") ||
		!strings.Contains(got.Warnings[0].Text, "--retry-failed") {
		t.Errorf("warnings %q", got.Warnings)
	}
	doc, _ := w.ReadCheckpoint()
	for path, want := range map[string]string{
		"status":                               "complete",
		"phase_data.research.partial_failures": `["research_2"]`,
		"supervisor_state.research_supervisor.aggregated_metadata.topics_researched":  "3",
		"supervisor_state.research_supervisor.aggregated_metadata.partial_failures.#": "1",
		"error_state.last_error": "",
	} {
		if g := gjson.GetBytes(doc, path); g.String() != want && g.Raw != want {
			t.Errorf("%s = %s, want %s", path, g.Raw, want)
		}
	}
	// The user wants Beta after all.
	resumed, err := Resume(p, ResumeRequest{RetryFailed: true, ID: w.ID}, store.Selector{Session: "s1"}, Options{})
	if err != nil || value(t, resumed, "NEXT") != "supervised" {
		t.Fatalf("resume --retry-failed: %v\n%s", err, resumed)
	}
	if sup, err := Plan(w, Options{Supervisor: true}); err != nil || value(t, sup, "WORKER_COUNT") != "1" || value(t, sup, "TOPIC_1") != "b" {
		t.Errorf("the retry hands out %v\n%s, want b alone", err, sup)
	}
	// The same block run twice answers the same, found without its ID
	// through the session.
	again, err := Resume(p, ResumeRequest{RetryFailed: true}, store.Selector{Session: "s1"}, Options{})
	if err != nil || again.String() != resumed.String() {
		t.Errorf("a repeated resume --retry-failed: %v\n%s\nwant\n%s", err, again, resumed)
	}
}

// TestRetryWithNothingFailedIsRefused: a workflow whose workers all
// delivered has nothing to run again.
func TestRetryWithNothingFailedIsRefused(t *testing.T) {
	p, w, out := researchWith(t, "a", "b")
	deliver(t, w, out, 2, 1, 2)
	if got, err := Verify(w, Options{}); err != nil || value(t, got, "NEXT") != "done" {
		t.Fatalf("verify: %v\n%s", err, got)
	}
	_, err := Resume(p, ResumeRequest{RetryFailed: true, ID: w.ID}, store.Selector{Session: "s1"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no accepted failures") {
		t.Errorf("retry of a workflow with nothing failed: %v, want it refused", err)
	}
}

// TestTooFewDeliveredStops: with fewer than two workers delivering, a
// phase stops as before, naming the missing report.
func TestTooFewDeliveredStops(t *testing.T) {
	_, w, out := researchWith(t, "a", "b")
	deliver(t, w, out, 2, 1)
	if _, err := Verify(w, Options{}); err == nil || !strings.Contains(err.Error(), "research_2 wrote no research report") {
		t.Fatalf("verify: %v", err)
	}
	doc, _ := w.ReadCheckpoint()
	if s := gjson.GetBytes(doc, "error_state.failed_state").String(); s != "research" {
		t.Errorf("failed_state %q, want research", s)
	}
}

// TestInvalidReportSetAside: a report that fails its check is renamed to
// <path>.rejected, named in the failure, so that the worker run again
// can write a new file (Claude Code's Write refuses to replace a file the
// agent has not read); the resumed plan hands the same path out again.
func TestInvalidReportSetAside(t *testing.T) {
	p, w, out := researchWith(t, "a", "b")
	deliver(t, w, out, 2, 2)
	bad := outputPath(t, out, 1)
	write(t, bad, "no sections at all\n")
	_, err := Verify(w, Options{})
	if err == nil || !strings.Contains(err.Error(), "is not a valid research report") || !strings.Contains(err.Error(), "kept as "+shown(t, p, bad)+".rejected") {
		t.Fatalf("verify: %v", err)
	}
	if _, err := os.Lstat(bad); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the rejected report is still at %s: %v", bad, err)
	}
	if b, err := os.ReadFile(bad + ".rejected"); err != nil || string(b) != "no sections at all\n" {
		t.Errorf("the rejected report was not kept: %q, %v", b, err)
	}
	resumed, err := Resume(p, ResumeRequest{ID: w.ID}, store.Selector{Session: "s1"}, Options{})
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, resumed)
	}
	again, err := Plan(w, Options{Supervisor: true})
	if err != nil || value(t, again, "TOPIC_1") != "a" || outputPath(t, again, 1) != bad {
		t.Errorf("the worker run again: %v\n%s, want a at %s", err, again, bad)
	}
}

// TestRetryOfAnEarlierState: research went on without research_2 and the
// plan was made on the other three reports. A retry goes back to
// research keeping its three reports, runs research_2 alone, and makes
// the plan again on all four; the plan taken back stays in the history.
func TestRetryOfAnEarlierState(t *testing.T) {
	p, w := withTopics(t, "research-and-plan", "a", "b", "c", "d")
	out, err := Plan(w, Options{Supervisor: true})
	if err != nil {
		t.Fatal(err)
	}
	deliver(t, w, out, 4, 1, 3, 4)
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "AGENT") != "plan-architect" {
		t.Fatalf("verify of research: %v\n%s", err, out)
	}
	const plan = "# Plan\n\n### Phase 1: A\ndependencies: []\n"
	write(t, outputPath(t, out, 1), plan)
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "NEXT") != "done" ||
		len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Text, "--retry-failed") {
		t.Fatalf("verify of the plan: %v\n%s%v", err, out, out.Warnings)
	}

	// Found without its ID, though the failures are not in its state.
	resumed, err := Resume(p, ResumeRequest{RetryFailed: true}, store.Selector{Session: "s2"}, Options{})
	if err != nil || value(t, resumed, "NEXT") != "supervised" {
		t.Fatalf("resume --retry-failed: %v\n%s", err, resumed)
	}
	doc, _ := w.ReadCheckpoint()
	for path, want := range map[string]string{
		"status":                      "in_progress",
		"state_machine.current_state": "research",
		"rewinds.0.kind":              "retry",
		"rewinds.0.states|@ugly":      `["research","plan"]`,
		"supervisor_state.research_supervisor.workers.#(status==\"completed\")#.worker_id|@ugly": `["research_1","research_3","research_4"]`,
		"phase_data.research.partial_failures":                                                   "",
	} {
		if g := gjson.GetBytes(doc, path); g.String() != want && g.Raw != want {
			t.Errorf("after the retry %s = %s, want %s", path, g.Raw, want)
		}
	}
	if again, err := Resume(p, ResumeRequest{RetryFailed: true}, store.Selector{Session: "s2"}, Options{}); err != nil || again.String() != resumed.String() {
		t.Errorf("a repeated resume --retry-failed: %v\n%s\nwant\n%s", err, again, resumed)
	}
	sup, err := Plan(w, Options{Supervisor: true})
	if err != nil || value(t, sup, "WORKER_COUNT") != "1" || value(t, sup, "TOPIC_1") != "b" {
		t.Fatalf("the retry hands out %v\n%s, want b alone", err, sup)
	}
	write(t, outputPath(t, sup, 1), report)
	agentEvent(t, w, agentrun.Launch, "s2", "", "research-specialist", "research_2")
	agentEvent(t, w, agentrun.Stop, "s2", "b2", "research-specialist", "research_2")
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "AGENT") != "plan-architect" || !strings.HasSuffix(value(t, out, "OUTPUT_1"), ".v2.md") {
		t.Fatalf("verify of the retried research: %v\n%s", err, out)
	}
	write(t, outputPath(t, out, 1), plan)
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "NEXT") != "done" || len(out.Warnings) != 0 {
		t.Fatalf("verify of the new plan: %v\n%s%v", err, out, out.Warnings)
	}
	doc, _ = w.ReadCheckpoint()
	if n := gjson.GetBytes(doc, "supervisor_state.research_supervisor.aggregated_metadata.topics_researched").Int(); n != 4 {
		t.Errorf("the plan was made on %d reports, want 4", n)
	}
}
