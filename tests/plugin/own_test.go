package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
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
			brief := w.brief(w.Batches[1][0])
			_, read, _ := strings.Cut(brief, "## Read first\n")
			read, missed, _ := strings.Cut(read, "## Not delivered\n")
			if strings.Count(read, "/reviews/") != reviews {
				t.Errorf("the writer's brief does not list the delivered reviews:\n%s", brief)
			}
			if missing != "" && !strings.Contains(missed, "review: 2 of 3 workers delivered; these did not:\n\n- security (review_2): audit-reviewer review_2 wrote no review at .flowstate/specs/") {
				t.Errorf("the writer's brief does not say which review was not delivered, and why:\n%s", brief)
			}
		})
	}
}

// TestRunYourOwnCommandAfterAFormatChange: the formats of /audit's
// states are changed in its definition alone (reviews as JSON with a
// typed field and values, the summary as markdown with sections), and
// its agent files are left as `flowstate new command` wrote them: each
// worker writes what its brief's template shows, and the workflow
// completes with every file taken by the new formats' checks.
func TestRunYourOwnCommandAfterAFormatChange(t *testing.T) {
	w := newWorld(t, fakeAgents{})
	w.flowstate("new", "command", "audit")
	agents := map[string][]byte{}
	for _, name := range []string{"audit-reviewer", "audit-writer"} {
		agents[name] = w.read(filepath.Join(".claude", "agents", name+".md"))
	}
	def := filepath.Join(".claude", "flows", "audit.json")
	changed := string(w.read(def))
	for path, value := range map[string]any{
		"work.review.format":      "json",
		"work.review.output":      "reviews/{n:3}_{item}.json",
		"work.review.fields":      []any{"lens", map[string]any{"name": "verdict", "values": []string{"ship", "hold"}}, map[string]any{"name": "notes", "type": "array"}},
		"work.summarize.format":   "markdown",
		"work.summarize.sections": []string{"Overview", "## Change first"},
	} {
		var err error
		if changed, err = sjson.Set(changed, path, value); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"work.review.aggregate", "work.review.artifact", "work.summarize.artifact"} {
		changed, _ = sjson.Delete(changed, path)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, def), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := w.follow(w.projectCommand("audit", "the login handler"), map[string]string{})
	if err != nil || !strings.Contains(out, "NEXT=done") {
		t.Fatalf("/audit after its formats changed: %v\n%s", err, out)
	}
	for i := range 3 {
		if got := w.flowstate("checkpoint-get", fmt.Sprintf("supervisor_state.review_workers.workers.%d.metadata.verdict", i)); got != "ship" {
			t.Errorf("reviewer %d's verdict is %q, want the brief's first value", i+1, got)
		}
	}
	if got := gjson.Get(w.flowstate("checkpoint-get", "supervisor_state.summarize_workers.workers.0.metadata.sections"), "@keys").Raw; got != `["Change first","Overview"]` {
		t.Errorf("the summary's sections kept: %s", got)
	}
	for name, was := range agents {
		if now := w.read(filepath.Join(".claude", "agents", name+".md")); string(now) != string(was) {
			t.Errorf("agents/%s.md changed", name)
		}
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

// TestRunYourLowLevelCommandResumed: /three-reviewers (the low-level
// example) with two reviewers of three delivering nothing stops, naming
// `/three-reviewers --resume ID`; run so in a new session, its start
// block finds the workflow again and only those two reviewers run. Its
// start block run twice answers as it did.
func TestRunYourLowLevelCommandResumed(t *testing.T) {
	w := newWorld(t, fakeAgents{Missing: "Lens: correctness|Lens: security"})
	w.OwnKeys = map[string]bool{"REQUEST": true, "LENS": true, "REVIEW": true, "WORKER_COUNT": true, "SUMMARY": true}
	if err := os.CopyFS(filepath.Join(w.Dir, ".claude"), os.DirFS(filepath.Join(testenv.RepoRoot(), "examples", "three-reviewers", ".claude"))); err != nil {
		t.Fatal(err)
	}
	_, err := w.follow(w.projectCommand("three-reviewers", "the login handler"), map[string]string{})
	id := gjson.Get(w.flowstate("sm-status", "--json"), "workflow_id").String()
	if err == nil || !strings.Contains(err.Error(), "run /three-reviewers --resume "+id+" to re-run the others") {
		t.Fatalf("/three-reviewers with one reviewer of three delivering: %v", err)
	}
	w.Agents.Missing = ""
	for i, e := range w.Env {
		if strings.HasPrefix(e, "CLAUDE_CODE_SESSION_ID=") {
			w.Env[i] = "CLAUDE_CODE_SESSION_ID=another-session"
		}
	}
	before := len(w.Invoked)
	out, err := w.follow(w.projectCommand("three-reviewers", "--resume "+id), map[string]string{})
	if err != nil || !strings.Contains(out, "NEXT=done") {
		t.Fatalf("/three-reviewers --resume %s: %v\n%s", id, err, out)
	}
	var again []string
	for _, inv := range w.Invoked[before:] {
		again = append(again, strings.SplitN(inv.Prompt, "\n", 2)[0])
	}
	if strings.Join(again, " ") != "Lens: correctness Lens: security" {
		t.Errorf("the resume ran %q, want the two reviewers that did not deliver", again)
	}
	if got := w.flowstate("sm-status"); !strings.Contains(got, "WORKFLOW_ID="+id) || !strings.Contains(got, "CURRENT_STATE=complete") {
		t.Errorf("sm-status after the resume:\n%s", got)
	}
	if n := strings.Count(w.flowstate("list"), "three-reviewers-"); n != 1 {
		t.Errorf("%d workflows, want the one resumed", n)
	}
}
