package orchestrate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The workflow engine runs a command's definition as a Claude Code
// workflow: the command's first block prints what to launch, the model
// makes one Workflow call with it, and the saved workflow's script, a
// loop that decides nothing, asks flowstate for each step through a step
// agent whose StructuredOutput call the PreToolUse hook answers
// (RunStep). A launch is the session's record of one such call: what was
// printed, whether the hook let it through, its Claude Code task, the
// steps it ran and how it ended, for the block after it (Launched) and
// for the hooks. Everything else, the workflow's state, is where the
// steps engine keeps it.

// Engines a session's command runs on (Run.Engine).
const (
	EngineSteps    = "steps"
	EngineWorkflow = "workflow"
)

// The sections of a command that the workflow engine jumps to: its
// Workflow call, the block after it, and the steps engine's way on when
// Claude Code refuses the call as unavailable.
const (
	LaunchSection   = "launch"
	LaunchedSection = "launched"
	StepsSection    = "steps"
)

// Launch is one launch of the session's workflow as a Claude Code
// workflow.
type Launch struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"` // the saved workflow, as the Workflow tool takes it
	Args    string    `json:"args"` // its args, compact JSON, as printed
	Printed time.Time `json:"printed"`
	// Granted is when the PreToolUse hook let the Workflow call through;
	// Task and Run are Claude Code's task and run ids, once it launched.
	Granted time.Time `json:"granted,omitzero"`
	Task    string    `json:"task,omitempty"`
	Run     string    `json:"run,omitempty"`
	// Stepped is when its script's first step reached flowstate, Steps
	// how many did.
	Stepped time.Time `json:"stepped,omitzero"`
	Steps   int       `json:"steps,omitempty"`
	// Ended is when it ended: its last step answered (End), or Claude
	// Code's notification said it ended (Notified, its status).
	Ended    time.Time  `json:"ended,omitzero"`
	End      *LaunchEnd `json:"end,omitempty"`
	Notified string     `json:"notified,omitempty"`
	// Warnings are what its steps told the person, for the block after
	// it to print.
	Warnings []string `json:"warnings,omitempty"`
	// Reported is when the block after it printed how it ended.
	Reported time.Time `json:"reported,omitzero"`
}

// LaunchEnd is what the last step of a launch answered: the lines the
// steps engine's last block would print (done, or a person holds the
// workflow), or its error and exit code.
type LaunchEnd struct {
	Pairs kv.Pairs `json:"pairs,omitempty"`
	Error string   `json:"error,omitempty"`
	Code  int      `json:"code,omitempty"`
}

// Early is an agent of a workflow script to measure later: its classifier,
// which ran before the workflow existed (the hooks record into a
// workflow's events), or a step agent, whose answer Claude Code writes to
// its transcript after its SubagentStop.
type Early struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Transcript string    `json:"transcript"`
	Started    time.Time `json:"started,omitzero"`
	Stopped    time.Time `json:"stopped"`
}

// maxEarly bounds the agents a run record keeps to measure (a step or
// two at a time, the workflow's start aside).
const maxEarly = 16

// RecordEarly keeps, in the session's run record, an agent to measure
// later.
func RecordEarly(p *store.Project, session string, a Early) error {
	return UpdateRun(p, session, func(r *Run) bool {
		if len(r.Early) >= maxEarly {
			return false
		}
		r.Early = append(r.Early, a)
		return true
	})
}

// TakeEarly hands out, once, the agents the session's run kept to
// measure, with its workflow, once that exists.
func TakeEarly(p *store.Project, session string) (w *store.Workflow, early []Early, err error) {
	run, ok := ReadRun(p, session)
	if !ok || len(run.Early) == 0 {
		return nil, nil, nil
	}
	if w, err = p.Workflow(run.Workflow); err != nil {
		return nil, nil, nil // not yet
	}
	err = UpdateRun(p, session, func(r *Run) bool {
		early, r.Early = r.Early, nil
		return len(early) > 0
	})
	return w, early, err
}

// launchArgs are the args of a launch: ids, nothing the model could
// garble at length.
type launchArgs struct {
	Workflow string `json:"workflow"`
	Launch   string `json:"launch"`
}

// maxWarnings bounds the warnings a launch keeps (each one line).
const maxWarnings = 16

// running reports whether the launch's script may be at work: launched
// (or stepping) and not ended.
func (l *Launch) running() bool {
	return l != nil && l.Ended.IsZero() && (l.Task != "" || !l.Stepped.IsZero())
}

// Running reports whether the session's command has a launch at work:
// its model waits for Claude Code's notification, and nothing may push
// it on meanwhile.
func (r Run) Running() bool { return r.Engine == EngineWorkflow && r.Launch.running() }

// Unreported reports whether the session's launch ended and the block
// after it has not said how yet: the command is not done for its model,
// whatever the workflow's status.
func (r Run) Unreported() bool {
	return r.Engine == EngineWorkflow && r.Launch != nil && !r.Launch.Ended.IsZero() && r.Launch.Reported.IsZero()
}

// ReportedAt is when the block after the session's launch printed how it
// ended, zero before: the command's last turn, after its workflow
// finished, is part of its spend.
func (r Run) ReportedAt() time.Time {
	if r.Engine != EngineWorkflow || r.Launch == nil {
		return time.Time{}
	}
	return r.Launch.Reported
}

// newLaunchID is a launch's id: random, so that a launch printed again
// after one ended is another.
func newLaunchID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// launchOutput is what a block prints for the model to launch l.
func launchOutput(l *Launch) Output {
	var out Output
	out.add("WORKFLOW_NAME", l.Name)
	out.add("WORKFLOW_ARGS", l.Args)
	out.add("NEXT", LaunchSection)
	return out
}

// launch prints the session's launch of workflow id through the saved
// workflow flow: the one printed before while it has not ended (a block
// run again prints the same launch), else a new one. The session's run
// record then runs on the workflow engine.
func launch(p *store.Project, session, id, flow string) (Output, error) {
	var l *Launch
	err := UpdateRun(p, session, func(r *Run) bool {
		r.Engine = EngineWorkflow
		if r.Launch != nil && r.Launch.Ended.IsZero() && r.Workflow == id && r.Launch.Name == flow {
			l = r.Launch
			return true
		}
		r.Workflow = id
		l = newLaunch(id, flow, p.Now())
		r.Launch = l
		return true
	})
	if err == nil && l == nil {
		err = fail.Usagef("no Claude Code session records workflow %s's command, so it cannot be launched as a Claude Code workflow; run the command again", id)
	}
	if err != nil {
		return Output{}, err
	}
	return launchOutput(l), nil
}

// newLaunch is a new launch of workflow id through flow.
func newLaunch(id, flow string, now time.Time) *Launch {
	lid := newLaunchID()
	args, _ := json.Marshal(launchArgs{Workflow: id, Launch: lid}) // two strings always marshal
	return &Launch{ID: lid, Name: flow, Args: string(args), Printed: now.UTC()}
}

// WorkflowCall is a Workflow tool call's input as the PreToolUse hook
// reads it.
type WorkflowCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// Script, ScriptPath and Resume are the tool's other ways to run:
	// never what flowstate printed.
	Script     string `json:"script"`
	ScriptPath string `json:"scriptPath"`
	Resume     string `json:"resumeFromRunId"`
}

// Judge says whether call is the launch l printed, and if not why, for
// the model: the block to run again. ours is false for a call of another
// saved workflow, which is the person's business.
func (l *Launch) Judge(call WorkflowCall) (ok, ours bool, why string) {
	if l == nil || call.Name != l.Name {
		return false, false, ""
	}
	again := fmt.Sprintf(`run the "## %s" block again and call Workflow once with exactly the name and args it prints`, LaunchedSection)
	switch {
	case !l.Ended.IsZero():
		return false, true, fmt.Sprintf("flowstate: this launch of %s has ended; %s.", l.Name, again)
	case !l.Granted.IsZero():
		return false, true, fmt.Sprintf(`flowstate: workflow %s is launched already (launch %s); do not launch it again: end your turn and wait for its notification, then run the "## %s" block.`, l.workflow(), l.ID, LaunchedSection)
	case call.Script != "" || call.ScriptPath != "" || call.Resume != "":
		return false, true, fmt.Sprintf("flowstate: launch %s by its name and args only, not with a script or a resume; %s.", l.Name, again)
	case !sameArgs(call.Args, l.Args):
		return false, true, fmt.Sprintf("flowstate: the args of this Workflow call are not the ones flowstate printed (%s); %s.", l.Args, again)
	}
	return true, true, ""
}

// workflow is the workflow id l's args name.
func (l *Launch) workflow() string {
	var a launchArgs
	_ = json.Unmarshal([]byte(l.Args), &a)
	return a.Workflow
}

// sameArgs reports whether got, a Workflow call's args (an object, or a
// string holding one, which Claude Code parses), are printed's.
func sameArgs(got json.RawMessage, printed string) bool {
	var s string
	if json.Unmarshal(got, &s) == nil {
		got = json.RawMessage(strings.TrimSpace(s))
	}
	var a, b map[string]any
	dec := json.NewDecoder(bytes.NewReader(got))
	if dec.Decode(&a) != nil || dec.More() || json.Unmarshal([]byte(printed), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// GrantLaunch decides, under the project lock, a Workflow call of the
// session's main thread: allowed (and recorded as granted) when it is
// the launch flowstate printed and not launched yet, refused with why
// when it is a call of that saved workflow in any other form; ours is
// false for any other call, which flowstate leaves to the person.
func GrantLaunch(p *store.Project, session string, call WorkflowCall) (ok, ours bool, why string, err error) {
	err = UpdateRun(p, session, func(r *Run) bool {
		if r.Engine != EngineWorkflow {
			return false
		}
		ok, ours, why = r.Launch.Judge(call)
		if ok {
			r.Launch.Granted = p.Now().UTC()
		}
		return ok
	})
	return ok, ours, why, err
}

// LaunchStarted records Claude Code's task and run ids of the session's
// granted launch (PostToolUse of its Workflow call).
func LaunchStarted(p *store.Project, session, name, task, run string) error {
	return UpdateRun(p, session, func(r *Run) bool {
		l := r.Launch
		if l == nil || l.Name != name || l.Granted.IsZero() || l.Task != "" {
			return false
		}
		l.Task, l.Run = task, run
		return true
	})
}

// LaunchNotified records, from Claude Code's task notification in the
// session (the text UserPromptSubmit gets), that the session's launch
// ended, when its last step did not say so: a script that failed, was
// stopped, or whose steps flowstate never answered.
func LaunchNotified(p *store.Project, session, text string) error {
	task, status := notificationTag(text, "task-id"), notificationTag(text, "status")
	if task == "" || status == "" {
		return nil
	}
	return UpdateRun(p, session, func(r *Run) bool {
		l := r.Launch
		if l == nil || l.Task != task || l.Notified != "" {
			return false
		}
		l.Notified = status
		if l.Ended.IsZero() {
			l.Ended = p.Now().UTC()
		}
		return true
	})
}

// notificationTag is the text of <tag>...</tag> in a task notification.
func notificationTag(text, tag string) string {
	_, rest, ok := strings.Cut(text, "<"+tag+">")
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(rest, "</"+tag+">")
	if !ok || len(v) > 256 {
		return ""
	}
	return strings.TrimSpace(v)
}

// OnWorkflowEngine answers a steps engine's phase step (phase-plan,
// phase-verify) of a session whose command runs its workflow as a Claude
// Code workflow: the script runs those steps, and a model that runs them
// too would hand the same workers out twice. It sends the model to the
// block after the launch. ok is false for any other session.
func OnWorkflowEngine(p *store.Project, session string) (out Output, ok bool) {
	r, found := ReadRun(p, session)
	if !found || r.Engine != EngineWorkflow {
		return out, false
	}
	out.warn(note, "workflow %s runs as a Claude Code workflow, whose script runs its phases: run the \"## %s\" block instead", r.Workflow, LaunchedSection)
	out.add("NEXT", LaunchedSection)
	return out, true
}

// record notes a step of l's script, whose answer was out and err: its
// warnings, and, for a final step (done, stopped, failed), how the
// launch ended.
func (l *Launch) record(out Output, err error, final bool, now time.Time) {
	l.Steps++
	for _, w := range out.Warnings {
		if len(l.Warnings) < maxWarnings {
			l.Warnings = append(l.Warnings, kv.OneLine(w.Text))
		}
	}
	if !final {
		return
	}
	l.Ended = now.UTC()
	l.End = &LaunchEnd{Pairs: out.Pairs}
	if err != nil {
		l.End = &LaunchEnd{Error: kv.OneLine(err.Error()), Code: fail.Code(err)}
	}
}
