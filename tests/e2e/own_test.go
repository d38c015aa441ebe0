//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// A user's own commands in the real CLI, as the docs teach them to be
// written: nothing of them in Go or in the plugin. The flowstate plugin
// only brings the binary and the hooks; the commands and agents are the
// project's own, in its .claude/.

// TestYourOwnCommand: /audit, written by `flowstate new command audit`
// (a definition, a phase-loop command and its agents in the project's
// .claude), fans out three reviewers in one message, then its writer
// reads their reviews; every worker is recorded and the workflow
// completes, under every drift the hooks hold the model through.
func TestYourOwnCommand(t *testing.T) { underEachMode(t, testYourOwnCommand) }

func testYourOwnCommand(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{})
	s.shell("new", "command", "audit")
	s.Permissions = asPeopleRun
	r := s.run("/audit the login handler")
	s.expectNoDenials()
	// start (which plans the reviewers), the three reviewers, the verify
	// that plans the writer, the writer, the verify that finishes.
	s.expectCalls(7, 3)

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "command": "audit", "state_machine.current_state": "complete",
		"error_state.last_error": nil, "supervisor_state.review_workers.aggregated_metadata.topics_researched": 3})
	w.expectWorkers("review_workers", map[string]string{"review_1": "completed", "review_2": "completed", "review_3": "completed"})
	w.expectWorkers("summarize_workers", map[string]string{"summarize_1": "completed"})
	w.expectEvents("initialize review summarize complete", map[string]int{"worker": 4, "agent_launch": 4, "error": 0})
	s.expectAgents(map[string]int{"audit-reviewer": 3, "audit-writer": 1})
	if got := s.batches("audit-reviewer"); len(got) != 1 || got[0] != 3 {
		t.Errorf("the reviewers were launched in messages of %v, want all three in one", got)
	}
	expectOutput(t, r, "FINAL_STATE=complete", "ARTIFACT_COUNT=4")
}

// TestYourCommandFromTheDocs: /triage FILE..., a newcomer's command as
// docs/writing-an-orchestrator.md has it written (its block run as it is:
// `flowstate new command triage`, then a definition of its own where a
// reviewer per file writes JSON with typed fields and a writer sums them
// up in markdown with sections), its agent files as new wrote them, which
// know nothing of those formats: each worker writes what its brief says,
// and the workflow completes under every drift, in Claude Code's default
// permission mode, asking the person nothing.
func TestYourCommandFromTheDocs(t *testing.T) { underEachMode(t, testYourCommandFromTheDocs) }

func testYourCommandFromTheDocs(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{})
	s.docBlock("docs/writing-an-orchestrator.md", "cat > .claude/flows/triage.json")
	agents := map[string]string{}
	for _, name := range []string{"triage-reviewer", "triage-writer"} {
		agents[name] = s.read(".claude/agents/" + name + ".md")
	}
	s.Permissions = asPeopleRun
	r := s.run("/triage src/a.go src/b.go")
	s.expectNoDenials() // the workers' reads of their brief and writes of their file ask nobody
	// start (which plans the reviewers), the two reviewers, the verify
	// that plans the writer, the writer, the verify that finishes.
	s.expectCalls(6, 3)

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "command": "triage", "state_machine.current_state": "complete",
		"error_state.last_error": nil,
		"supervisor_state.analyse_workers.workers.0.metadata.severity":           "low",
		"supervisor_state.analyse_workers.workers.1.metadata.issues|@ugly":       "[]",
		"supervisor_state.summarize_workers.workers.0.metadata.sections|@keys|#": 2})
	w.expectWorkers("analyse_workers", map[string]string{"analyse_1": "completed", "analyse_2": "completed"})
	w.expectWorkers("summarize_workers", map[string]string{"summarize_1": "completed"})
	s.expectAgents(map[string]int{"triage-reviewer": 2, "triage-writer": 1})
	for name, was := range agents {
		if s.read(".claude/agents/"+name+".md") != was {
			t.Errorf("agents/%s.md changed during the run", name)
		}
	}
	expectOutput(t, r, "FINAL_STATE=complete", "ARTIFACT_COUNT=3")
}

// docBlock runs, in the project, the bash block of the doc (a path from
// the repository's root) that holds text, as tests/docs runs it: a
// newcomer's setup, taken from the docs alone.
func (s *scenario) docBlock(doc, text string) {
	s.t.Helper()
	md, err := os.ReadFile(filepath.Join(repoRoot, doc))
	if err != nil {
		s.t.Fatal(err)
	}
	blocks, err := protocol.Blocks(string(md))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range blocks {
		if b.Info != "bash" || !strings.Contains(b.Body, text) {
			continue
		}
		cmd := exec.Command("bash", "-c", b.Body)
		cmd.Dir = s.Project
		cmd.Env = testenv.Env(s.Home, "CLAUDE_PROJECT_DIR="+s.Project,
			"PATH="+filepath.Dir(flowstateBin(s.t))+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			s.t.Fatalf("%s:%d: %v\n%s", doc, b.Line, err, out)
		}
		return
	}
	s.t.Fatalf("%s has no bash block with %q", doc, text)
}

// TestYourLowLevelCommand: /three-reviewers (examples/three-reviewers, in
// the project's .claude) uses only sm-init (declaring no agents: sm-init
// reads them from its task blocks), state-append, supervisor-record and
// aggregate, sections named after its states. The hooks hold it as they
// hold the phase loop: its reviewers run in the
// foreground and are recorded, a model that stops early or is compacted
// is sent back to the section of the workflow's state.
func TestYourLowLevelCommand(t *testing.T) { underEachDrift(t, testYourLowLevelCommand) }

func testYourLowLevelCommand(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{})
	if err := os.CopyFS(filepath.Join(s.Project, ".claude"), os.DirFS(filepath.Join(repoRoot, "examples", "three-reviewers", ".claude"))); err != nil {
		t.Fatal(err)
	}
	r := s.run("/three-reviewers the login handler")
	s.expectCalls(6, 6)

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "command": "three-reviewers", "state_machine.current_state": "complete",
		"state_machine.agents|@ugly": `["file-reviewer"]`, "phase_data.review.summary.topics_researched": 3})
	w.expectWorkers("reviews", map[string]string{"correctness": "completed", "security": "completed", "readability": "completed"})
	w.expectEvents("initialize review complete", map[string]int{"agent_launch": 3, "agent_stop": 3})
	s.expectAgents(map[string]int{"file-reviewer": 3})
	expectOutput(t, r, "NEXT=done")
}

// TestYourCommandsSelfWritten: in both of a user's commands the security
// reviewer delivers nothing and the main thread writes its review itself
// (the self-write drift, plainly and with every block run twice). The
// write guard refuses it, since the workflow handed that file out (in
// /audit by its plan, in /three-reviewers by the task block's prompt);
// two reviews of three are enough for both, so each completes with the
// missing one recorded as failed, never as the model's forgery. /audit
// --resume --retry-failed then runs that reviewer alone, and the writer
// again on all three reviews.
func TestYourCommandsSelfWritten(t *testing.T) {
	for _, d := range []standin.Drift{{SelfWrite: true}, {SelfWrite: true, Twice: true}} {
		t.Run("audit/"+d.String(), func(t *testing.T) { testYourCommandSelfWritten(t, steps(d)) })
		t.Run("three-reviewers/"+d.String(), func(t *testing.T) { testYourLowLevelCommandSelfWritten(t, steps(d)) })
	}
}

func testYourCommandSelfWritten(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{MissingWorker: "Topic: security"})
	s.shell("new", "command", "audit")
	s.run("/audit the login handler")

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete",
		"phase_data.review.partial_failures|@ugly":                              `["review_2"]`,
		"supervisor_state.review_workers.aggregated_metadata.topics_researched": 2})
	w.expectWorkers("review_workers", map[string]string{"review_1": "completed", "review_2": "failed", "review_3": "completed"})
	if _, err := os.Stat(filepath.Join(s.Project, ".flowstate", "specs", w.ID, "reviews", "002_security.md")); err == nil {
		t.Errorf("the security review exists, though its reviewer wrote none and the main thread's write was refused")
	}

	s.restartModel(standin.Knobs{}, "retry")
	s.run("/audit --resume --retry-failed")
	var reviewers []agentCall
	for _, c := range s.calls() {
		if c.Persona == "audit-reviewer" {
			reviewers = append(reviewers, c)
		}
	}
	if len(reviewers) != 1 || !strings.HasPrefix(reviewers[0].Prompt, "Topic: security\n") {
		t.Errorf("the retry ran the reviewers %+v, want the security reviewer alone", reviewers)
	}
	s.expectAgents(map[string]int{"audit-reviewer": 1, "audit-writer": 1})
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "rewinds.0.kind": "retry",
		"supervisor_state.review_workers.aggregated_metadata.topics_researched": 3})
	w.expectWorkers("review_workers", map[string]string{"review_1": "completed", "review_2": "completed", "review_3": "completed"})
	w.expectWorkers("summarize_workers", map[string]string{"summarize_1": "completed"})
}

func testYourLowLevelCommandSelfWritten(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{MissingWorker: "Lens: security"})
	if err := os.CopyFS(filepath.Join(s.Project, ".claude"), os.DirFS(filepath.Join(repoRoot, "examples", "three-reviewers", ".claude"))); err != nil {
		t.Fatal(err)
	}
	r := s.run("/three-reviewers the login handler")

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete",
		"phase_data.review.summary.topics_researched": 2})
	w.expectWorkers("reviews", map[string]string{"correctness": "completed", "security": "failed", "readability": "completed"})
	expectOutput(t, r, "NEXT=done")
}
