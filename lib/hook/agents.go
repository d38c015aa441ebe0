package hook

import (
	"encoding/json"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// preToolUse runs before every Agent call, every file write (see
// guardWrite), every Bash call and every read of an agent file (see
// permit.go).
func (h handler) preToolUse() {
	if h.endCancelled() {
		return
	}
	if field, ok := fileTools[h.pl.ToolName]; ok || h.unreadable {
		h.guardWrite(field)
		return
	}
	if !worthLooking(h.pl) {
		return // an agent's own Bash call or read: nothing of flowstate's
	}
	switch h.pl.ToolName {
	case "Bash":
		h.permitBash()
	case "Read":
		h.permitRead()
	case workflowTool:
		h.permitWorkflow()
	default:
		h.foreground()
	}
}

// foreground runs before every Agent call. Claude Code 2.1.328 runs a
// subagent in the background unless the call passes run_in_background:
// false, and a model that copies a task block as written leaves it out;
// the next bash block would then check files no worker has written yet.
// So for the agents of the session's workflow (orchestrate.Recognize:
// by type, or a general-purpose agent told to follow one's file) it
// answers with the call's input, run_in_background set to false
// (updatedInput replaces the whole input), and records the launch and the
// worker it is for. So too the call's isolation: a worker the last plan
// handed out to run in a worktree of its own gets isolation "worktree"
// (a model that dropped the line would let it write over the others'),
// and every other agent of the workflow none (its sub-supervisor, a
// worker of a batch that shares the tree: a worktree nobody merges
// would lose its work). Agents not the workflow's are never touched.
func (h handler) foreground() {
	if h.pl.ToolName != "Agent" && h.pl.ToolName != "Task" { // Task: the tool's name before 2.1.63
		return
	}
	in := h.pl.ToolInput
	if !gjson.ValidBytes(in) || !gjson.ParseBytes(in).IsObject() {
		return
	}
	prompt := gjson.GetBytes(in, "prompt").String()
	k, ours := orchestrate.Recognize(h.p, h.session, gjson.GetBytes(in, "subagent_type").String(), prompt, h.pl.Cwd)
	if !ours {
		return
	}
	if updated, changed, err := foregroundInput(in, k.Isolated); err != nil {
		h.l.printf("pre-tool-use: %v", err)
	} else if changed {
		h.answer(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse",
			"updatedInput":  json.RawMessage(updated),
		}})
	}
	h.record(agentrun.Launch, k)
}

// foregroundInput is an Agent call's input for one of the workflow's
// agents: run_in_background false, and isolation "worktree" for an
// isolated worker and none for any other; changed is false when the
// input says so already.
func foregroundInput(in []byte, isolated bool) (out []byte, changed bool, err error) {
	out = in
	if gjson.GetBytes(out, "run_in_background").Type != gjson.False {
		if out, err = sjson.SetBytes(out, "run_in_background", false); err != nil {
			return in, false, err
		}
		changed = true
	}
	switch iso := gjson.GetBytes(out, "isolation"); {
	case isolated && iso.String() != machine.IsolationWorktree:
		out, err = sjson.SetBytes(out, "isolation", machine.IsolationWorktree)
		changed = true
	case !isolated && iso.Exists():
		out, err = sjson.DeleteBytes(out, "isolation")
		changed = true
	}
	if err != nil {
		return in, false, err
	}
	return out, changed, nil
}

// subagent records an agent's start or stop (kind) in its workflow; a
// stop is attributed to the worker whose artifact path the agent's prompt
// gives, read from the agent's transcript (only in a session whose
// command runs a workflow or asks for the classifier). A start carries no prompt: a
// general-purpose agent is known then by the launch it answers.
func (h handler) subagent(kind string) {
	var k orchestrate.Known
	var ours bool
	if kind == agentrun.Stop {
		k, ours = orchestrate.RecognizeAgent(h.p, h.session, h.pl.AgentType, h.pl.AgentID, sync.OnceValue(h.stoppedPrompt), h.pl.Cwd)
	} else {
		k, ours = orchestrate.RecognizeStart(h.p, h.session, h.pl.AgentType)
	}
	if kind == agentrun.Stop {
		defer h.stepUsage()
	}
	if !ours {
		return
	}
	h.record(kind, k)
	if wt := h.worktree(); kind == agentrun.Stop && wt != "" && k.Worker != "" && k.Output != "" {
		// SubagentStop runs before Claude Code keeps or removes the
		// worktree: an artifact left there would be a change that keeps
		// it, or, in a directory the person's .gitignore ignores, be
		// removed with it.
		if err := orchestrate.Bring(h.p, wt, k.Output); err != nil {
			h.l.printf("%s: %v", kind, err)
		}
	}
}

// worktree is the git worktree of the project the agent of the hook's
// payload works in (its cwd), "" when it works in the project's tree.
func (h handler) worktree() string {
	if h.p == nil || h.pl.AgentID == "" {
		return ""
	}
	return worktree.Of(h.p.Dir, h.pl.Cwd)
}

// record appends one agent event to the agent's workflow; the
// classifier, which runs before there is one, is recorded in the
// session's run instead.
func (h handler) record(kind string, k orchestrate.Known) {
	if k.Workflow == nil {
		now := h.env.Now
		err := orchestrate.UpdateRun(h.p, h.session, func(r *orchestrate.Run) bool {
			switch {
			case kind == agentrun.Stop && workflowAgent(h.pl.TranscriptPath) && len(r.Early) < 16:
				// A workflow script's classifier: no Agent call of the
				// main transcript shows what it spent.
				r.ClassifierStopped = now
				r.Early = append(r.Early, orchestrate.Early{ID: h.pl.AgentID, Type: k.Name, Transcript: h.pl.TranscriptPath, Started: r.ClassifierLaunched, Stopped: now})
			case kind == agentrun.Stop:
				r.ClassifierStopped = now
			case r.ClassifierLaunched.After(r.ClassifierStopped):
				return false // its launch, seen by PreToolUse, is on record
			default:
				// A launch, or a start whose launch PreToolUse did not see.
				r.ClassifierLaunched = now
			}
			return true
		})
		if err != nil {
			h.l.printf("%s: %v", kind, err)
		}
		return
	}
	agentID, output := h.pl.AgentID, ""
	if kind == agentrun.Launch {
		agentID = "" // a PreToolUse inside a subagent carries the caller's id
		output = k.Output
	}
	ev := agentrun.Event{Session: h.session, AgentID: agentID, AgentType: k.Name, WorkerID: k.Worker, Output: output,
		Generic: k.Generic && kind != agentrun.Stop}
	if kind != agentrun.Launch {
		ev.Worktree = h.worktree()
	}
	if kind == agentrun.Start {
		ev.Transcript = h.startedTranscript(agentID)
	}
	f := ev.Fields()
	err := k.Workflow.Update(func(tx *store.Tx) error {
		tx.Event(kind, f)
		return nil
	})
	if err != nil {
		h.l.printf("%s: %v", kind, err)
	}
}

// stoppedPrompt is the prompt of the agent that stopped, from its
// transcript (usage.Prompt). Its final answer, which names the artifact
// (REPORT_CREATED: path), stands in when the transcript cannot be read.
func (h handler) stoppedPrompt() string {
	if p, ok := transcriptPrompt(h.pl.TranscriptPath); ok {
		return p
	}
	return h.pl.LastMessage
}

// transcriptPrompt is the prompt of the agent whose transcript is at
// path (usage.Prompt); ok is false when it cannot be read yet.
func transcriptPrompt(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	head, err := fsx.ReadPrefix(path, usage.MaxPromptHead)
	if err != nil {
		return "", false
	}
	return usage.Prompt(head)
}
