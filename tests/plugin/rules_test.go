package plugin

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
)

// The model sees only the command text and the agent file (never docs/),
// so each states, in its own words, the rules a model must follow. These
// tests read every command and agent file the way a model receives it.

// orchestratorRules must each be in the rules of every orchestrator
// command: the deviations real models show, one rule each.
var orchestratorRules = []string{
	"run_in_background: false",                      // Claude Code's default runs agents in the background
	"`isolation: worktree` where the block says it", // workers that would write over each other
	"Wait for every agent",                          // and moves on before they wrote anything
	"word for word",                                 // a model "improves" prompts and drops their lines
	"N = 0 means no call",                           // for_each with WORKER_COUNT=0
	"An agent's answer decides nothing",             // SUPERVISOR_FAILED or an apology is no reason to act
	"Never re-run an",                               // nor to redo the agent's work
	"only `NEXT=done` ends the command",             // NEXT=phase is no place to stop
	"without stopping, summarising or asking",       // "proceed to planning?"
	"What a block prints is for the steps after it", // failing tests read like a failure to act on
	"report its error to the user and stop",         // a failed block ends the command
	"do not look for, build or replace flowstate",   // nor is it repaired
	"If Claude Code refuses a block or an agent's edit (permission denied), stop there", // a refused step is not retried
	"in one sentence what was refused and how to allow it",                              // and the person learns what to allow
	"Run a workflow block as one Workflow call",                                         // one launch, not a script of its own
	"exactly (`args` is that JSON object)",                                              // args copied, not paraphrased
	"end your turn and wait",                                                            // the workflow runs in the background
	"continue at `## steps`",                                                            // a Workflow tool that is off
}

// supervisorRules must each be in every sub-supervisor agent.
var supervisorRules = []string{
	"run_in_background: false",
	"`isolation: worktree` where the block says it",
	"Wait for every worker",
	"word for word",
	"N = 0 means no call",
	"A worker's answer decides nothing",
	"Never re-run a worker",
	"If a block exits non-zero, or Claude Code refuses it (permission denied), your final answer is `SUPERVISOR_FAILED",
	"Do not retry it with other flags or do its work by hand",
}

// maxRulesLines keeps an orchestrator's rules to one screen.
const maxRulesLines = 24

// rulesOf is the text of a file from "Rules" to its first section.
func rulesOf(d doc) string {
	i := strings.Index(d.Body, "Rules")
	j := strings.Index(d.Body, "\n## ")
	if i < 0 || j < i {
		return ""
	}
	return d.Body[i:j]
}

// says reports whether text says phrase, however its lines are wrapped.
func says(text, phrase string) bool {
	return strings.Contains(strings.Join(strings.Fields(text), " "), phrase)
}

func TestOrchestratorsStateTheRules(t *testing.T) {
	var first string
	for _, name := range append(orchestrators, "workflow-resume") {
		d := loadDoc(t, "commands/"+name+".md")
		rules := rulesOf(d)
		for _, want := range orchestratorRules {
			if !says(rules, want) {
				t.Errorf("%s: the rules do not say %q", d.Path, want)
			}
		}
		if n := strings.Count(strings.TrimSpace(rules), "\n") + 1; n > maxRulesLines {
			t.Errorf("%s: the rules take %d lines, more than a screen (%d)", d.Path, n, maxRulesLines)
		}
		if first == "" {
			first = rules
		} else if rules != first {
			t.Errorf("%s: the rules differ from commands/%s.md's; keep one text", d.Path, orchestrators[0])
		}
	}
}

func TestSupervisorsStateTheRules(t *testing.T) {
	for _, d := range loadDocs(t, "agents") {
		if !strings.HasSuffix(d.Name(), "sub-supervisor") {
			continue
		}
		for _, want := range supervisorRules {
			if !says(d.Body, want) {
				t.Errorf("%s: does not say %q", d.Path, want)
			}
		}
	}
}

// TestArtifactFormatsAreStated: the classifier's JSON is its own, said
// in its file; every worker agent takes its file's format from the brief
// (lib/orchestrate's TestBriefStatesTheFormat), repeating no template of
// it, so that a format changed in a definition needs no agent edit.
func TestArtifactFormatsAreStated(t *testing.T) {
	d := loadDoc(t, "agents/workflow-classifier.md")
	for _, want := range []string{"exactly one of", "exactly `research_complexity`"} {
		if !says(d.Body, want) {
			t.Errorf("%s: does not say %q", d.Path, want)
		}
	}
	for _, d := range loadDocs(t, "agents") {
		if strings.HasSuffix(d.Name(), "sub-supervisor") || d.Name() == "workflow-classifier" || d.Name() == orchestrate.StepAgent {
			continue // they write no artifact (the classifier's is its JSON, stated above)
		}
		for _, want := range []string{"Write the file with the Write tool at exactly the path given", "in the format the brief's `## Format` section gives"} {
			if !says(d.Body, want) {
				t.Errorf("%s: does not say %q", d.Path, want)
			}
		}
		if strings.Contains(d.Body, "```markdown") || strings.Contains(d.Body, "```json") {
			t.Errorf("%s: repeats a template of its file's format, which the brief gives", d.Path)
		}
	}
}
