package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// preToolUse runs before every Agent call, every file write (see
// guardWrite) and every Bash call (see bindAgent).
func (h handler) preToolUse() {
	if field, ok := fileTools[h.pl.ToolName]; ok {
		h.guardWrite(field)
		return
	}
	if h.pl.ToolName == "Bash" {
		h.bindAgent()
		return
	}
	h.foreground()
}

// bindAgent tells a sub-supervisor's flowstate steps which agent runs
// them: a Bash call inside a subagent carries the agent's id (Claude Code
// 2.1.328), and the call's input is given back with
// `export FLOWSTATE_AGENT_ID=<id>` before the command. phase-plan and
// phase-verify --supervisor then know the state the agent was started in,
// and a supervisor left over from an earlier state (it ran in the
// background while the command went on) acts on no later one. Only the
// sub-supervisors' own steps are touched (supervisorStep).
func (h handler) bindAgent() {
	in := h.pl.ToolInput
	cmd, ok := supervisorStep(h.pl)
	if !ok {
		return
	}
	updated, err := sjson.SetBytes(in, "command", "export "+orchestrate.AgentEnv+"="+h.pl.AgentID+"\n"+cmd) // not a checkpoint path
	if err != nil {
		h.l.printf("pre-tool-use: %v", err)
		return
	}
	h.answer(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse",
		"updatedInput":  json.RawMessage(updated),
	}})
}

// maxStepCommand bounds the Bash command searched for a supervisor's
// step: the steps are one line; a longer command is not one.
const maxStepCommand = 16 << 10

// supervisorStep is the command of a Bash call that a subagent (its id
// one agentIDs allows into a shell line) makes to run a sub-supervisor's
// step: a line or pipeline part that runs flowstate (by name, by path,
// or as $FLOWSTATE_BIN, quoted or not) with phase-plan or phase-verify
// and --supervisor among its words after it, whatever global flags come
// first (flowstate --workflow X phase-plan --supervisor). ok is false for
// any other call; the main thread's (no agent id) is never one.
func supervisorStep(pl payload) (cmd string, ok bool) {
	if pl.ToolName != "Bash" || !agentIDs().MatchString(pl.AgentID) {
		return "", false
	}
	c := gjson.GetBytes(pl.ToolInput, "command") // not a checkpoint path: the Bash tool's input
	if c.Type != gjson.String || len(c.Str) > maxStepCommand {
		return "", false
	}
	parts := strings.FieldsFunc(c.Str, func(r rune) bool { return r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')' })
	if slices.ContainsFunc(parts, isStepPart) {
		return c.Str, true
	}
	return "", false
}

// isStepPart reports whether one command of a line runs flowstate with
// phase-plan or phase-verify and --supervisor among its words after it.
func isStepPart(part string) bool {
	step, supervisor, invoked := false, false, false
	for _, word := range strings.Fields(part) {
		word = strings.Trim(word, `"'`)
		switch {
		case word == "flowstate" || strings.HasSuffix(word, "/flowstate") || word == "$FLOWSTATE_BIN" || word == "${FLOWSTATE_BIN}":
			invoked = true
		case !invoked:
		case word == "phase-plan" || word == "phase-verify":
			step = true
		case word == "--supervisor":
			supervisor = true
		}
	}
	return step && supervisor
}

// foreground runs before every Agent call. Claude Code 2.1.328 runs a
// subagent in the background unless the call passes run_in_background:
// false, and a model that copies a task block as written leaves it out;
// the next bash block would then check files no worker has written yet.
// So for the agents of the session's workflow (orchestrate.Recognize:
// by type, or a general-purpose agent told to follow one's file) it
// answers with the call's input, run_in_background set to false
// (updatedInput replaces the whole input), and records the launch and the
// worker it is for.
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
	if gjson.GetBytes(in, "run_in_background").Type != gjson.False {
		updated, err := sjson.SetBytes(in, "run_in_background", false)
		if err != nil {
			h.l.printf("pre-tool-use: %v", err)
		} else {
			h.answer(map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "PreToolUse",
				"updatedInput":  json.RawMessage(updated),
			}})
		}
	}
	h.record(agentrun.Launch, k)
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
		k, ours = orchestrate.RecognizeStop(h.p, h.session, h.pl.AgentType, h.pl.AgentID, sync.OnceValue(h.stoppedPrompt), h.pl.Cwd)
	} else {
		k, ours = orchestrate.RecognizeStart(h.p, h.session, h.pl.AgentType)
	}
	if ours {
		h.record(kind, k)
	}
}

// record appends one agent event to the agent's workflow; the
// classifier, which runs before there is one, is recorded in the
// session's run instead.
func (h handler) record(kind string, k orchestrate.Known) {
	if k.Workflow == nil {
		now := h.env.Now
		err := orchestrate.UpdateRun(h.p, h.session, func(r *orchestrate.Run) bool {
			switch {
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
	f := agentrun.Event{Session: h.session, AgentID: agentID, AgentType: k.Name, WorkerID: k.Worker, Output: output,
		Generic: k.Generic && kind != agentrun.Stop}.Fields()
	if t := agentTranscript(h.pl.SessionTranscript, agentID); kind == agentrun.Start && t != "" {
		f["transcript"] = t // status reads what a running agent spent so far
	}
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
	if h.pl.TranscriptPath != "" {
		head, err := fsx.ReadPrefix(h.pl.TranscriptPath, usage.MaxPromptHead)
		if prompt, ok := usage.Prompt(head); err == nil && ok {
			return prompt
		}
	}
	return h.pl.LastMessage
}
