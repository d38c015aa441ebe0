package standin

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/classify"
)

// Knobs steer a scenario. They may depend only on what the stand-in sees in
// the conversation, never on files in the project.
type Knobs struct {
	// Classification is what the workflow-classifier agent answers; nil gives
	// DefaultClassification.
	Classification *Classification
	// FirstClassification is what the classifier writes the first time it
	// classifies, as it is (a malformed answer, or the original design's
	// CLASSIFICATION_COMPLETE form); later it writes Classification.
	FirstClassification string
	// FailTestRuns makes the first N test-results files the test-specialist
	// writes (counted over the server's lifetime) report failing tests.
	FailTestRuns int
	// MissingWorker: a subagent whose prompt contains this text writes none of
	// its files but still answers its completion signal.
	MissingWorker string
	// SlowAgent names a persona (e.g. "implementation-executor") whose every
	// request waits SlowDelay before it is answered.
	SlowAgent string
	SlowDelay time.Duration
	// EditSource: an implementation-executor also writes a source file of
	// the person's project (src/<its topic>.go), after its report, as
	// real implementers edit the code: Claude Code lets it or refuses it
	// by the person's permission mode and rules, never by flowstate's.
	EditSource bool
	// Edits: a worker whose topic holds an edit's Topic (an
	// implementation-executor's "Phase 2:", a reviewer's "security")
	// reads the edit's file, after its report, and changes in it the
	// first of the edit's Old texts the file holds to the New beside it,
	// with the Edit tool: two phases of one wave edit one file apart, or
	// the same lines, and a phase run again on a tree that holds another
	// phase's change finds another Old. An isolated worker edits its
	// worktree's copy; a MissingWorker makes its edits (half work) and
	// writes no report.
	Edits []Edit
	// Stray: a worker whose topic holds Stray.Topic also runs a shell
	// command that writes Stray.Path (absolute), as a worker that writes
	// outside its worktree; once per server.
	Stray Stray
	// Drift makes the main thread deviate from the protocol as real models
	// do.
	Drift Drift
	// PluginDir is where the plugin under test is (its agents/ holds the
	// agent files): what a model that launches agents as general-purpose
	// (Drift.GeneralPurpose) must know to name an agent file. Claude Code
	// never shows it to the model, so the scenario tells it.
	PluginDir string
}

// Edit is one implementer's change of a file (Knobs.Edits): Path is
// relative to the agent's working directory, Pairs are old, new, old,
// new, ...: the first old text the file holds is changed.
type Edit struct {
	Topic string
	Path  string
	Pairs []string
}

// Stray is a shell write outside the worker's worktree (Knobs.Stray).
type Stray struct {
	Topic, Path string
}

// Drift is how the main thread deviates from the protocol; each switch is
// independent.
type Drift struct {
	// Background: Agent calls leave run_in_background out, which Claude
	// Code 2.1.328 takes as "run in the background", and a task block's
	// isolation too: a model that copies only a call's type, description
	// and prompt.
	Background bool
	// Twice: every bash block is run twice in a row, as a model does when
	// an output looked odd or was cut.
	Twice bool
	// StopEvery: the main thread ends its turn after every N tool calls,
	// saying the work is under way; sent back by a Stop hook, it goes to
	// the section the hook's reason names.
	StopEvery int
	// CompactAfter: the answer after N tool calls of the main thread
	// reports a context so large that Claude Code compacts the
	// conversation (once per server); the model then knows only what the
	// compacted conversation holds and goes to the section the hooks'
	// context names.
	CompactAfter int
	// SelfWrite: after a task block, the main thread writes with the
	// Write tool the files of each worker it launched that wrote nothing
	// (Knobs.MissingWorker), "to finish the job", before its next bash
	// block; a refusal does not stop it.
	SelfWrite bool
	// SkipBlock: the main thread passes over one bash block it should
	// run, the first the Skip aims at (once per server), and goes on
	// with the next step in document order.
	SkipBlock Skip
	// GeneralPurpose: every Agent call (of the main thread and of
	// sub-supervisors) is sent as subagent_type "general-purpose" with
	// a prompt that begins "Read and follow the instructions in
	// <agent file>", as the original bash system wrote its Task blocks;
	// the subagent reads that file with the Read tool and acts as the
	// agent it describes.
	GeneralPurpose bool
	// ParaphraseArgs: the first Workflow call (once per server) sends
	// its args with the launch id cut short, as a model that copies the
	// printed JSON carelessly; refused, it goes where the refusal says.
	ParaphraseArgs bool
}

// Skip aims Drift.SkipBlock at a bash block: the first one that meets
// every condition set. The zero Skip skips nothing.
type Skip struct {
	// AfterAgents: a block right after a task block's agents returned
	// (in /coordinate the classified start, in /orchestrate and
	// /workflow-resume a verify).
	AfterAgents bool
	// Containing: a block whose text contains this ("--classified",
	// "phase-verify").
	Containing string
}

func (k Skip) set() bool { return k != Skip{} }

// aims reports whether block, run right after agents returned or not,
// is the one to skip.
func (k Skip) aims(block string, afterAgents bool) bool {
	return k.set() && (!k.AfterAgents || afterAgents) && strings.Contains(block, k.Containing)
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

func (k Skip) String() string {
	name := "skip"
	if k.AfterAgents {
		name += "-after-agents"
	}
	if slug := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(k.Containing), "-"), "-"); slug != "" {
		name += "-" + slug
	}
	return name
}

// String names the drift for test names and logs.
func (d Drift) String() string {
	var parts []string
	if d.Background {
		parts = append(parts, "background")
	}
	if d.Twice {
		parts = append(parts, "twice")
	}
	if d.StopEvery > 0 {
		parts = append(parts, fmt.Sprintf("stop-every-%d", d.StopEvery))
	}
	if d.CompactAfter > 0 {
		parts = append(parts, fmt.Sprintf("compact-after-%d", d.CompactAfter))
	}
	if d.SelfWrite {
		parts = append(parts, "self-write")
	}
	if d.SkipBlock.set() {
		parts = append(parts, d.SkipBlock.String())
	}
	if d.GeneralPurpose {
		parts = append(parts, "general-purpose")
	}
	if d.ParaphraseArgs {
		parts = append(parts, "paraphrased-args")
	}
	if len(parts) == 0 {
		return "protocol"
	}
	return strings.Join(parts, "+")
}

// Classification is the workflow-classifier's JSON (command protocol,
// section 6): the very type flowstate parses it into, so the two agree.
type Classification = classify.Classification

// DefaultClassification is answered when Knobs.Classification is nil.
var DefaultClassification = Classification{
	WorkflowType:       "research-and-plan",
	Confidence:         0.9,
	ResearchComplexity: 2,
	ResearchTopics:     []string{"Existing patterns", "Design options"},
	Reasoning:          "stand-in default classification",
}
