package app

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// phaseCommands are the steps of the orchestrator commands. Each prints
// KEY=VALUE lines and a NEXT=<section> for the command markdown
// (docs/command-protocol.md); lib/orchestrate runs them.
func phaseCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "phase-start",
			Usage:     "start a workflow from a command's arguments (stdin); print NEXT=classify or NEXT=phase",
			UsageText: "flowstate phase-start --command NAME [--sequential] [--require-scope] [--classified] < ARGUMENTS",
			Description: "stdin is the command's arguments as typed: [--scope SCOPE] DESCRIPTION. With a scope, or with\n" +
				"FLOWSTATE_CLASSIFICATION=offline, the workflow is created at once (NEXT=phase). Otherwise it prints\n" +
				"DESCRIPTION= and CLASSIFICATION_PATH= for the workflow-classifier agent (NEXT=classify); run it\n" +
				"again with --classified to create the workflow from the JSON the agent wrote.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "command", Usage: "the command running the workflow, e.g. coordinate"},
				&cli.BoolFlag{Name: "sequential", Usage: "one worker at a time and no sub-supervisors (/supervise)"},
				&cli.BoolFlag{Name: "require-scope", Usage: "the arguments must start with --scope SCOPE (/orchestrate)"},
				&cli.BoolFlag{Name: "classified", Usage: "the classifier has written its JSON; create the workflow"},
			},
			Action: e.phaseStart,
		},
		{
			Name:      "phase-plan",
			Usage:     "advance past finished states and print the next batch of workers as KEY=VALUE lines",
			UsageText: "flowstate phase-plan [--supervisor]",
			Description: "Prints STATE, AGENT, ARTIFACT, DESCRIPTION, CONTEXT, WORKER_COUNT and TOPIC_i, OUTPUT_PATH_i\n" +
				"for each worker not yet recorded as completed. When the state's size calls for a sub-supervisor\n" +
				"it prints SUPERVISOR= and NEXT=supervised; when the workflow is finished, NEXT=done.\n" +
				"--supervisor (inside a sub-supervisor): plan the current state only, never delegate.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "supervisor", Usage: "called by a sub-supervisor agent"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				return e.printStep(orchestrate.Plan(w, c.Bool("supervisor")))
			}),
		},
		{
			Name:      "phase-verify",
			Usage:     "check and record the artifacts of the batch phase-plan printed; print NEXT",
			UsageText: "flowstate phase-verify [--supervisor]",
			Description: "Each worker's artifact must exist and parse (report, plan or test results, protocol section 6).\n" +
				"Missing or unreadable: the worker is recorded failed and the command stops naming the file.\n" +
				"Failing tests spend one retry (sm-fail, sm-retry) and lead to debug; exit 3 once spent.\n" +
				"--supervisor: never stop; loop with NEXT=workers, then print the SUPERVISOR_COMPLETE or\n" +
				"SUPERVISOR_FAILED line.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "supervisor", Usage: "called by a sub-supervisor agent"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				return e.printStep(orchestrate.Verify(w, c.Bool("supervisor")))
			}),
		},
		{
			Name:      "resume",
			Usage:     "point this session at an unfinished workflow and print NEXT=phase",
			UsageText: "flowstate resume [ID|-]   (- reads an optional ID from stdin)",
			Description: "Without an ID: this session's workflow if unfinished, else the project's only unfinished one.\n" +
				"phase-plan then re-runs only unfinished states and workers.",
			Action: e.resume,
		},
	}
}

func (e *env) phaseStart(c *cli.Context) error {
	command := c.String("command")
	if command == "" {
		return fail.Usagef("phase-start needs --command NAME")
	}
	raw, err := limit.ReadAll(e.Stdin, "command arguments")
	if err != nil {
		return err
	}
	scope, desc, err := orchestrate.ParseArgs(command, string(raw), c.Bool("require-scope"))
	if err != nil {
		return err
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	return e.printStep(orchestrate.Start(p, orchestrate.Request{Command: command, Scope: scope, Description: desc,
		Sequential: c.Bool("sequential"), Classified: c.Bool("classified"),
		Session: e.Getenv("CLAUDE_CODE_SESSION_ID"), Mode: e.Getenv("FLOWSTATE_CLASSIFICATION")}))
}

func (e *env) resume(c *cli.Context) error {
	if c.NArg() > 1 {
		return fail.Usagef("resume takes at most one workflow ID")
	}
	id := c.Args().First()
	if id == "-" {
		raw, err := limit.ReadAll(e.Stdin, "workflow id")
		if err != nil {
			return err
		}
		id = strings.TrimSpace(string(raw))
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	return e.printStep(orchestrate.Resume(p, id, e.selector(c)))
}

// printStep prints a step's output and its warnings, or returns its error.
func (e *env) printStep(out orchestrate.Output, err error) error {
	if err != nil {
		return err
	}
	for _, w := range out.Warnings {
		e.warn("%s", w)
	}
	e.printf("%s", out)
	return nil
}
