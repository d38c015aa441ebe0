package hook

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// preToolUse runs before every Agent call and every file write (see
// guardWrite).
func (h handler) preToolUse() {
	if field, ok := fileTools[h.pl.ToolName]; ok {
		h.guardWrite(field)
		return
	}
	h.foreground()
}

// foreground runs before every Agent call. Claude Code 2.1.328 runs a
// subagent in the background unless the call passes run_in_background:
// false, and a model that copies a task block as written leaves it out;
// the next bash block would then check files no worker has written yet.
// So for flowstate's own agents it answers with the call's input,
// run_in_background set to false (updatedInput replaces the whole
// input), and records the launch and the worker it is for.
func (h handler) foreground() {
	if h.pl.ToolName != "Agent" && h.pl.ToolName != "Task" { // Task: the tool's name before 2.1.63
		return
	}
	in := h.pl.ToolInput
	if !gjson.ValidBytes(in) || !gjson.ParseBytes(in).IsObject() {
		return
	}
	agent, ours := orchestrate.OwnAgent(gjson.GetBytes(in, "subagent_type").String())
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
	h.record(agentrun.Launch, agent, gjson.GetBytes(in, "prompt").String())
}

// subagent records an agent's start or stop (kind) in its workflow; a
// stop is attributed to the worker whose artifact path the agent's prompt
// gives, read from the agent's transcript.
func (h handler) subagent(kind string) {
	agent, ours := orchestrate.OwnAgent(h.pl.AgentType)
	if !ours {
		return
	}
	prompt := ""
	if kind == agentrun.Stop {
		prompt = h.stoppedPrompt()
	}
	h.record(kind, agent, prompt)
}

// record appends one agent event to the session's workflow; the
// classifier, which runs before there is one, is recorded in the
// session's run instead.
func (h handler) record(kind, agent, prompt string) {
	if h.p == nil || h.session == "" || store.ValidID(h.session) != nil {
		return
	}
	if agent == orchestrate.Classifier {
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
	w := h.workflow()
	if w == nil {
		return
	}
	worker := ""
	if prompt != "" {
		worker = orchestrate.WorkerFor(w, prompt)
	}
	agentID := h.pl.AgentID
	if kind == agentrun.Launch {
		agentID = "" // a PreToolUse inside a subagent carries the caller's id
	}
	f := agentrun.Fields(h.session, agentID, agent, worker)
	if t := agentTranscript(h.pl.SessionTranscript, agentID); kind == agentrun.Start && t != "" {
		f["transcript"] = t // status reads what a running agent spent so far
	}
	err := w.Update(func(tx *store.Tx) error {
		tx.Event(kind, f)
		return nil
	})
	if err != nil {
		h.l.printf("%s: %v", kind, err)
	}
}

// workflow is the session's current workflow while it is active, or
// cancelled (its agents at work when a person cancelled it finish, and
// are recorded); nil otherwise. Only the session's own pointer counts:
// another session's workflow is never touched.
func (h handler) workflow() *store.Workflow {
	id, err := h.p.SessionWorkflow(h.session)
	if err != nil || id == "" {
		return nil
	}
	if s, ok := h.p.Summary(id); !ok || !s.Active() && s.Status != checkpoint.Cancelled {
		return nil
	}
	w, err := h.p.Workflow(id)
	if err != nil {
		return nil
	}
	return w
}

// maxTranscriptHead bounds what is read of an agent's transcript: its
// first line, the prompt, is a few kilobytes.
const maxTranscriptHead = 256 << 10

// stoppedPrompt is the prompt of the agent that stopped: the first line
// of its transcript holds it, the way Claude Code 2.1.328 writes them
// ({"type":"user","message":{"content":...}}). Its final answer, which
// names the artifact (REPORT_CREATED: path), stands in when the
// transcript cannot be read.
func (h handler) stoppedPrompt() string {
	if h.pl.TranscriptPath != "" {
		head, err := fsx.ReadPrefix(h.pl.TranscriptPath, maxTranscriptHead)
		if err == nil {
			line, _, _ := bytes.Cut(head, []byte("\n"))
			content := gjson.GetBytes(line, "message.content")
			if content.Type == gjson.String {
				return content.String()
			}
			text := ""
			for _, b := range content.Array() {
				text += b.Get("text").String() + "\n"
			}
			if text != "" {
				return text
			}
		}
	}
	return h.pl.LastMessage
}
