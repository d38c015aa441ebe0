package orchestrate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/sm"
)

// TestAgentFiles follows a session's command: the classification file
// while the classifier is asked for, then every research worker's report
// once the phase goes to its sub-supervisor, and nothing once the
// workflow is finished or for another session.
func TestAgentFiles(t *testing.T) {
	p := project(t)
	if got := AgentFiles(p, "s1"); got != nil {
		t.Errorf("before any command: %v", got)
	}
	out, err := Start(p, Request{Command: "coordinate", Description: "four topics", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	class := value(t, out, "CLASSIFICATION_PATH")
	if got := AgentFiles(p, "s1"); len(got) != 1 || got[0] != (AgentFile{Path: class, Agent: "workflow-classifier"}) {
		t.Errorf("while the classifier is asked for: %v, want %s", got, class)
	}
	cls := `{"workflow_type": "research-only", "confidence": 0.9, "research_complexity": 4, "research_topics": ["a", "b", "c", "d"], "reasoning": "r"}`
	if err := os.WriteFile(class, []byte(cls), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err = Start(p, Request{Command: "coordinate", Description: "four topics", Session: "s1", Classified: true}); err != nil {
		t.Fatal(err)
	}
	if value(t, out, "NEXT") != "supervised" {
		t.Fatalf("four topics are not supervised:\n%s", out)
	}
	id, _ := p.SessionWorkflow("s1")
	w, err := p.Workflow(id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range AgentFiles(p, "s1") {
		if f.Agent != "research-specialist" || f.Worker == "" {
			t.Errorf("%+v: want a research-specialist worker's", f)
		}
		got = append(got, filepath.Base(f.Path))
	}
	if want := []string{"001_a.md", "002_b.md", "003_c.md", "004_d.md"}; !slices.Equal(got, want) {
		t.Errorf("with the phase supervised: %v, want %v", got, want)
	}
	if got := AgentFiles(p, "s2"); got != nil {
		t.Errorf("another session: %v", got)
	}
	if err := sm.Finish(w, checkpoint.Complete); err != nil {
		t.Fatal(err)
	}
	if got := AgentFiles(p, "s1"); got != nil {
		t.Errorf("a finished workflow: %v", got)
	}
}
