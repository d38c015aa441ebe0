package hook

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
)

// MaxStopBlocks is how many times in a row the Stop hook sends a model
// back without any step running in between; after that it lets the model
// stop, and logs that it gave up, rather than loop with a model that will
// not go on.
const MaxStopBlocks = 3

// stopVerdict is what the Stop hook does about a session's command.
type stopVerdict struct {
	Block bool
	Why   string // why not, for the log; "" when there is nothing to say
}

// decideStop decides whether a model that ends its turn must go on: only
// while its command's workflow is unfinished (or not yet created) and no
// step has failed or was refused; never for a workflow that is finished,
// failed, paused, cancelled or waiting for a person (any status but
// in_progress), and not after MaxStopBlocks blocks in a row without
// progress. stopHookActive says that this stop follows one of our blocks.
func decideStop(pl orchestrate.Place, stopHookActive bool) stopVerdict {
	switch {
	case pl.Run.Halted != "":
		return stopVerdict{} // the command stopped on a failed step, as the protocol says
	case pl.Run.Pending != "":
		// Claude Code refused the step (the person, their rules, -p): the
		// workflow is as it was, and the protocol has the model say so.
		return stopVerdict{Why: fmt.Sprintf("the step %q did not run (refused?); letting the model stop", pl.Run.Pending)}
	case pl.Run.Running():
		// The workflow runs as a Claude Code workflow: the model waits
		// for its notification, which gives it its next turn.
		return stopVerdict{}
	case pl.Run.Unreported() && !(stopHookActive && pl.Run.StopBlocks >= MaxStopBlocks):
		// Its workflow ran as a Claude Code workflow, which ended: the
		// block after the launch says how (with the message of a person's
		// hold), whatever the workflow's status, and the model runs it
		// first.
	case pl.Exists && !checkpoint.Running(pl.Status):
		return stopVerdict{} // finished, or a person holds it: nothing may push the model on
	case stopHookActive && pl.Run.StopBlocks >= MaxStopBlocks:
		return stopVerdict{Why: fmt.Sprintf("the model stopped %d times in a row without running a step; letting it stop", pl.Run.StopBlocks+1)}
	}
	return stopVerdict{Block: true}
}

// stop is the Stop hook: it blocks a model that ends its turn while its
// command is not done, with a reason naming the workflow, where it
// stands and the exact step to continue at.
func (h handler) stop() {
	if h.p == nil || h.session == "" {
		return
	}
	pl, ok := orchestrate.Where(h.p, h.session)
	if !ok {
		return
	}
	v := decideStop(pl, h.pl.StopHookActive)
	if !v.Block {
		if v.Why != "" {
			h.l.printf("%s (session %s, workflow %s)", v.Why, h.session, pl.Run.Workflow)
		}
		return
	}
	active := h.pl.StopHookActive
	err := orchestrate.UpdateRun(h.p, h.session, func(r *orchestrate.Run) bool {
		if active {
			r.StopBlocks++
		} else {
			r.StopBlocks = 1
		}
		return true
	})
	if err != nil {
		h.l.printf("stop: %v", err)
	}
	h.answer(map[string]any{"decision": "block", "reason": h.reason(pl)})
}

// reanchor runs after a compaction: the model has lost the values
// earlier blocks printed and may not know where its command was, so the
// hook tells it, with the few rules it needs, through the context Claude
// Code adds to the compacted conversation. A command that stopped on a
// failed step, or finished, within the hour is reported as such, so the
// model neither runs it again nor loses its result; one whose workflow a
// person holds (or cancelled) is reported with what the user runs next.
func (h handler) reanchor() {
	if h.p == nil || h.session == "" {
		return
	}
	pl, ok := orchestrate.Where(h.p, h.session)
	if !ok {
		return
	}
	text := ""
	switch recent := h.recent(pl); {
	case decideStop(pl, false).Block:
		text = h.anchor(pl)
	case pl.Held != "":
		text = fmt.Sprintf("flowstate: %s is on hold: %s The conversation was compacted: do not run the command's steps, and do not approve, reject or unpause the workflow yourself; tell the user this and end your turn.",
			h.command(pl.Run), pl.Held)
	case pl.Run.Halted != "" && recent:
		text = fmt.Sprintf("flowstate: %s stopped because a step failed: %s. The conversation was compacted: do not run the command's steps again; report that error to the user, who can continue the workflow with %s.",
			h.command(pl.Run), pl.Run.Halted, h.resume(pl))
	case pl.Exists && recent:
		text = fmt.Sprintf("flowstate: %s has finished: workflow %s is %s, in state %s. The conversation was compacted: do not run the command again; report its result to the user (`flowstate status --workflow %s` shows it).",
			h.command(pl.Run), pl.Run.Workflow, pl.Status, pl.State, pl.Run.Workflow)
	}
	if text == "" {
		return
	}
	h.answer(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":     "SessionStart",
		"additionalContext": text,
	}})
}

// recentWithin is how long after its workflow last changed a stopped or
// finished command is still worth telling a compacted model about.
const recentWithin = time.Hour

// recent reports whether the command's workflow changed within
// recentWithin.
func (h handler) recent(pl orchestrate.Place) bool {
	s, ok := h.p.Summary(pl.Run.Workflow)
	if !ok {
		return pl.Run.Halted != "" // halted before its workflow was created
	}
	t, err := time.Parse(time.RFC3339, s.UpdatedAt)
	return err == nil && h.env.Now.Sub(t) < recentWithin
}

// command is how the user invokes the session's command: a user's own
// command as they typed it (a user's plugin names it review:check), one
// of flowstate's the way this project's install names it
// (orchestrate.Slash: /coordinate where an install put it in the
// project's .claude/commands, else the plugin's /flowstate:coordinate).
func (h handler) command(run orchestrate.Run) string {
	if run.User {
		if typed := orchestrate.Typed(h.p, h.session); typed == run.Command || strings.HasSuffix(typed, ":"+run.Command) {
			return "/" + typed
		}
		return "/" + run.Command
	}
	return orchestrate.Slash(h.p, run.Command)
}

// resume is how the user continues the session's workflow: the
// workflow's own way (orchestrate.ResumeHint) once it exists, else
// flowstate's resume command as this project's install names it.
func (h handler) resume(pl orchestrate.Place) string {
	if w, err := h.p.Workflow(pl.Run.Workflow); err == nil && pl.Exists {
		return orchestrate.ResumeHint(w)
	}
	return orchestrate.Slash(h.p, orchestrate.ResumeCommand)
}

// where says in a sentence where the command stands.
func (h handler) where(pl orchestrate.Place) string {
	if !pl.Exists {
		return fmt.Sprintf("flowstate: %s has not started its workflow yet (it is being classified)", h.command(pl.Run))
	}
	return fmt.Sprintf("flowstate: %s is not done: workflow %s is in state %s (%s)", h.command(pl.Run), pl.Run.Workflow, pl.State, pl.Status)
}

// rules are the protocol rules a model that lost its place needs.
const rules = "Run each bash block exactly as written, as its own Bash call. Run each task block as Agent calls with " +
	"run_in_background: false, all of a block's calls in one message, and wait for every agent before the next block. " +
	"NEXT=<section> printed by a block continues at \"## <section>\"; only NEXT=done ends the command. " +
	"Do not stop, summarise or ask the user before NEXT=done. If a block fails, report its error to the user and stop."

func (h handler) reason(pl orchestrate.Place) string {
	return fmt.Sprintf("%s. Do not stop yet: continue the command at its \"## %s\" section, running that section's first bash block as written. %s",
		h.where(pl), pl.Section, rules)
}

func (h handler) anchor(pl orchestrate.Place) string {
	return fmt.Sprintf("%s. The conversation was compacted, so the values earlier blocks printed are gone: continue %s at its \"## %s\" section, running that section's first bash block as written: it needs no value printed before. %s",
		h.where(pl), h.command(pl.Run), pl.Section, rules)
}

// userPrompt runs before each prompt the user submits: it notes which
// command the prompt invokes, for the decisions only the user makes.
func (h handler) userPrompt() {
	if h.p == nil || h.session == "" {
		return
	}
	h.notified()
	if err := orchestrate.Prompted(h.p, h.session, h.pl.Prompt, h.env.Now); err != nil {
		h.l.printf("user-prompt-submit: %v", err)
	}
}
