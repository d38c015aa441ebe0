package orchestrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// step is a phase step of a command (plan, verify).
type step func(*store.Workflow, Options) (Output, error)

// guarded runs a phase step unless a person holds the workflow (it waits
// for approval, is paused, or was cancelled): then the step does nothing
// and ends the command cleanly, saying why and what the user runs next
// (NEXT=stopped). A step that brings the workflow to an approval gate
// ends the same way. This is where every step of a command meets a
// person's decision, whichever shell it came from.
// In a sub-supervisor, signal says that the step ends the agent with its
// signal line (phase-verify).
func guarded(w *store.Workflow, o Options, signal bool, run step) (Output, error) {
	// A workflow that reached its spend limit is held here, as at a gate.
	if err := sm.CheckBudget(w, o.Limits); err != nil && fail.Code(err) != fail.Waiting {
		return Output{}, err
	}
	if out, ok, err := held(w, o, signal); ok || err != nil {
		return out, err
	}
	if out, ok, err := leftOver(w, o, signal); ok || err != nil {
		return out, err
	}
	if signal {
		if out, ok, err := rewound(w, o); ok || err != nil {
			return out, err
		}
	}
	out, err := run(w, o)
	if fail.Code(err) == fail.Waiting {
		if held, ok, herr := held(w, o, signal); ok || herr != nil {
			return held, herr
		}
	}
	return out, err
}

// leftOver answers a sub-supervisor's step when the agent running it was
// started in an earlier state than the workflow's: a supervisor that ran
// on in the background while the command moved on. It hands nothing out
// (phase-plan) and ends with a signal saying so (phase-verify), so that it
// never acts on a state it was not launched for.
func leftOver(w *store.Workflow, o Options, signal bool) (out Output, ok bool, err error) {
	if !o.Supervisor || o.Agent == "" {
		return out, false, nil
	}
	data, err := w.ReadEvents()
	if err != nil {
		return out, false, err
	}
	if found, current := agentrun.Bound(agentrun.Parse(data), o.Agent); !found || current {
		return out, false, nil
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return out, false, err
	}
	why := fmt.Sprintf("this sub-supervisor was started in an earlier state of workflow %s, which is in state %s now; it has nothing more to do",
		w.ID, checkpoint.ViewOf(doc).CurrentState)
	if signal {
		b, _ := json.Marshal(map[string]string{"error": why})
		out.Signal = supervisor.SupervisorFailed + ": " + string(b)
		return out, true, nil
	}
	out.warn(note, "%s", why)
	out.add("WORKER_COUNT", 0)
	out.add("NEXT", "verify")
	return out, true, nil
}

// Stopped is the section a command ends at when a person holds its
// workflow.
const Stopped = "stopped"

// held reports whether a person holds the workflow, and the output that
// ends the step. In a sub-supervisor the step hands no more work out
// (phase-plan) or ends the agent (phase-verify's signal line), and the
// command's own next step stops.
func held(w *store.Workflow, o Options, signal bool) (out Output, ok bool, err error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return out, false, err
	}
	status := checkpoint.ViewOf(doc).Status
	if status != checkpoint.Cancelled && !checkpoint.Held(status) {
		return out, false, nil
	}
	msg := HeldMessage(w, doc)
	if o.Supervisor {
		if signal {
			b, _ := json.Marshal(map[string]string{"error": msg})
			out.Signal = supervisor.SupervisorFailed + ": " + string(b)
			return out, true, nil
		}
		out.add("WORKER_COUNT", 0)
		out.add("NEXT", "verify")
		return out, true, nil
	}
	out.add("WORKFLOW_ID", w.ID)
	out.add("STATUS", status)
	switch h := checkpoint.ViewOf(doc).Hold; {
	case h != nil && h.Kind == checkpoint.HoldApproval:
		out.add("WAITING_FOR", "approval to enter "+h.State)
		if review := reviewOf(w, doc, h); len(review) > 0 {
			out.add("REVIEW", strings.Join(review, " "))
		}
	case h != nil && h.Kind == checkpoint.HoldBudget:
		out.add("WAITING_FOR", "a person to allow more spending: "+h.Message)
	}
	out.add("MESSAGE", msg)
	out.add("NEXT", Stopped)
	return out, true, nil
}

// reviewOf lists what a person approves at a gate: the artifacts of the
// state workflow w waits in, from the project's root.
func reviewOf(w *store.Workflow, doc []byte, h *checkpoint.Hold) []string {
	var out []string
	for _, a := range gjson.GetBytes(doc, checkpoint.PhaseData(h.From, checkpoint.PhaseArtifacts)).Array() {
		out = append(out, fromProject(w, a.String()))
	}
	return out
}

// HeldMessage is what the user is told about workflow w, whose checkpoint
// is doc, while a person holds it or once it was cancelled: why, what to
// review, and what to run; one line, whatever the checkpoint holds. ""
// when nobody holds it.
func HeldMessage(w *store.Workflow, doc []byte) string {
	cv := checkpoint.ViewOf(doc)
	h := cv.Hold
	if h == nil {
		return ""
	}
	id := w.ID
	var msg string
	switch h.Kind {
	case checkpoint.HoldApproval:
		review := ""
		if r := reviewOf(w, doc, h); len(r) > 0 {
			review = " Review " + strings.Join(r, " ") + "."
		}
		msg = fmt.Sprintf("Workflow %s waits for your approval to enter %s: %s.%s Approve with %s [NOTE] (in a terminal: flowstate approve --workflow %s), then continue with %s; or send it back to %s with %s REASON (flowstate reject --workflow %s --reason TEXT).",
			id, h.State, strings.TrimSuffix(h.Message, "."), review, Slash(w.P, "workflow-approve"), id, ResumeHint(w), sm.RejectsTo(cv, h), Slash(w.P, "workflow-reject"), id)
	case checkpoint.HoldPause:
		msg = fmt.Sprintf("Workflow %s %s. Continue it with %s (in a terminal: flowstate unpause --workflow %s).", id, h.Sentence(), ResumeHint(w), id)
	case checkpoint.HoldBudget:
		msg = fmt.Sprintf("Workflow %s %s. Nothing runs on until you allow more: %s --budget AMOUNT [NOTE] (in a terminal: flowstate approve --budget AMOUNT --workflow %s; AMOUNT in tokens, 500k, or money, 5USD), then continue with %s; or cancel it (flowstate cancel --workflow %s --reason TEXT).",
			id, h.Sentence(), Slash(w.P, "workflow-approve"), id, ResumeHint(w), id)
	default:
		msg = fmt.Sprintf("Workflow %s %s; it is finished: start a new one to go on.", id, h.Sentence())
	}
	return kv.OneLine(msg)
}

// ResumeHint is how the user continues workflow w in Claude Code: the
// plugin's /workflow-resume for a workflow of the built-in definition, its
// own command's --resume for a user's definition and, by the docs'
// convention, for one on the low-level API.
func ResumeHint(w *store.Workflow) string { return resumeWith(w, "") }

// RetryHint is how the user runs again the workers whose failure workflow
// w went on without.
func RetryHint(w *store.Workflow) string { return resumeWith(w, "--retry-failed") }

// resumeWith is ResumeHint with an option of resume's.
// Each file is read once: the checkpoint, and the definition kept with
// the workflow (none for the built-in one).
func resumeWith(w *store.Workflow, option string) string {
	doc, err := w.ReadCheckpoint()
	custom, merr := w.MachineJSON()
	var m *machine.Machine
	if err == nil && merr == nil && custom != nil {
		m, err = machine.Parse(custom)
	}
	cv := checkpoint.ViewOf(doc)
	switch {
	case err != nil || merr != nil || builtIn(custom, doc):
		return strings.TrimSpace(Slash(w.P, ResumeCommand) + " " + option)
	case cv.Agents != nil || len(m.Work) == 0:
		// A command on the low-level API continues its workflow by its id
		// when it takes --resume (docs/writing-an-orchestrator.md).
		return "/" + cv.Command + " --resume " + w.ID
	}
	return strings.Join(strings.Fields("/"+cv.Command+" --resume "+option+" "+w.ID), " ")
}

// BuiltIn reports whether w runs the built-in definition, which
// flowstate's own commands (/workflow-resume among them) continue: not a
// user's definition, nor a command on the low-level API.
func BuiltIn(w *store.Workflow) bool {
	custom, _ := w.MachineJSON()
	if custom != nil {
		return false
	}
	doc, err := w.ReadCheckpoint()
	return err != nil || builtIn(nil, doc)
}

// builtIn is BuiltIn of a workflow already read: custom is the
// definition kept with it (nil for none), doc its checkpoint.
func builtIn(custom, doc []byte) bool {
	return custom == nil && checkpoint.ViewOf(doc).Agents == nil
}

// Slash is how the user types flowstate's own command name in Claude
// Code: /name where an install put it in the project's .claude/commands
// (./install.sh, flowstate install), else the plugin's /flowstate:name.
func Slash(p *store.Project, name string) string {
	if fi, err := os.Lstat(filepath.Join(p.Dir, ".claude", "commands", name+".md")); err == nil && fi.Mode().IsRegular() {
		return "/" + name
	}
	return "/flowstate:" + name
}

// rewound answers a verify whose workflow a person rewound since the
// command's last plan (flowstate rewind from another shell): the workers
// it would check were taken back, and the state it is in now has handed
// nothing out yet. The command's verify plans again in the same step; a
// sub-supervisor ends, and the command's next step plans.
func rewound(w *store.Workflow, o Options) (out Output, ok bool, err error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return out, false, err
	}
	cv := checkpoint.ViewOf(doc)
	state := cv.CurrentState
	if cv.Rewinds == 0 || cv.LastRewind.To != state || gjson.GetBytes(doc, checkpoint.PhaseData(state, planKeys[0])).Exists() {
		return out, false, nil
	}
	why := fmt.Sprintf("workflow %s was rewound to %s; its work is handed out again", w.ID, state)
	if o.Supervisor {
		b, _ := json.Marshal(map[string]string{"error": why})
		out.Signal = supervisor.SupervisorFailed + ": " + string(b)
		return out, true, nil
	}
	out, err = Plan(w, o)
	out.Warnings = append([]Warning{{Text: why}}, out.Warnings...)
	return out, true, err
}

// StartedAfterCancel reports whether the agent with agentID, one of w's,
// started after a person cancelled w (or no start of it is on record):
// such an agent is ended before it does anything, while one at work at
// the cancel finishes and is recorded.
func StartedAfterCancel(w *store.Workflow, agentID string) bool {
	if s, ok := w.P.Summary(w.ID); !ok || s.Status != checkpoint.Cancelled {
		return false
	}
	data, err := w.ReadEvents()
	if err != nil {
		return false
	}
	var cancelled time.Time
	for line := range bytes.Lines(data) {
		if bytes.Contains(line, []byte(`"event":"cancel"`)) {
			var ev struct {
				TS time.Time `json:"ts"`
			}
			if json.Unmarshal(line, &ev) == nil {
				cancelled = ev.TS
			}
		}
	}
	start, ok := agentrun.StartOf(agentrun.Parse(data), agentID)
	return !ok || !start.TS.Before(cancelled)
}
