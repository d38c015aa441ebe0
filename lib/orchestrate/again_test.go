package orchestrate

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Every step a model can run twice in a row answers the same the second
// time, and a model that comes back after losing its place loses no work.

const report = "# R\n\n## Executive Summary\n\nDone.\n\n## Key Findings\n\n- one\n"

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// agentEvent records what a hook would: kind for worker (or an
// unattributed agent when worker is "").
func agentEvent(t *testing.T, w *store.Workflow, kind, session, agentID, agentType, worker string) {
	t.Helper()
	err := w.Update(func(tx *store.Tx) error {
		tx.Event(kind, agentrun.Event{Session: session, AgentID: agentID, AgentType: agentType, WorkerID: worker}.Fields())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func startedWorkflow(t *testing.T, p *store.Project, r Request) *store.Workflow {
	t.Helper()
	out, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Workflow(idOf(t, out))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestStartTwice(t *testing.T) {
	p := project(t)
	r := Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"}
	first, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Start(p, r)
	if err != nil || second.String() != first.String() {
		t.Fatalf("start again: %v\n%s\nwant\n%s", err, second, first)
	}
	if ids, _ := p.WorkflowIDs(); len(ids) != 1 {
		t.Errorf("two starts made %d workflows", len(ids))
	}
	// Another request in the same session is a new workflow.
	other, err := Start(p, Request{Command: "orchestrate", Scope: "research-only", Description: "sessions", Session: "s1"})
	if err != nil || idOf(t, other) == idOf(t, first) {
		t.Fatalf("another request: %v\n%s", err, other)
	}
}

func TestClassifiedStartTwice(t *testing.T) {
	p := project(t)
	r := Request{Command: "coordinate", Description: "compare auth", Session: "s1"}
	first, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Start(p, r)
	if err != nil || again.String() != first.String() {
		t.Fatalf("first start again: %v\n%s\nwant\n%s", err, again, first)
	}
	path := value(t, first, "CLASSIFICATION_PATH")
	write(t, path, `{"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 1, "research_topics": ["auth"], "reasoning": "r"}`)
	r.Classified = true
	created, err := Start(p, r)
	if err != nil || value(t, created, "NEXT") != "work" || !strings.Contains(path, idOf(t, created)) {
		t.Fatalf("classified start: %v\n%s", err, created)
	}
	for _, classified := range []bool{true, false} {
		r.Classified = classified
		if out, err := Start(p, r); err != nil || out.String() != created.String() {
			t.Errorf("start (classified %t) once the workflow exists: %v\n%s\nwant\n%s", classified, err, out, created)
		}
	}
}

// A first start run again after the classifier wrote its file (the model
// came back to ## start after a compaction) creates the workflow at once.
func TestStartFindsClassification(t *testing.T) {
	p := project(t)
	r := Request{Command: "coordinate", Description: "compare auth", Session: "s1"}
	first, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	write(t, value(t, first, "CLASSIFICATION_PATH"), `{"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 1, "research_topics": ["auth"], "reasoning": "r"}`)
	out, err := Start(p, r)
	if err != nil || value(t, out, "NEXT") != "work" {
		t.Fatalf("start after the classifier: %v\n%s", err, out)
	}
}

// TestClassifiedWaitsForTheClassifier: a classifier the hooks saw launched
// and not stopped is waited for, then the start says NEXT=classified.
func TestClassifiedWaitsForTheClassifier(t *testing.T) {
	p := project(t)
	r := Request{Command: "coordinate", Description: "compare auth", Session: "s1", Options: Options{Waiting: Waiting{For: 50 * time.Millisecond, Poll: 10 * time.Millisecond}}}
	if _, err := Start(p, r); err != nil {
		t.Fatal(err)
	}
	r.Classified = true
	// Asked for moments ago, the classifier may not be on record yet.
	if out, err := Start(p, r); err != nil || out.String() != "NEXT=classified\n" {
		t.Fatalf("right after the ask: %v\n%s", err, out)
	}
	later := time.Now().Add(hookGrace)
	p.Now = func() time.Time { return later }
	_, err := Start(p, r)
	if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), "wrote no classification") {
		t.Fatalf("no classifier at work and no file: %v, want the usage error", err)
	}
	Halt(p, "s1", err)
	// The halted run starts over with the first block.
	r.Classified = false
	if _, err := Start(p, r); err != nil {
		t.Fatal(err)
	}
	err = UpdateRun(p, "s1", func(run *Run) bool { run.ClassifierLaunched = later; return true })
	if err != nil {
		t.Fatal(err)
	}
	r.Classified = true
	out, err := Start(p, r)
	if err != nil || out.String() != "NEXT=classified\n" {
		t.Fatalf("classifier at work: %v\n%s", err, out)
	}
}

// throughThePlan takes a full-implementation workflow of session s1 in p
// (with a gate before implement when approve) through its research and a
// plan of two waves (phase 1: A, then 2: B), and returns what the verify
// of the plan printed.
func throughThePlan(t *testing.T, p *store.Project, approve bool) (*store.Workflow, Output) {
	t.Helper()
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "full-implementation", Description: "login", Session: "s1", ApprovePlan: approve})
	out, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, outputPath(t, out, 1), report)
	if out, err = Verify(w, Options{}); err != nil || value(t, out, "AGENT") != "plan-architect" {
		t.Fatalf("verify the research: %v\n%s", err, out)
	}
	write(t, outputPath(t, out, 1), "# Plan\n\n### Phase 1: A\ndependencies: []\n\n### Phase 2: B\ndependencies: [1]\n")
	if out, err = Verify(w, Options{}); err != nil {
		t.Fatalf("verify the plan: %v\n%s", err, out)
	}
	return w, out
}

// TestVerifyTwiceAcrossWaves: verify records wave 1 and hands out wave 2;
// run again, it must not check wave 2, which nobody has run yet, but hand
// it out again.
func TestVerifyTwiceAcrossWaves(t *testing.T) {
	w, out := throughThePlan(t, project(t), false)
	if value(t, out, "AGENT") != "implementation-executor" || value(t, out, "WORKER_COUNT") != "1" {
		t.Fatalf("implement wave 1:\n%s", out)
	}
	write(t, outputPath(t, out, 1), "# Phase 1\n\n## Executive Summary\n\nA.\n")
	// The hooks saw its agent run (and so record launches).
	agentEvent(t, w, agentrun.Launch, "s1", "", "implementation-executor", "phase_1")
	agentEvent(t, w, agentrun.Stop, "s1", "a1", "implementation-executor", "phase_1")
	first, err := Verify(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Verify(w, Options{})
	if err != nil || second.String() != first.String() {
		t.Fatalf("verify again: %v\n%s\nwant\n%s", err, second, first)
	}
	doc, _ := w.ReadCheckpoint()
	if got := gjson.GetBytes(doc, "error_state.last_error"); got.Type != gjson.Null {
		t.Errorf("verifying wave 1 twice recorded an error: %s", got)
	}
}

// TestPlanTwice: the same plan, and one write.
func TestPlanTwice(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth", Session: "s1"})
	first, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := w.ReadCheckpoint()
	second, err := Plan(w, Options{})
	if err != nil || second.String() != first.String() {
		t.Fatalf("plan again: %v\n%s\nwant\n%s", err, second, first)
	}
	after, _ := w.ReadCheckpoint()
	if string(after) != string(before) {
		t.Errorf("planning again changed the checkpoint")
	}
}

// TestPlanReconciles: a model that ran the workers and lost its place
// before verifying comes back through phase-plan, which records what
// they delivered instead of handing them out again.
func TestPlanReconciles(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-and-plan", Description: "auth", Session: "s1"})
	out, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, outputPath(t, out, 1), report)
	if out, err = Plan(w, Options{}); err != nil || value(t, out, "AGENT") != "plan-architect" {
		t.Fatalf("plan after the research report, without verify: %v\n%s", err, out)
	}
	doc, _ := w.ReadCheckpoint()
	if got := gjson.GetBytes(doc, "supervisor_state.research_supervisor.workers.0.status").String(); got != "completed" {
		t.Errorf("the research worker is %q, want completed", got)
	}
	if got := gjson.GetBytes(doc, "supervisor_state.research_supervisor.aggregated_metadata.topics_researched").Int(); got != 1 {
		t.Errorf("research not aggregated: %d topics", got)
	}
}

// TestVerifyWaitsForAgentsAtWork: a worker the hooks saw launched and not
// stopped is waited for, not failed; after the wait, NEXT=verify.
func TestVerifyWaitsForAgentsAtWork(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth", Session: "s1"})
	out, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reportPath := outputPath(t, out, 1)
	agentEvent(t, w, agentrun.Launch, "s1", "", "research-specialist", "research_1")
	agentEvent(t, w, agentrun.Start, "s1", "a1", "research-specialist", "")
	o := Options{Waiting: Waiting{For: 100 * time.Millisecond, Poll: 10 * time.Millisecond}}
	out, err = Verify(w, o)
	if err != nil || value(t, out, "NEXT") != "verify" || value(t, out, "RUNNING") != "1" {
		t.Fatalf("verify while the worker works: %v\n%s", err, out)
	}
	// Meanwhile a phase-plan hands out nothing and waits too.
	if out, err = Plan(w, o); err != nil || value(t, out, "WORKER_COUNT") != "0" || value(t, out, "NEXT") != "verify" {
		t.Fatalf("plan while the worker works: %v\n%s", err, out)
	}
	// The agent finishes during the wait: verify sees it and goes on.
	go func() {
		time.Sleep(30 * time.Millisecond)
		write(t, reportPath, report)
		agentEvent(t, w, agentrun.Stop, "s1", "a1", "research-specialist", "research_1")
	}()
	o.Waiting.For = 5 * time.Second
	if out, err = Verify(w, o); err != nil || value(t, out, "NEXT") != "done" {
		t.Fatalf("verify once the worker is done: %v\n%s", err, out)
	}
	doc, _ := w.ReadCheckpoint()
	if d := gjson.GetBytes(doc, "supervisor_state.research_supervisor.workers.0.duration_ms").Int(); d <= 0 {
		t.Errorf("duration_ms = %d, want the time between launch and stop", d)
	}
}

// TestVerifyNamesAWorkerNeverLaunched: with the hooks at work, a worker no
// Agent call was made for is named as such.
func TestVerifyNamesAWorkerNeverLaunched(t *testing.T) {
	p, w := withTopics(t, "research-only", "a", "b")
	out, err := Plan(w, Options{})
	if err != nil || value(t, out, "WORKER_COUNT") != "2" {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	write(t, outputPath(t, out, 1), report)
	agentEvent(t, w, agentrun.Launch, "s1", "", "research-specialist", "research_1")
	agentEvent(t, w, agentrun.Stop, "s1", "a1", "research-specialist", "research_1")
	_, err = Verify(w, Options{})
	if err == nil || !strings.Contains(err.Error(), "research_2 wrote no research report at "+shown(t, p, outputPath(t, out, 2))+" (no Agent call was made for it)") {
		t.Fatalf("verify: %v", err)
	}
	run, ok := ReadRun(p, "s1")
	if !ok || run.Halted != "" {
		t.Errorf("Verify itself does not halt the run (the CLI does): %+v", run)
	}
	Halt(p, "s1", err)
	if run, _ = ReadRun(p, "s1"); !strings.Contains(run.Halted, "research_2") {
		t.Errorf("Halt recorded %q", run.Halted)
	}
	// The next successful step (a resume's plan, say) clears the halt.
	if err := Progress(p, "s1"); err != nil {
		t.Fatal(err)
	}
	if run, _ = ReadRun(p, "s1"); run.Halted != "" {
		t.Errorf("a successful step left the halt: %q", run.Halted)
	}
}

// TestDelegatedPlanNamesOnlyTheSupervisor: when a sub-supervisor runs a
// state's workers, phase-plan prints what its task block uses and no
// worker values a model could launch the workers with as well.
func TestDelegatedPlanNamesOnlyTheSupervisor(t *testing.T) {
	_, w := withTopics(t, "research-only", "a", "b", "c", "d")
	out, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range out.Pairs {
		keys = append(keys, kv.Key)
	}
	if strings.Join(keys, " ") != "STATE SUPERVISOR NEXT" || value(t, out, "SUPERVISOR") != "sub-supervisor" || value(t, out, "NEXT") != "supervised" {
		t.Errorf("delegated plan:\n%s", out)
	}
	// Inside the supervisor, the workers.
	if out, err = Plan(w, Options{Supervisor: true}); err != nil || value(t, out, "WORKER_COUNT") != "4" {
		t.Errorf("the supervisor's plan: %v\n%s", err, out)
	}
}

// TestMalformedClassificationIsAskedForOnce: a classification the parser
// refuses is asked for again once, with why; asking again for the same
// file is the same ask; a second bad answer fails the start.
func TestMalformedClassificationIsAskedForOnce(t *testing.T) {
	p := project(t)
	r := Request{Command: "coordinate", Description: "compare auth", Session: "s1"}
	first, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	path := value(t, first, "CLASSIFICATION_PATH")
	write(t, path, `{"workflow_type": "research-and-plan", "confidence": "high"}`)
	r.Classified = true
	again, err := Start(p, r)
	if err != nil || value(t, again, "NEXT") != "classify" || !strings.Contains(value(t, again, "DESCRIPTION"), "refused: classification: confidence \"high\" is not a number") {
		t.Fatalf("a malformed answer: %v\n%s", err, again)
	}
	// The refused file is gone: the classifier's Write creates a new one
	// (Claude Code refuses to replace a file the agent has not read).
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused classification is still there: %v", err)
	}
	if twice, err := Start(p, r); err != nil || twice.String() != again.String() {
		t.Errorf("the same ask again: %v\n%s", err, twice)
	}
	write(t, path, `{"workflow_type": "nonsense"}`)
	if _, err := Start(p, r); fail.Code(err) != fail.Invalid {
		t.Errorf("a second malformed answer: %v, want it refused", err)
	}
}
