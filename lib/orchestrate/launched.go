package orchestrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// launchGrace is how long after the hook let a Workflow call through a
// launch with no task and no step is taken as on its way: Claude Code
// records the task at once (PostToolUse) and the first step follows
// within seconds. Past it, the call did not launch (Claude Code refused
// it after the hook, say): it is printed again.
const launchGrace = 30 * time.Second

// maxRelaunch is how many launches in a row flowstate makes again after
// one ended without its last step before it goes on with the steps
// engine instead: a script that keeps failing is not run forever.
const maxRelaunch = 2

// launchPhase is where a launch stands, for the block after it.
type launchPhase int

const (
	launchPending launchPhase = iota // printed, not launched: print it again
	launchRunning                    // its script may be at work: wait for it
	launchEnded                      // its last step said how it ended
	launchLost                       // it ended without its last step: its script failed or was stopped
)

// phase is where l stands at now. Pure.
func (l *Launch) phase(now time.Time) launchPhase {
	switch {
	case l.End != nil:
		return launchEnded
	case !l.Ended.IsZero():
		return launchLost
	case l.Task != "" || !l.Stepped.IsZero():
		return launchRunning
	case !l.Granted.IsZero() && now.Sub(l.Granted) < launchGrace:
		return launchRunning
	}
	return launchPending
}

// LaunchedRequest is a run of the block after a launch.
type LaunchedRequest struct {
	Sel     store.Selector
	Mode    string // FLOWSTATE_CLASSIFICATION, for a start the steps engine finishes
	ToSteps bool   // Claude Code refused the Workflow call as unavailable: go on with the steps engine
	Options Options
}

// Launched answers the block after a launch (phase-launched): what the
// launch's last step answered, as the steps engine's last block would
// print it (NEXT=done, a person's hold with NEXT=stopped, or its error);
// the launch again while it was not launched (NEXT=launch); a wait, then
// NEXT=launched, while its script is at work. A launch whose script
// ended without its last step is made again, unless no step of it ever
// reached flowstate (its hooks do not answer the script's steps) or it
// keeps failing: then the workflow goes on with the steps engine, as
// ToSteps has it, and this prints what phase-plan would. It is safe to
// run twice.
func Launched(p *store.Project, r LaunchedRequest) (Output, error) {
	run, ok := ReadRun(p, r.Sel.Session)
	if !ok {
		if out, ok := NoStart(p, r.Sel); ok {
			return out, nil
		}
		return Output{}, fail.Usagef("no flowstate command runs in this Claude Code session; start one (or continue a workflow with %s)", Slash(p, ResumeCommand))
	}
	if r.ToSteps || run.Engine != EngineWorkflow || run.Launch == nil {
		return toSteps(p, r, run, "")
	}
	l := run.Launch
	if l.phase(p.Now()) == launchRunning {
		l = awaitLaunch(p, r.Sel.Session, l.ID, r.Options.Waiting)
	}
	switch l.phase(p.Now()) {
	case launchRunning:
		var out Output
		out.warn(note, "workflow %s runs as a Claude Code workflow (launch %s) and has not ended yet; wait for Claude Code's notification, then run this block again", run.Workflow, l.ID)
		out.add("RUNNING", 1)
		out.add("NEXT", LaunchedSection)
		return out, nil
	case launchEnded:
		if l.Reported.IsZero() {
			if err := UpdateRun(p, r.Sel.Session, func(rr *Run) bool {
				if rr.Launch == nil || rr.Launch.ID != l.ID {
					return false
				}
				rr.Launch.Reported = p.Now().UTC()
				return true
			}); err != nil {
				return Output{}, err
			}
		}
		return endOf(l)
	case launchLost:
		return relaunch(p, r, run)
	}
	if !l.Granted.IsZero() {
		// Let through, never launched: the next call is judged anew.
		if err := UpdateRun(p, r.Sel.Session, func(rr *Run) bool {
			if rr.Launch == nil || rr.Launch.ID != l.ID {
				return false
			}
			rr.Launch.Granted = time.Time{}
			return true
		}); err != nil {
			return Output{}, err
		}
	}
	return launchOutput(l), nil
}

// awaitLaunch waits, as long as wt allows, for the session's launch id
// to end, and returns it as it then stands.
func awaitLaunch(p *store.Project, session, id string, wt Waiting) *Launch {
	var l *Launch
	wt.wait(func() bool {
		run, ok := ReadRun(p, session)
		if !ok || run.Launch == nil || run.Launch.ID != id {
			return false
		}
		l = run.Launch
		return l.phase(p.Now()) == launchRunning
	})
	if l == nil {
		run, _ := ReadRun(p, session)
		l = run.Launch
	}
	return l
}

// endOf is what the launch's last step answered.
func endOf(l *Launch) (Output, error) {
	var out Output
	for _, w := range l.Warnings {
		out.warn(note, "%s", w)
	}
	if l.End.Error != "" {
		return out, &fail.Error{Code: max(l.End.Code, fail.Unexpected), Err: errors.New(l.End.Error)}
	}
	out.Pairs = l.End.Pairs
	return out, nil
}

// relaunch answers a launch whose script ended without its last step:
// a new launch, or the steps engine when its steps never reached
// flowstate or launches keep ending so.
func relaunch(p *store.Project, r LaunchedRequest, run Run) (Output, error) {
	l := run.Launch
	switch {
	case l.Steps == 0:
		return toSteps(p, r, run, fmt.Sprintf("the Claude Code workflow of %s ended (%s) without any of its steps reaching flowstate, so its hooks do not answer them in this session; going on with the steps engine", run.Workflow, orUnknown(l.Notified)))
	case run.Relaunched >= maxRelaunch:
		return toSteps(p, r, run, fmt.Sprintf("the Claude Code workflow of %s ended (%s) before its last step %d times in a row; going on with the steps engine", run.Workflow, orUnknown(l.Notified), run.Relaunched+1))
	}
	var nl *Launch
	err := UpdateRun(p, r.Sel.Session, func(rr *Run) bool {
		if rr.Launch == nil || rr.Launch.ID != l.ID {
			nl = rr.Launch // made again already, by a block run twice
			return false
		}
		rr.Relaunched++
		nl = newLaunch(rr.Workflow, l.Name, p.Now())
		rr.Launch = nl
		return true
	})
	if err != nil || nl == nil {
		return Output{}, errors.Join(err, fail.Usagef("the session's launch of workflow %s is gone; run the command again", run.Workflow))
	}
	out := launchOutput(nl)
	out.warn(note, "the Claude Code workflow of %s ended (%s) before its last step; launching it again: workers already recorded are not run again", run.Workflow, orUnknown(l.Notified))
	return out, nil
}

// endScripted records the stop of every worker the session's launches
// handed out in workflow id's current state that has none: their script
// ended, and its agents with it (one it stopped, or killed with it, gets
// no SubagentStop). The steps engine then sees none of them at work.
func endScripted(p *store.Project, session, id string) error {
	w, err := p.Workflow(id)
	if err != nil {
		return nil // not created yet: nothing was handed out
	}
	runs, err := agentRuns(w, session, Options{})
	if err != nil {
		return err
	}
	var open []agentrun.Entry
	for _, e := range runs.Entries(p.Now(), DefaultStuckAfter) {
		if e.WorkerID != "" && e.Status != agentrun.Stopped {
			open = append(open, e)
		}
	}
	if len(open) == 0 {
		return nil
	}
	return w.Update(func(tx *store.Tx) error {
		for _, e := range open {
			tx.Event(agentrun.Stop, agentrun.Event{Session: session, AgentType: e.AgentType, WorkerID: e.WorkerID}.Fields())
		}
		return nil
	})
}

func orUnknown(s string) string {
	if s == "" {
		return "status unknown"
	}
	return s
}

// toSteps switches the session's command to the steps engine, saying
// why (why "" for a command on it already), and answers as phase-plan
// does: the workflow's next batch, or, before the workflow exists, the
// start's work.
func toSteps(p *store.Project, r LaunchedRequest, run Run, why string) (Output, error) {
	if run.Engine == EngineWorkflow {
		if why == "" {
			why = fmt.Sprintf("Claude Code refused the workflow's launch as unavailable; workflow %s goes on with the steps engine", run.Workflow)
		}
		if err := UpdateRun(p, r.Sel.Session, func(rr *Run) bool {
			rr.Engine, rr.Launch, rr.Relaunched = EngineSteps, nil, 0
			return true
		}); err != nil {
			return Output{}, err
		}
		if err := endScripted(p, r.Sel.Session, run.Workflow); err != nil {
			return Output{}, err
		}
	}
	out, err := continueRun(p, run, r.Sel.Session, r.Mode, r.Options, Plan)
	if why != "" {
		out.Warnings = append([]Warning{{Text: why}}, out.Warnings...)
	}
	return out, err
}
