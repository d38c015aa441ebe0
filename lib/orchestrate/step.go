package orchestrate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// A workflow engine's script asks flowstate for its steps: "plan" first,
// then "verify" after each wave of workers it ran. Each step is the code
// the steps engine's blocks run (Plan, Verify, and the start's for a
// workflow its classifier is still to classify), with the workflow
// engine's options, and its answer is what the command's task block
// would launch: the exact prompts, agent types and labels, expanded from
// the command's own task blocks with the values the step printed.

// Step kinds a script asks for.
const (
	StepPlan   = "plan"
	StepVerify = "verify"
)

// What a step tells the script to do next (StepResult.Next).
const (
	NextWork    = "work"    // run Workers, then ask for "verify"
	NextDone    = "done"    // the workflow is finished
	NextStopped = "stopped" // a person holds it (approval, pause, budget, cancel), or this launch is not the one to run
	NextFailed  = "failed"  // a step failed: Message says why
)

// StepAgent is the agent a script asks through: its StructuredOutput
// call is what the PreToolUse hook answers with the step.
const StepAgent = "flowstate-step"

// StepResult is a step's answer, the StructuredOutput the script gets.
type StepResult struct {
	Next    string       `json:"next"`
	State   string       `json:"state,omitempty"`
	Workers []StepWorker `json:"workers,omitempty"`
	Message string       `json:"message,omitempty"`
}

// StepWorker is one agent() call of a wave: what the command's task
// block would launch.
type StepWorker struct {
	ID        string `json:"id"`
	AgentType string `json:"agentType"`
	Label     string `json:"label"`
	Phase     string `json:"phase"`
	Prompt    string `json:"prompt"`
	Isolation string `json:"isolation,omitempty"`
}

// stepLine is the task a script gives its step agent (the script
// writes it; StepTask is the same for tests). Compiled where it is read,
// in a hook, rather than before every flowstate process's main.
const stepLine = `^FLOWSTATE_STEP kind=(plan|verify) workflow=([A-Za-z0-9][A-Za-z0-9._-]{0,127}) launch=([0-9a-f]{1,64})$`

// StepTask is the task of a step agent, as the compiled script writes it.
func StepTask(kind, workflow, launch string) string {
	return "FLOWSTATE_STEP kind=" + kind + " workflow=" + workflow + " launch=" + launch
}

// ParseStepTask reads a step agent's task (its first line); ok is false
// for any other text.
func ParseStepTask(task string) (kind, workflow, launch string, ok bool) {
	line, _, _ := strings.Cut(strings.TrimSpace(task), "\n")
	m := regexp.MustCompile(stepLine).FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// Tasks are a command's task blocks by the section they are in: what a
// step's NEXT=<section> would have the model launch (## work has two,
// one for a batch in the project's tree and one for a batch in
// worktrees, and a plan's counts leave one of them empty).
type Tasks map[string][]protocol.Task

// TasksOf reads the task blocks of a command file.
func TasksOf(md string) (Tasks, error) {
	d, err := protocol.Parse(md)
	if err != nil {
		return nil, err
	}
	out := Tasks{}
	for _, s := range d.Steps {
		if s.Task != nil {
			out[s.Section] = append(out[s.Section], *s.Task)
		}
	}
	return out, nil
}

// StepRequest is one step a script asks for, as the hook read it.
type StepRequest struct {
	Session  string
	Kind     string
	Workflow string
	Launch   string
	Tasks    Tasks  // the command's task blocks
	Mode     string // FLOWSTATE_CLASSIFICATION
	Options  Options
}

// RunStep runs a script's step for the session's launch and returns its
// answer. A step of a launch the session did not print, of a second
// script of one launch, or of a workflow resumed in another session
// since, ends that script (NextStopped) and changes nothing.
func RunStep(p *store.Project, req StepRequest) StepResult {
	run, why, err := stepGuard(p, req)
	switch {
	case err != nil:
		return StepResult{Next: NextFailed, Message: err.Error()}
	case why != "":
		return StepResult{Next: NextStopped, Message: why}
	}
	o := req.Options
	o.Workflow, o.Waiting = true, Waiting{}
	step := Verify
	if req.Kind == StepPlan {
		step = Plan
	}
	out, err := continueRun(p, run, req.Session, req.Mode, o, step)
	res := ResultOf(out, err, req.Tasks)
	if res.Next == NextFailed && err == nil {
		err = errors.New(res.Message)
	}
	if res.Next == NextWork && out.handed != nil {
		if lerr := recordLaunches(p, req.Session, run.Workflow, out.handed); lerr != nil {
			res, err = StepResult{Next: NextFailed, Message: lerr.Error()}, lerr
		}
	}
	uerr := UpdateRun(p, req.Session, func(r *Run) bool {
		if r.Launch == nil || r.Launch.ID != req.Launch {
			return false
		}
		r.Launch.record(out, err, res.Next != NextWork, p.Now())
		if res.Next != NextWork {
			r.Relaunched = 0
		}
		return true
	})
	if uerr != nil {
		return StepResult{Next: NextFailed, Message: uerr.Error()}
	}
	return res
}

// stepGuard checks, under the project lock, that req is a step of the
// session's launch, and notes that its script stepped; why says what
// ends a script that is not the one to run.
func stepGuard(p *store.Project, req StepRequest) (run Run, why string, err error) {
	known := false
	err = UpdateRun(p, req.Session, func(r *Run) bool {
		known = true
		l := r.Launch
		switch {
		case r.Engine != EngineWorkflow || l == nil || l.ID != req.Launch || r.Workflow != req.Workflow:
			why = fmt.Sprintf("launch %s of workflow %s is not the one flowstate printed for this Claude Code session; this run ends here", req.Launch, req.Workflow)
		case !l.Ended.IsZero():
			why = fmt.Sprintf("launch %s of workflow %s has ended; this run ends here", l.ID, r.Workflow)
		case req.Kind == StepPlan && !l.Stepped.IsZero():
			why = fmt.Sprintf("launch %s of workflow %s is under way already; this second run of it ends here and starts no worker", l.ID, r.Workflow)
		case req.Kind == StepVerify && l.Stepped.IsZero():
			why = fmt.Sprintf("launch %s of workflow %s has not planned yet; this run ends here", l.ID, r.Workflow)
		}
		if why != "" {
			return false
		}
		if l.Stepped.IsZero() {
			l.Stepped = p.Now().UTC()
		}
		run = *r
		return true
	})
	if err == nil && !known {
		why = fmt.Sprintf("no flowstate command runs workflow %s in this Claude Code session; this run ends here", req.Workflow)
	}
	if s, ok := p.Summary(req.Workflow); why == "" && err == nil && ok && s.Session != "" && s.Session != req.Session {
		why = fmt.Sprintf("workflow %s was resumed in another Claude Code session (%s); this run ends here", req.Workflow, s.Session)
	}
	return run, why, err
}

// continueRun runs the next step of the session's command run: the
// start's work while its workflow does not exist yet (its classifier is
// asked for, and its answer read), else step.
func continueRun(p *store.Project, run Run, session, mode string, o Options, step func(*store.Workflow, Options) (Output, error)) (Output, error) {
	if _, exists := p.Summary(run.Workflow); !exists {
		r, err := requestOf(run, session, mode, o)
		if err != nil {
			return Output{}, err
		}
		return Start(p, r)
	}
	w, err := p.Workflow(run.Workflow)
	if err != nil {
		return Output{}, err
	}
	return step(w, o)
}

// recordLaunches records the launch of each worker a step handed out,
// as the PreToolUse hook records an Agent call's: with its worker and
// the file it writes, so that its start, its stop and its usage are
// paired with it (a workflow's agents are started by its script, where
// no hook sees the call).
func recordLaunches(p *store.Project, session, id string, h *handedOut) error {
	w, err := p.Workflow(id)
	if err != nil {
		return err
	}
	return w.Update(func(tx *store.Tx) error {
		for _, wk := range h.workers {
			tx.Event(agentrun.Launch, agentrun.Event{Session: session, AgentType: h.agent, WorkerID: wk.ID, Output: wk.Output}.Fields())
		}
		return nil
	})
}

// ResultOf is the answer to a script for a step that printed out or
// failed with err: its workers expanded from the command's task block of
// the section NEXT names, the end of the workflow, a person's hold with
// what to tell them, or the failure. Pure.
func ResultOf(out Output, err error, tasks Tasks) StepResult {
	if err != nil {
		return StepResult{Next: NextFailed, Message: err.Error()}
	}
	values := map[string]string{}
	for _, p := range out.Pairs {
		values[p.Key] = p.Value
	}
	switch next := values["NEXT"]; next {
	case "work", "classify":
		return workersOf(out, next, values, tasks)
	case "done":
		return StepResult{Next: NextDone, State: values["FINAL_STATE"],
			Message: fmt.Sprintf("workflow %s finished in state %s: %s artifacts in %s", values["WORKFLOW_ID"], values["FINAL_STATE"], values["ARTIFACT_COUNT"], values["ARTIFACTS_DIR"])}
	case Stopped:
		return StepResult{Next: NextStopped, Message: values["MESSAGE"]}
	default:
		return StepResult{Next: NextFailed, Message: fmt.Sprintf("flowstate answered NEXT=%s, which a workflow script does not run", next)}
	}
}

// workersOf is the wave the task blocks of section launch with values.
// A worker runs in a worktree exactly when its plan isolated the batch,
// whatever the block says (as the PreToolUse hook insists for an Agent
// call).
func workersOf(out Output, section string, values map[string]string, tasks Tasks) StepResult {
	blocks, ok := tasks[section]
	if !ok {
		return StepResult{Next: NextFailed, Message: fmt.Sprintf("the command has no task block in its \"## %s\" section, so flowstate cannot say what its workflow launches", section)}
	}
	var calls []protocol.Invocation
	for _, t := range blocks {
		c, err := t.Expand(values)
		if err != nil {
			return StepResult{Next: NextFailed, Message: fmt.Sprintf("the task block of \"## %s\": %v", section, err)}
		}
		calls = append(calls, c...)
	}
	res := StepResult{Next: NextWork, State: section}
	if out.handed != nil {
		res.State = out.handed.state
	}
	for i, c := range calls {
		w := StepWorker{ID: section, AgentType: c.SubagentType, Label: c.Description, Phase: res.State, Prompt: c.Prompt}
		if out.handed != nil && i < len(out.handed.workers) {
			w.ID = out.handed.workers[i].ID
			if out.handed.isolated {
				w.Isolation = machine.IsolationWorktree
			}
		}
		res.Workers = append(res.Workers, w)
	}
	return res
}
