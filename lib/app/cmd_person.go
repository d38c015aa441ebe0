package app

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/history"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// personCommands are what a person does to a workflow from any shell or
// from Claude Code, whatever its command is doing: decide at a gate,
// pause, cancel, look back, go back.
func personCommands(e *env) []*cli.Command {
	who := "Recorded with who (FLOWSTATE_USER, else USER), when, and from where (shell or claude-code)."
	return []*cli.Command{
		{
			Name:      "approve",
			Usage:     "let a workflow that waits at an approval gate enter the gated state (exit 3 when it waits for none)",
			UsageText: "flowstate approve [--note TEXT|-] [--workflow ID]",
			Description: who + " /flowstate:workflow-resume then continues the workflow.\n" +
				"Approving again once the state was entered changes nothing. --note - reads the note from stdin.\n" +
				"Without --workflow: this session's workflow, else the project's only one awaiting approval.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "note", Usage: "a note for the record"}, workflowFlag()},
			Action: e.onHeld(checkpoint.AwaitingApproval, func(c *cli.Context, w *store.Workflow) error {
				if err := e.userAsked(w, "workflow-approve", "approve"); err != nil {
					return err
				}
				note, err := e.text(c, "note")
				if err != nil {
					return err
				}
				state, err := sm.Approve(w, e.actor(), note)
				if err != nil {
					return err
				}
				e.tell("workflow %s approved into %s; continue it with /flowstate:workflow-resume", w.ID, state)
				return e.printOutcome(w)
			}),
		},
		{
			Name:      "reject",
			Usage:     "send a workflow that waits at an approval gate back to the state the gate names (default: the one it waits in)",
			UsageText: "flowstate reject --reason TEXT|- [--workflow ID]",
			Description: who + " The reason is kept for the workers of the state the workflow goes back to\n" +
				"(the planner of a rejected plan reads it); their earlier work is kept as history (flowstate history).\n" +
				"Without --workflow: this session's workflow, else the project's only one awaiting approval.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}, workflowFlag()},
			Action: e.onHeld(checkpoint.AwaitingApproval, func(c *cli.Context, w *store.Workflow) error {
				if err := e.userAsked(w, "workflow-reject", "reject"); err != nil {
					return err
				}
				reason, err := e.text(c, "reason")
				if err != nil {
					return err
				}
				to, err := sm.Reject(w, e.actor(), reason, phase.RecordKeys)
				if err != nil {
					return err
				}
				e.tell("workflow %s sent back to %s; /flowstate:workflow-resume does %s again with your reason", w.ID, to, to)
				return e.printOutcome(w)
			}),
		},
		{
			Name:      "pause",
			Usage:     "hold an in-progress workflow: its command stops at its next step, transitions wait (exit 6) until unpause",
			UsageText: "flowstate pause [--reason TEXT|-] [--workflow ID]",
			Description: who + " Agents already at work finish and are recorded. /flowstate:workflow-resume or\n" +
				"`flowstate unpause` lets it go on.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, for the record and the running command"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				reason, err := e.text(c, "reason")
				if err != nil {
					return err
				}
				if err := sm.Pause(w, e.actor(), reason); err != nil {
					return err
				}
				return e.printOutcome(w)
			}),
		},
		{
			Name:      "unpause",
			Usage:     "let a paused workflow go on (nothing to do when it is not paused)",
			UsageText: "flowstate unpause [--workflow ID]",
			Description: who + " Its command then continues with /flowstate:workflow-resume. Without --workflow:\n" +
				"this session's workflow, else the project's only paused one.",
			Flags: []cli.Flag{workflowFlag()},
			Action: e.onHeld(checkpoint.Paused, func(c *cli.Context, w *store.Workflow) error {
				if err := e.userAsked(w, orchestrate.ResumeCommand, "unpause"); err != nil {
					return err
				}
				if _, err := sm.Unpause(w, e.actor()); err != nil {
					return err
				}
				return e.printOutcome(w)
			}),
		},
		{
			Name:      "cancel",
			Usage:     "finish an unfinished workflow as cancelled: its command stops at its next step, and it refuses every change (exit 3)",
			UsageText: "flowstate cancel --reason TEXT|- [--workflow ID]",
			Description: who + " Agents already at work finish; their ends are recorded as events, their files\n" +
				"stay. Cancelling again changes nothing.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				reason, err := e.text(c, "reason")
				if err != nil {
					return err
				}
				if err := sm.Cancel(w, e.actor(), reason); err != nil {
					return err
				}
				return e.printOutcome(w)
			}),
		},
		{
			Name:      "rewind",
			Usage:     "take the workflow back to STATE, a state it completed (or its current one), to do the work from there again",
			UsageText: "flowstate rewind STATE [--reason TEXT|-] [--workflow ID]",
			Description: "One locked write: the states from STATE on are no longer completed, and what was recorded for them\n" +
				"(phase_data, worker records, retries, their error) moves to the checkpoint's rewinds history: kept,\n" +
				"never re-used. Their workers run again, writing new files beside the old (name.v2.md, ...). The\n" +
				"reason is kept for STATE's workers. " + who + " /flowstate:workflow-resume then runs from STATE.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, for the record and for STATE's workers"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, a []string) error {
				reason, err := e.text(c, "reason")
				if err != nil {
					return err
				}
				if err := sm.Rewind(w, a[0], e.actor(), reason, phase.RecordKeys); err != nil {
					return err
				}
				return e.printOutcome(w)
			}, "STATE"),
		},
		{
			Name:      "history",
			Usage:     "list the workflow's events in order: transitions, gates and decisions, pauses, errors, retries, agents and workers, with durations",
			UsageText: "flowstate history [--json] [--workflow ID]",
			Description: "A duration is the time in the state left (transition, rewind, finish), an agent's run (its stop),\n" +
				"the wait for a person (approve, reject, unpause). --json prints {\"workflow_id\", \"events\": [{\"seq\",\n" +
				"\"ts\", \"event\", \"summary\", \"duration_ms\", \"fields\"}]}, fields being the event as recorded.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				data, err := w.ReadEvents()
				if err != nil {
					return err
				}
				entries, skipped := history.Parse(data)
				if skipped > 0 {
					e.warn("workflow %s: %d damaged lines of %s skipped", w.ID, skipped, w.EventsPath())
				}
				if c.Bool("json") {
					return e.printJSON(history.Document{WorkflowID: w.ID, Events: entries})
				}
				e.printf("%s", history.Render(entries))
				return nil
			}),
		},
	}
}

// onHeld wraps an action that takes no arguments and acts on a workflow
// that waits for a person with status (store's ResolveWaiting finds it).
func (e *env) onHeld(status string, fn func(c *cli.Context, w *store.Workflow) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if _, err := args(c); err != nil {
			return err
		}
		p, err := e.Project()
		if err != nil {
			return err
		}
		w, err := p.ResolveWaiting(e.selector(c), status)
		if err != nil {
			return err
		}
		return fn(c, w)
	}
}

// userAsked refuses a person's decision that a model runs on its own
// (orchestrate.RefuseUnasked).
func (e *env) userAsked(w *store.Workflow, command, verb string) error {
	return orchestrate.RefuseUnasked(w, e.Getenv("CLAUDE_CODE_SESSION_ID"), command, verb)
}

// actor is the person running the command (sm.ActorFrom).
func (e *env) actor() sm.Actor { return sm.ActorFrom(e.Getenv) }

// text is the value of a text flag, "-" reading it from stdin (a slash
// command passes what the user typed that way), trimmed.
func (e *env) text(c *cli.Context, flag string) (string, error) {
	v := c.String(flag)
	if v == "-" {
		b, err := limit.ReadAll(e.Stdin, "--"+flag)
		if err != nil {
			return "", err
		}
		v = string(b)
	}
	return strings.TrimSpace(v), nil
}

// printOutcome prints where the workflow stands after a person's command.
func (e *env) printOutcome(w *store.Workflow) error {
	st, err := sm.Current(w)
	if err != nil {
		return err
	}
	e.printf("%s", st.Outcome())
	return nil
}
