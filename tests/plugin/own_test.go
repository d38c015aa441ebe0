package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownCommand writes /audit into the world's project with `flowstate new
// command` and parses it as Claude Code expands it with arguments.
func (w *world) ownCommand(arguments string) doc {
	w.t.Helper()
	if w.flowstate("new", "command", "audit") == "" {
		w.t.Fatal("flowstate new command wrote nothing")
	}
	return w.projectCommand("audit", arguments)
}

// projectCommand parses the project's .claude/commands/NAME.md as Claude
// Code expands it with arguments.
func (w *world) projectCommand(name, arguments string) doc {
	w.t.Helper()
	rel := filepath.Join(".claude", "commands", name+".md")
	b, err := os.ReadFile(filepath.Join(w.Dir, rel))
	if err != nil {
		w.t.Fatal(err)
	}
	d, err := parseDoc(rel, strings.ReplaceAll(string(b), "$ARGUMENTS", arguments))
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// TestRunYourOwnCommand: a command written by `flowstate new command`, no
// Go and nothing of the plugin's, runs the phase loop block by block: its
// three reviewers fan out in one batch, then its writer reads their
// reviews; every worker is recorded and the workflow completes. One
// reviewer that writes nothing is a partial failure the definition
// accepts (min_delivered 2).
func TestRunYourOwnCommand(t *testing.T) {
	for _, missing := range []string{"", "Topic: security"} {
		t.Run("missing="+missing, func(t *testing.T) {
			w := newWorld(t, fakeAgents{Missing: missing})
			out, err := w.follow(w.ownCommand("the login handler"), map[string]string{})
			if err != nil || !strings.Contains(out, "NEXT=done") {
				t.Fatalf("/audit: %v\n%s", err, out)
			}
			if got := w.agentsInvoked(); got["audit-reviewer"] != 3 || got["audit-writer"] != 1 || len(got) != 2 {
				t.Errorf("agents invoked %v, want 3 reviewers and a writer", got)
			}
			if len(w.Batches) != 2 || len(w.Batches[0]) != 3 {
				t.Errorf("batches %v: want the 3 reviewers in one message, then the writer", w.Batches)
			}
			want := "completed"
			if missing != "" {
				want = "failed"
			}
			if got := w.flowstate("checkpoint-get", "supervisor_state.review_workers.workers.1.status"); got != want {
				t.Errorf("the security reviewer is %s, want %s", got, want)
			}
			if got := w.flowstate("sm-status"); !strings.Contains(got, "CURRENT_STATE=complete") || !strings.Contains(got, "COMMAND_NAME=audit") {
				t.Errorf("sm-status:\n%s", got)
			}
			reviews := 3
			if missing != "" {
				reviews = 2
			}
			if brief := w.brief(w.Batches[1][0]); strings.Count(brief, "/reviews/") != reviews {
				t.Errorf("the writer's brief does not list the delivered reviews:\n%s", brief)
			}
		})
	}
}

// TestRunYourOwnCommandResumed: two reviewers of three deliver nothing, so
// the command stops naming their files; `/audit --resume` runs only
// those two again and completes the workflow. Run twice, the start block
// answers as it did.
func TestRunYourOwnCommandResumed(t *testing.T) {
	w := newWorld(t, fakeAgents{Missing: "Topic: correctness|Topic: security"})
	d := w.ownCommand("the login handler")
	if _, err := w.follow(d, map[string]string{}); err == nil || !strings.Contains(err.Error(), "wrote no review") {
		t.Fatalf("/audit with one reviewer of three delivering: %v", err)
	}
	w.Agents.Missing = ""
	before := len(w.Invoked)
	out, err := w.follow(w.projectCommand("audit", "--resume"), map[string]string{})
	if err != nil || !strings.Contains(out, "NEXT=done") {
		t.Fatalf("/audit --resume: %v\n%s", err, out)
	}
	var again []string
	for _, inv := range w.Invoked[before:] {
		again = append(again, inv.Agent+":"+strings.SplitN(inv.Prompt, "\n", 2)[0])
	}
	if strings.Join(again, " ") != "audit-reviewer:Topic: correctness audit-reviewer:Topic: security audit-writer:Topic: the login handler" {
		t.Errorf("the resume ran %q, want the two reviewers that did not deliver, then the writer", again)
	}
	if got := w.flowstate("sm-status"); !strings.Contains(got, "CURRENT_STATE=complete") {
		t.Errorf("sm-status after the resume:\n%s", got)
	}
}
