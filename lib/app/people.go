package app

import (
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/ancestry"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/history"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/term"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// peopleCommands are what a person does with workflows from any shell or
// from Claude Code, whatever their commands are doing: look at them
// (lib/status, lib/history), decide at a gate, pause, cancel, go back
// (lib/sm).
func (e *env) peopleCommands() []*cli.Command {
	who := "Recorded with who (FLOWSTATE_USER, else USER), when, and from where (shell or claude-code)."
	var (
		listJSON, historyJSON                         bool
		status                                        lookOptions
		output                                        string
		note, rejectReason, pauseReason, cancelReason string
		budget                                        string
		rewindReason                                  string
	)
	return []*cli.Command{
		{
			Name:      "list",
			Usage:     "list the project's workflows, newest first, with their state and status (in_progress, awaiting_approval, paused, complete, failed, abandoned, cancelled), how long each took, its tokens and, with prices, its cost",
			UsageText: "flowstate list [--json]",
			Description: "To compare runs of one command. COST needs prices (" + usage.SettingsFile + "); ≥ marks a cost that leaves out\n" +
				"a model without a price. --json prints [{\"id\", \"command\", \"scope\", \"current_state\", \"terminal_state\",\n" +
				"\"status\", \"session_id\", \"updated_at\", \"duration_ms\", \"tokens\", \"cost\", \"currency\", \"cost_complete\"}].",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &listJSON}},
			Action: func(c *cli.Context) error { return e.list(c, listJSON) },
		},
		{
			Name:      "status",
			Usage:     "show the workflow for people: its route (✓ done, ▶ current, · pending), time and tokens per state, the agents at work, supervisors, errors",
			UsageText: "flowstate status [--json | --timeline] [--workflow ID]   (colour only on a terminal, never with NO_COLOR set)",
			Description: "Without --workflow, FLOWSTATE_WORKFLOW or a workflow of this session: the project's only active one,\n" +
				"else its most recent (named on stderr). Tokens are what the hooks recorded per agent and for the main\n" +
				"thread; money only with a price table in " + usage.SettingsFile + " (README, \"What a workflow cost\").\n" +
				"--json prints {\"workflow_id\", \"status\", \"current_state\", ..., \"tokens\" (input_tokens, output_tokens,\n" +
				"cache_read_tokens, cache_write_tokens, total), \"cost\" and \"currency\" (with prices), \"duration_ms\",\n" +
				"\"states\", \"agents\" (each with its tokens, model, requests, tool_uses, wave, lane, status),\n" +
				"\"main_thread\", \"spent_per_state\", \"waits\", \"marks\"}. --timeline draws the states and agents\n" +
				"on one time axis, as wide as the terminal.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &status.json}, &cli.BoolFlag{Name: "timeline", Usage: "draw the run on a time axis", Destination: &status.timeline}, e.workflowFlag()},
			Action: e.onLooked(func(w *store.Workflow) error { return e.status(w, status) }),
		},
		{
			Name:      "history",
			Usage:     "list the workflow's events in order: transitions, gates and decisions, pauses, errors, retries, agents and workers, with durations and tokens",
			UsageText: "flowstate history [--json] [--workflow ID]",
			Description: "A duration is the time in the state left (transition, rewind, finish), an agent's run (its stop, its\n" +
				"usage), the wait for a person (approve, reject, unpause). --json prints {\"workflow_id\", \"events\":\n" +
				"[{\"seq\", \"ts\", \"event\", \"summary\", \"duration_ms\", \"fields\"}], \"agents\", \"tokens\"}, fields\n" +
				"being the event as recorded, agents every agent's run and tokens. Without --workflow: as status.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &historyJSON}, e.workflowFlag()},
			Action: e.onLooked(func(w *store.Workflow) error { return e.history(w, historyJSON) }),
		},
		{
			Name:      "report",
			Usage:     "write one self-contained HTML page of the workflow's run: states and agents on a timeline, waits, failures, tokens, artifacts",
			UsageText: "flowstate report [-o FILE] [--workflow ID]",
			Description: "The page needs no network (no scripts, fonts or images) and links the agents' artifacts. It goes to\n" +
				"FILE (replaced atomically), else to stdout, else (stdout a terminal) to ID.html here. Without\n" +
				"--workflow: as status.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the page to `FILE`", Destination: &output}, e.workflowFlag()},
			Action: e.onLooked(func(w *store.Workflow) error { return e.report(w, output) }),
		},
		{
			Name:      "approve",
			Usage:     "let a workflow that waits at an approval gate enter the gated state, or one held at its spend limit spend more (--budget)",
			UsageText: "flowstate approve [--budget AMOUNT] [--note TEXT|-] [--workflow ID]",
			Description: who + " /flowstate:workflow-resume then continues the workflow.\n" +
				"Approving again once the state was entered changes nothing; exit 3 when it waits for no approval.\n" +
				"--budget AMOUNT lets a workflow held at its spend limit (or one at work, ahead of it) spend AMOUNT\n" +
				"more than it has spent: tokens (500k) or money in the price table's currency (5USD). --note -\n" +
				"reads the note from stdin, and a note that starts with --budget AMOUNT (/workflow-approve's\n" +
				"arguments) gives the amount. Without --workflow: this session's workflow, else the project's\n" +
				"only one awaiting approval.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "note", Usage: "a note for the record", Destination: &note},
				&cli.StringFlag{Name: "budget", Usage: "allow `AMOUNT` more spending: tokens (500k) or money (5USD)", Destination: &budget}, e.workflowFlag()},
			Action: e.onHeld(checkpoint.AwaitingApproval, func(w *store.Workflow) error { return e.approve(w, note, budget) }),
		},
		{
			Name:      "reject",
			Usage:     "send a workflow that waits at an approval gate back to the state the gate names (default: the one it waits in)",
			UsageText: "flowstate reject --reason TEXT|- [--workflow ID]",
			Description: who + " The reason is kept for the workers of the state the workflow goes back to\n" +
				"(the planner of a rejected plan reads it); their earlier work is kept as history (flowstate history).\n" +
				"Without --workflow: this session's workflow, else the project's only one awaiting approval.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)", Destination: &rejectReason}, e.workflowFlag()},
			Action: e.onHeld(checkpoint.AwaitingApproval, func(w *store.Workflow) error { return e.reject(w, rejectReason) }),
		},
		{
			Name:      "pause",
			Usage:     "hold an in-progress workflow: its command stops at its next step, transitions wait (exit 6) until unpause",
			UsageText: "flowstate pause [--reason TEXT|-] [--workflow ID]",
			Description: who + " Agents already at work finish and are recorded. /flowstate:workflow-resume or\n" +
				"`flowstate unpause` lets it go on.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, for the record and the running command", Destination: &pauseReason}, e.workflowFlag()},
			Action: e.onWorkflow(func(w *store.Workflow, _ []string) error { return e.pause(w, pauseReason) }),
		},
		{
			Name:      "unpause",
			Usage:     "let a paused workflow go on (nothing to do when it is not paused)",
			UsageText: "flowstate unpause [--workflow ID]",
			Description: who + " Its command then continues with /flowstate:workflow-resume. Without --workflow:\n" +
				"this session's workflow, else the project's only paused one.",
			Flags:  []cli.Flag{e.workflowFlag()},
			Action: e.onHeld(checkpoint.Paused, e.unpause),
		},
		{
			Name:      "cancel",
			Usage:     "finish an unfinished workflow as cancelled: its command stops at its next step, and it refuses every change (exit 3)",
			UsageText: "flowstate cancel --reason TEXT|- [--workflow ID]",
			Description: who + " Agents already at work finish; their ends are recorded as events, their files\n" +
				"stay. Cancelling again changes nothing.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)", Destination: &cancelReason}, e.workflowFlag()},
			Action: e.onWorkflow(func(w *store.Workflow, _ []string) error { return e.cancel(w, cancelReason) }),
		},
		{
			Name:      "rewind",
			Usage:     "take the workflow back to STATE, a state it completed (or its current one), to do the work from there again",
			UsageText: "flowstate rewind STATE [--reason TEXT|-] [--workflow ID]",
			Description: "One locked write: the states from STATE on are no longer completed, and what was recorded for them\n" +
				"(phase_data, worker records, retries, their error) moves to the checkpoint's rewinds history: kept,\n" +
				"never re-used. Their workers run again, writing new files beside the old (name.v2.md, ...). The\n" +
				"reason is kept for STATE's workers. " + who + " /flowstate:workflow-resume then runs from STATE.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, for the record and for STATE's workers", Destination: &rewindReason}, e.workflowFlag()},
			Action: e.onWorkflow(func(w *store.Workflow, a []string) error { return e.rewind(w, a[0], rewindReason) }, "STATE"),
		},
	}
}

func (e *env) list(c *cli.Context, asJSON bool) error {
	if _, err := args(c); err != nil {
		return err
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	all, err := p.List()
	if err != nil {
		return err
	}
	prices := e.prices()
	entries := make([]listEntry, len(all))
	for i, s := range all {
		entries[i] = e.listEntry(p, s, prices)
	}
	if asJSON {
		return e.printJSON(entries)
	}
	if len(all) == 0 {
		e.tell("no workflows yet in %s; start one in Claude Code, e.g. %s DESCRIPTION", p.Dir, orchestrate.Slash(p, "coordinate"))
		return nil
	}
	e.printf("%s", status.List(listRows(entries, prices), e.width()))
	return nil
}

// listEntry is a workflow of `flowstate list --json`: its summary, and
// how long its run took, what it spent and, with prices, cost (none for
// a workflow that cannot be read).
type listEntry struct {
	store.Summary
	DurationMs   *int64           `json:"duration_ms,omitempty"`
	Tokens       *timeline.Tokens `json:"tokens,omitempty"`
	Cost         *float64         `json:"cost,omitempty"`
	Currency     string           `json:"currency,omitempty"`
	CostComplete *bool            `json:"cost_complete,omitempty"`
}

func (e *env) listEntry(p *store.Project, s store.Summary, prices *usage.Prices) listEntry {
	entry := listEntry{Summary: s}
	w, err := p.Workflow(s.ID)
	if err != nil {
		return entry
	}
	r, err := e.run(w)
	if err != nil {
		return entry
	}
	d := r.timeline.Document(prices)
	entry.DurationMs, entry.Tokens = &d.DurationMs, &d.Tokens
	entry.Cost, entry.Currency, entry.CostComplete = d.Cost, d.Currency, d.CostComplete
	return entry
}

// listRows are the entries as the table shows them, the money in one
// precision.
func listRows(entries []listEntry, prices *usage.Prices) []status.Row {
	var costs []float64
	for _, e := range entries {
		if e.Cost != nil {
			costs = append(costs, *e.Cost)
		}
	}
	places := usage.Decimals(costs...)
	rows := make([]status.Row, len(entries))
	for i, e := range entries {
		rows[i].Summary = e.Summary
		if e.DurationMs != nil {
			rows[i].Took = status.Duration(time.Duration(*e.DurationMs) * time.Millisecond)
			rows[i].Tokens = usage.Tokens(e.Tokens.Total)
		}
		if e.Cost != nil {
			rows[i].Cost = prices.MoneyIn(*e.Cost, places)
			if !*e.CostComplete {
				rows[i].Cost = "≥" + rows[i].Cost // a model without a price is left out
			}
		}
	}
	return rows
}

// lookOptions are status's flags.
type lookOptions struct{ json, timeline bool }

func (e *env) status(w *store.Workflow, o lookOptions) error {
	if o.json && o.timeline {
		return fail.Usagef("status: --json and --timeline exclude each other")
	}
	r, err := e.run(w)
	if err != nil {
		return err
	}
	prices := e.prices()
	switch {
	case o.json:
		v := checkpoint.HeadOf(r.doc)
		return e.printJSON(statusDoc{
			WorkflowID: w.ID, Command: v.Command, Scope: v.Scope, Status: v.Status, CurrentState: v.CurrentState,
			Description: v.Description, Document: r.timeline.Document(prices),
		})
	case o.timeline:
		e.printf("%s", status.Timeline(r.timeline, e.width(), e.colorful()))
		return nil
	}
	h := hints(w)
	e.printf("%s", status.Render(status.Input{ID: w.ID, Checkpoint: r.doc, Events: r.events, Machine: r.machine, Now: r.now,
		StuckAfter: r.stuck, Color: e.colorful(), Timeline: &r.timeline, Prices: prices, Width: e.width(), Project: w.P.Dir,
		Resume: h.Resume, Retry: h.Retry, Approve: h.Approve, Reject: h.Reject}))
	return nil
}

// hints are the commands that act on w as the user types them in
// Claude Code (orchestrate names them, as for the Stop hook).
func hints(w *store.Workflow) status.Hints {
	return status.Hints{Resume: orchestrate.ResumeHint(w), Retry: orchestrate.RetryHint(w),
		Approve: orchestrate.Slash(w.P, "workflow-approve"), Reject: orchestrate.Slash(w.P, "workflow-reject")}
}

// statusDoc is `flowstate status --json`.
type statusDoc struct {
	WorkflowID   string `json:"workflow_id"`
	Command      string `json:"command"`
	Scope        string `json:"scope"`
	Status       string `json:"status"`
	CurrentState string `json:"current_state"`
	Description  string `json:"description"`
	timeline.Document
}

func (e *env) history(w *store.Workflow, asJSON bool) error {
	r, err := e.run(w)
	if err != nil {
		return err
	}
	entries, skipped := history.Parse(r.events, r.timeline.Workers())
	if skipped > 0 {
		e.warn("workflow %s: %s of %s skipped", w.ID, status.Count(skipped, "damaged line"), w.EventsPath())
	}
	prices := e.prices()
	if asJSON {
		doc := r.timeline.Document(prices)
		return e.printJSON(history.Document{WorkflowID: w.ID, Events: entries, Agents: doc.Agents, Tokens: doc.Tokens})
	}
	e.printf("%s", history.Render(entries, e.width()))
	e.printf("%s", term.Fit(history.Spent(r.timeline, prices), e.width()))
	return nil
}

func (e *env) approve(w *store.Workflow, note, budget string) error {
	if err := e.userAsked(w, "workflow-approve", "approve"); err != nil {
		return err
	}
	fromStdin := note == "-"
	note, err := e.text("--note", note)
	if err != nil {
		return err
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(note), "--budget"); ok && fromStdin && budget == "" {
		budget, note, _ = strings.Cut(strings.TrimLeft(rest, " \t="), " ")
		note = strings.TrimSpace(note)
	}
	if budget != "" {
		return e.approveBudget(w, budget, note)
	}
	state, err := sm.Approve(w, e.actor(), note)
	if err != nil {
		return err
	}
	e.tell("workflow %s approved into %s; continue it with %s", w.ID, state, orchestrate.ResumeHint(w))
	return e.printOutcome(w)
}

// approveBudget lets w spend amount more than it has spent.
func (e *env) approveBudget(w *store.Workflow, amount, note string) error {
	more, err := usage.ParseBudget(amount)
	if err != nil {
		return fail.Usagef("--budget: %v", err)
	}
	l, err := e.limits()
	if err != nil {
		return err
	}
	limit, err := sm.ApproveBudget(w, e.actor(), more, l, note)
	if err != nil {
		return err
	}
	e.tell("workflow %s may spend %s more: its limit is %s; continue it with %s", w.ID, more, limit, orchestrate.ResumeHint(w))
	return e.printOutcome(w)
}

func (e *env) reject(w *store.Workflow, reason string) error {
	if err := e.userAsked(w, "workflow-reject", "reject"); err != nil {
		return err
	}
	reason, err := e.text("--reason", reason)
	if err != nil {
		return err
	}
	to, err := sm.Reject(w, e.actor(), reason)
	if err != nil {
		return err
	}
	e.tell("workflow %s sent back to %s; %s does %s again with your reason", w.ID, to, orchestrate.ResumeHint(w), to)
	return e.printOutcome(w)
}

func (e *env) pause(w *store.Workflow, reason string) error {
	reason, err := e.text("--reason", reason)
	if err != nil {
		return err
	}
	if err := sm.Pause(w, e.actor(), reason); err != nil {
		return err
	}
	return e.printOutcome(w)
}

func (e *env) unpause(w *store.Workflow) error {
	if err := e.userAsked(w, orchestrate.ResumeCommand, "unpause"); err != nil {
		return err
	}
	if _, err := sm.Unpause(w, e.actor()); err != nil {
		return err
	}
	return e.printOutcome(w)
}

func (e *env) cancel(w *store.Workflow, reason string) error {
	reason, err := e.text("--reason", reason)
	if err != nil {
		return err
	}
	if err := sm.Cancel(w, e.actor(), reason); err != nil {
		return err
	}
	return e.printOutcome(w)
}

func (e *env) rewind(w *store.Workflow, state, reason string) error {
	reason, err := e.text("--reason", reason)
	if err != nil {
		return err
	}
	if err := sm.Rewind(w, state, e.actor(), reason); err != nil {
		return err
	}
	return e.printOutcome(w)
}

// userAsked refuses a person's decision (verb, asked for with the slash
// command command) that a model runs on its own
// (orchestrate.RefuseUnasked), whatever the step did to its own
// environment: where it runs is read from its ancestors too.
func (e *env) userAsked(w *store.Workflow, command, verb string) error {
	v := ancestry.Judge(e.Getenv(ancestry.SessionVar), ancestry.Ancestors(os.Getpid()))
	return orchestrate.RefuseUnasked(w, v.Session, v.Inside, command, verb)
}

// actor is the person running the command (sm.ActorFrom).
func (e *env) actor() sm.Actor { return sm.ActorFrom(e.Getenv) }

// printOutcome prints where the workflow stands after a person's command.
func (e *env) printOutcome(w *store.Workflow) error {
	st, err := sm.Current(w)
	if err != nil {
		return err
	}
	e.printf("%s", st.Outcome())
	return nil
}
