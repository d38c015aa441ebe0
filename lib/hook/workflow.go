package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// The workflow engine's hooks (Claude Code 2.1.328, verified). A
// workflow's agents fire SubagentStart, SubagentStop and Pre/PostToolUse
// with their agent_id as any agent does, but no PreToolUse or
// PostToolUse of an Agent call: their launches are recorded by the step
// that handed them out, their usage from their transcripts at the step
// after their wave (measureScripted). The rest:
//
//   - PreToolUse on StructuredOutput, its own registration (WorkflowStep):
//     the script's step agent asks for a step; the hook runs it
//     (orchestrate.RunStep) and answers with the step's result as the
//     call's input, which is what the script's agent() returns.
//   - PreToolUse on Workflow: the main thread's launch is allowed when it
//     is, name and args, the one flowstate printed for the session and not
//     launched yet, and refused naming the block to run again otherwise.
//   - PostToolUse on Workflow: Claude Code's task and run ids of the
//     launch; UserPromptSubmit of the task notification then says the
//     launch ended, for a script that ended without its last step.
//   - PreToolUse of any tool of an agent of a cancelled workflow that
//     started after the cancel: denied, and the agent ended (continue:
//     false), so that no work starts after a cancel.
//
// Claude Code keeps a workflow agent's transcript in
// <session>/subagents/workflows/<run>/agent-<id>.jsonl, its internal
// layout: where it cannot be found, a step agent's task is taken from
// its StructuredOutput input instead, and a worker's usage is not
// recorded (its records and events are).

// WorkflowStep is the hook that answers a workflow script's steps.
const WorkflowStep = "workflow-step"

// workflowTool and stepTool are the tools the workflow engine's hooks
// watch.
const (
	workflowTool = "Workflow"
	stepTool     = "StructuredOutput"
)

// workflowStep answers a step agent's StructuredOutput call with the
// step it asks for. Nothing is answered for any other call, or a task
// that names no step: the script then gets the agent's own input, finds
// no step in it, and ends saying so.
func (h handler) workflowStep() {
	if h.pl.ToolName != stepTool || h.pl.AgentID == "" || !h.recordable() || orchestrate.BareName(h.pl.AgentType) != orchestrate.StepAgent {
		return
	}
	task, _ := transcriptPrompt(h.workflowTranscript(h.pl.AgentID))
	kind, id, launch, ok := orchestrate.ParseStepTask(task)
	if !ok {
		// Its transcript could not be read: the agent echoes its task.
		kind, id, launch, ok = orchestrate.ParseStepTask(gjson.GetBytes(h.pl.ToolInput, "step").String())
	}
	if !ok {
		h.l.printf("workflow-step: agent %s's task names no step of flowstate's", h.pl.AgentID)
		return
	}
	if w := orchestrate.SessionWorkflow(h.p, h.session); w != nil && w.ID == id {
		h.measureScripted(w) // the wave before this step
	}
	res := h.runStep(orchestrate.StepRequest{Session: h.session, Kind: kind, Workflow: id, Launch: launch,
		Mode: h.env.Getenv("FLOWSTATE_CLASSIFICATION")})
	h.measureEarly()
	b, err := json.Marshal(res)
	if err != nil {
		h.l.printf("workflow-step: %v", err)
		return
	}
	h.allow("a step of workflow "+id, b)
}

// runStep runs req with the session's command's task blocks and the
// project's limits.
func (h handler) runStep(req orchestrate.StepRequest) orchestrate.StepResult {
	tasks, err := h.commandTasks()
	if err == nil {
		req.Tasks = tasks
		req.Options, err = h.stepOptions()
	}
	if err != nil {
		return orchestrate.StepResult{Next: orchestrate.NextFailed, Message: err.Error()}
	}
	return orchestrate.RunStep(h.p, req)
}

// commandTasks are the task blocks of the command the session runs: the
// one its user's prompt invoked, else (a prompt that invoked none, in a
// session continued) the run's own command, as the project or the plugin
// installs it.
func (h handler) commandTasks() (orchestrate.Tasks, error) {
	var names []string
	if name, _, ok := orchestrate.Invoked(h.p, h.session); ok {
		names = append(names, name)
	}
	if run, ok := orchestrate.ReadRun(h.p, h.session); ok {
		names = append(names, run.Command)
		if root := h.env.Getenv("CLAUDE_PLUGIN_ROOT"); root != "" {
			names = append(names, engine.PluginName(root)+":"+run.Command)
		}
	}
	for _, name := range names {
		paths, _ := h.commandFiles(name)
		for _, path := range paths {
			md, err := fsx.ReadRegular(path, maxMarkdown)
			if err != nil {
				continue
			}
			return orchestrate.TasksOf(string(md))
		}
	}
	return nil, errors.New("flowstate cannot find the command file of this session's workflow, whose task blocks say what it launches")
}

// stepOptions are a step's options as phase-plan's would be: the
// project's limits, paths shown relative to the step agent's directory.
func (h handler) stepOptions() (orchestrate.Options, error) {
	o := orchestrate.Options{Cwd: h.pl.Cwd}
	b, err := fsx.ReadRegular(filepath.Join(h.p.Dir, filepath.FromSlash(usage.SettingsFile)), limit.Max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, nil
	case err != nil:
		return o, err
	}
	o.Limits, err = sm.LimitsOf(b)
	return o, err
}

// permitWorkflow judges a Workflow call of the main thread
// (orchestrate.GrantLaunch): the launch flowstate printed is allowed,
// that saved workflow's call in any other form is refused with the
// block to run again, and any other is left to the person.
func (h handler) permitWorkflow() {
	if h.pl.AgentID != "" || !h.granting() {
		return
	}
	var call orchestrate.WorkflowCall
	if json.Unmarshal(h.pl.ToolInput, &call) != nil {
		return
	}
	ok, ours, why, err := orchestrate.GrantLaunch(h.p, h.session, call)
	switch {
	case err != nil:
		h.l.printf("pre-tool-use: %v", err)
	case ok:
		h.allow("the launch of a workflow it printed", nil)
	case ours:
		h.deny(why)
	}
}

// workflowLaunched records the task a granted launch started.
func (h handler) workflowLaunched() {
	if h.pl.AgentID != "" || !h.recordable() {
		return
	}
	r := gjson.ParseBytes(h.pl.ToolResponse)
	if r.Get("status").String() != "async_launched" {
		return
	}
	name := gjson.GetBytes(h.pl.ToolInput, "name").String()
	if err := orchestrate.LaunchStarted(h.p, h.session, name, r.Get("taskId").String(), r.Get("runId").String()); err != nil {
		h.l.printf("post-tool-use: %v", err)
	}
}

// endCancelled ends an agent of the session's workflow that started
// after a person cancelled it: its tool call is denied and its loop
// stopped, and its stop recorded (it gets no SubagentStop). Agents at
// work when the workflow was cancelled finish, as in the steps engine.
func (h handler) endCancelled() bool {
	if h.pl.AgentID == "" || !h.recordable() {
		return false
	}
	w := orchestrate.SessionWorkflow(h.p, h.session)
	if w == nil {
		return false
	}
	if s, ok := h.p.Summary(w.ID); !ok || s.Status != checkpoint.Cancelled {
		return false // the common case, read from the workflow's summary alone
	}
	k, ours := orchestrate.RecognizeAgent(h.p, h.session, h.pl.AgentType, h.pl.AgentID, h.agentPrompt, h.pl.Cwd)
	if !ours || k.Workflow == nil || !orchestrate.StartedAfterCancel(w, h.pl.AgentID) {
		return false
	}
	why := "flowstate: workflow " + w.ID + " was cancelled before this agent started; it does no work."
	h.answer(map[string]any{
		"continue":   false,
		"stopReason": why,
		"hookSpecificOutput": map[string]any{
			"hookEventName":            "PreToolUse",
			"permissionDecision":       "deny",
			"permissionDecisionReason": why,
		},
	})
	h.record(agentrun.Stop, k)
	return true
}

// workflowAgent reports whether an agent's transcript is a workflow
// script's (Claude Code 2.1.328 keeps those under subagents/workflows/).
func workflowAgent(transcript string) bool {
	return strings.Contains(filepath.ToSlash(transcript), "/subagents/workflows/")
}

// workflowTranscript is where Claude Code keeps the transcript of the
// agent with id of a workflow script:
// <session>/subagents/workflows/<run>/agent-<id>.jsonl; "" when it is
// not there (yet).
func (h handler) workflowTranscript(id string) string {
	base, ok := strings.CutSuffix(h.pl.SessionTranscript, ".jsonl")
	if !ok || !agentIDs().MatchString(id) {
		return ""
	}
	paths, _ := filepath.Glob(filepath.Join(base, "subagents", "workflows", "*", "agent-"+id+".jsonl"))
	if len(paths) == 1 {
		return paths[0]
	}
	return ""
}

// maxJournals bounds the runs' journals a starting agent is looked for
// in: its run's is among the latest written, and a session may hold many.
const maxJournals = 4

// newest is at most n of paths, the latest modified first.
func newest(paths []string, n int) []string {
	mod := make(map[string]time.Time, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			mod[p] = fi.ModTime()
		}
	}
	paths = slices.Clone(paths)
	slices.SortStableFunc(paths, func(a, b string) int { return mod[b].Compare(mod[a]) })
	return paths[:min(n, len(paths))]
}

// startedTranscript is where the transcript of an agent that is starting
// will be: a workflow agent's is named only in its run's journal, which
// Claude Code has written by SubagentStart; any other's is
// agentTranscript's.
func (h handler) startedTranscript(id string) string {
	base, ok := strings.CutSuffix(h.pl.SessionTranscript, ".jsonl")
	if !ok || !agentIDs().MatchString(id) {
		return ""
	}
	journals, _ := filepath.Glob(filepath.Join(base, "subagents", "workflows", "*", "journal.jsonl"))
	needle := []byte(`"agentId":"` + id + `"`)
	for _, j := range newest(journals, maxJournals) {
		if b, err := fsx.ReadPrefix(j, 4<<20); err == nil && bytes.Contains(b, needle) {
			return filepath.Join(filepath.Dir(j), "agent-"+id+".jsonl")
		}
	}
	return agentTranscript(h.pl.SessionTranscript, id)
}

// stepUsage keeps, at a workflow script's step agent's SubagentStop,
// the agent to measure at the script's next step, or at the main
// thread's next Stop (measureEarly): Claude Code has not written its
// answer to its transcript yet. What it spent is the orchestration's
// spend in the workflow's state (main_usage): what the steps engine's
// bash blocks cost the main thread.
func (h handler) stepUsage() {
	if !workflowAgent(h.pl.TranscriptPath) || orchestrate.BareName(h.pl.AgentType) != orchestrate.StepAgent || !h.recordable() {
		return
	}
	err := orchestrate.RecordEarly(h.p, h.session, orchestrate.Early{ID: h.pl.AgentID, Type: orchestrate.StepAgent, Transcript: h.pl.TranscriptPath, Stopped: h.env.Now})
	if err != nil {
		h.l.printf("subagent-stop: %v", err)
	}
}

// stepSpend is the main_usage record of a step agent whose transcript is
// at path, in w's current state.
func (h handler) stepSpend(w *store.Workflow, path string) (map[string]any, bool) {
	a, _, err := scanFile(path, usage.MaxTranscript, usage.ScanAgent)
	if err != nil || a.Requests == 0 {
		return nil, false
	}
	state := ""
	if s, ok := w.P.Summary(w.ID); ok {
		state = s.CurrentState
	}
	return map[string]any{"session": h.session, "state": state, "model": a.Model, "usage": a.Usage, "requests": a.Requests, "source": "workflow-step"}, true
}

// measureEarly records what the agents the session's run keeps spent
// (orchestrate.Early), once its workflow exists: a classifier that ran
// before it did, as an agent, and the script's step agents, as the
// orchestration's spend. At a step or a Stop, each of them has ended.
func (h handler) measureEarly() {
	w, early, err := orchestrate.TakeEarly(h.p, h.session)
	if err != nil || w == nil {
		if err != nil {
			h.l.printf("workflow-step: %v", err)
		}
		return
	}
	var fields []map[string]any
	var kinds []string
	for _, a := range early {
		if a.Type == orchestrate.StepAgent {
			if f, ok := h.stepSpend(w, a.Transcript); ok {
				fields, kinds = append(fields, f), append(kinds, usage.MainEvent)
			}
			continue
		}
		if sc := h.scanAgent(a.Transcript, usage.MaxTranscript); sc.ok {
			res := usage.AgentResult{ID: a.ID, Status: "completed", At: a.Stopped}
			if !a.Started.IsZero() {
				res.DurationMs = max(a.Stopped.Sub(a.Started), 0).Milliseconds()
			}
			fields, kinds = append(fields, h.measure("", a.Type, res, sc)), append(kinds, usage.AgentEvent)
		}
	}
	err = w.Update(func(tx *store.Tx) error {
		for i, f := range fields {
			tx.Event(kinds[i], f)
		}
		return nil
	})
	if err != nil {
		h.l.printf("workflow-step: %v", err)
	}
}

// measureScripted records, at a script's step, what the agents of the
// session's workflow that a script started spent and no record has yet:
// they have no Agent call whose PostToolUse measures them, and at their
// SubagentStop Claude Code has not written their last answer yet; at a
// step, between waves, every one of them has ended. Each is paired with
// the worker its stop named, within the budget SessionEnd keeps to.
func (h handler) measureScripted(w *store.Workflow) {
	events, err := w.ReadEvents()
	if err != nil {
		return
	}
	evs := agentrun.Parse(events)
	past := usage.PastMain(events, h.session, "", "")
	workers := map[string]string{}
	for _, ev := range evs {
		if ev.Event == agentrun.Stop && ev.WorkerID != "" {
			workers[ev.AgentID] = ev.WorkerID
		}
	}
	var fields []map[string]any
	budget := int64(interruptedBudget)
	for _, st := range agentrun.StartsOf(evs, h.session) {
		path := h.transcriptOf(st)
		if past.Measured[st.AgentID] || !workflowAgent(path) || len(fields) == maxInterrupted || budget <= 0 {
			continue
		}
		if f, ok := h.measureStarted(st, path, workers[st.AgentID], "completed", &budget); ok {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return
	}
	err = w.Update(func(tx *store.Tx) error {
		for _, f := range fields {
			tx.Event(usage.AgentEvent, f)
		}
		return nil
	})
	if err != nil {
		h.l.printf("workflow-step: %v", err)
	}
}

// notified notes, from a task notification UserPromptSubmit got, that
// the session's launch ended.
func (h handler) notified() {
	if err := orchestrate.LaunchNotified(h.p, h.session, h.pl.Prompt); err != nil {
		h.l.printf("user-prompt-submit: %v", err)
	}
}
