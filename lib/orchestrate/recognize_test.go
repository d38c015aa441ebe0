package orchestrate

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestRecognizeStopReadsThePromptOnlyWhenItMatters: a stop in a session
// that runs no workflow and asks for no classifier is nobody's, and the
// agent's prompt (read from its transcript, up to 256 KiB) is not asked
// for; in a session running a workflow it is, once, and the agent is known.
func TestRecognizeStopReadsThePromptOnlyWhenItMatters(t *testing.T) {
	p := project(t)
	calls := 0
	prompt := func(text string) func() string {
		return func() string { calls++; return text }
	}
	if _, ok := RecognizeAgent(p, "s0", "general-purpose", "a0", prompt("Read agents/research-specialist.md"), ""); ok || calls != 0 {
		t.Errorf("a session with no workflow: ours %v, prompt read %d times", ok, calls)
	}

	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"})
	plan, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := RecognizeAgent(p, "s0", "general-purpose", "a0", prompt("Read agents/research-specialist.md"), ""); ok || calls != 0 {
		t.Errorf("another session's stop: ours %v, prompt read %d times", ok, calls)
	}
	k, ok := RecognizeAgent(p, "s1", "general-purpose", "a1", prompt("Write the research report to: "+outputPath(t, plan, 1)), "")
	if !ok || k.Name != "research-specialist" || k.Worker == "" || calls != 1 {
		t.Errorf("the workflow's worker: %+v, ours %v, prompt read %d times", k, ok, calls)
	}
}

// TestAgentOfNamesTheWorker: AgentOf gives the worker with the agent, so
// the usage hooks need not load the workflow again to find it.
func TestAgentOfNamesTheWorker(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"})
	plan, err := Plan(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := AgentOf(w, "flowstate:research-specialist", "Write the research report to: "+outputPath(t, plan, 1))
	if !ok || k.Name != "research-specialist" || k.Worker == "" {
		t.Errorf("AgentOf = %+v, %v; want research-specialist with its worker", k, ok)
	}
	if k, ok := AgentOf(w, "flowstate:research-specialist", "no artifact named"); !ok || k.Worker != "" {
		t.Errorf("a prompt naming no artifact: %+v, %v; want the agent, no worker", k, ok)
	}
}

// TestHandedIn: what a prompt hands its agent is read from the
// protocol's lines only: write lines, a Read first: line, a STATE= line;
// a path or a file merely mentioned is not handed.
func TestHandedIn(t *testing.T) {
	h := handedIn("Read and follow the instructions in /p/agents/x.md\n\nTopic: auth\nRead first: .flowstate/specs/w/briefs/x.md\n"+
		"Write your result to: .flowstate/specs/w/reports/001_auth.md\nAlso look at src/main.go.\nSave your notes to: /tmp/n.md.\nSTATE=research\n", "/proj", "/other")
	want := handed{writes: []string{"/proj/.flowstate/specs/w/reports/001_auth.md", "/tmp/n.md"}, brief: "/proj/.flowstate/specs/w/briefs/x.md", state: "research"}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("handedIn = %+v, want %+v", h, want)
	}
	if h := handedIn("Proofread docs/agents/audit-reviewer.md for typos, and save your notes to: src/main.go", "", "/proj"); len(h.writes) != 0 || h.brief != "" || h.state != "" {
		t.Errorf("a prompt that hands nothing: %+v", h)
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/p/.flowstate/specs/w/a.md", true},
		{"/p/.flowstate/specs/w/reports/a.md", true},
		{"/p/.flowstate/specs/w", false},
		{"/p/.flowstate/specs/w2/a.md", false},
		{"/p/.flowstate/specs/w/../w2/a.md", false},
		{"/p/src/main.go", false},
		{"/p/.flowstate/specs/w/..x.md", true},
	} {
		if got := under("/p/.flowstate/specs/w", filepath.Clean(c.path)); got != c.want {
			t.Errorf("under(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
