package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// orchestrateCommands are the steps of the orchestrator commands. Each
// prints KEY=VALUE lines and a NEXT=<section> for the command markdown
// (docs/command-protocol.md); lib/orchestrate runs them. classify is the
// offline classification a user may choose instead of the agent.
func (e *env) orchestrateCommands() []*cli.Command {
	var (
		start          startOptions
		plan, verify   stepOptions
		retryFailed    bool
		resumeLaunches bool
		launched       launchedOptions
	)
	return []*cli.Command{
		{
			Name:      "phase-start",
			Usage:     "start a workflow from a command's arguments (stdin) and plan its first phase, or print NEXT=classify",
			UsageText: "flowstate phase-start --command NAME [--machine FILE] [--sequential] [--require-scope] [--classified] < ARGUMENTS",
			Description: "stdin is the command's arguments as typed: [--scope SCOPE] [--approve-plan] [--budget AMOUNT]\n" +
				"DESCRIPTION, or --resume [--retry-failed] [WORKFLOW_ID] to continue the command's unfinished\n" +
				"workflow (what resume does, for this command's workflows only). --machine is the command's\n" +
				"workflow definition (a machine with \"work\": docs/writing-an-orchestrator.md), kept with the\n" +
				"workflow; without it, the built-in definition. A definition with one scope, or --scope SCOPE in\n" +
				"the arguments, needs no classifier.\n" +
				"--approve-plan (or FLOWSTATE_APPROVE_PLAN=1) gates the state after the plan: a person approves the\n" +
				"plan first (flowstate approve), the command stops there with NEXT=stopped. --budget AMOUNT (one\n" +
				"word: 500k tokens, or 5USD) is the workflow's spend limit (see sm-init). With a scope, or with\n" +
				"FLOWSTATE_CLASSIFICATION=offline, the workflow is created at once and its first phase planned (what\n" +
				"phase-plan prints). Otherwise it prints DESCRIPTION= and CLASSIFICATION_PATH= for the\n" +
				"workflow-classifier agent (NEXT=classify); run it again with --classified to create the workflow\n" +
				"from the JSON the agent wrote. The same request again in the same session keeps its workflow.\n" +
				"--launch: the command has the workflow engine's sections (## launch, ## launched, ## steps); where\n" +
				"Claude Code offers the Workflow tool it prints WORKFLOW_NAME, WORKFLOW_ARGS and NEXT=launch, for one\n" +
				"Workflow call that runs the whole workflow as a Claude Code workflow (docs/writing-an-orchestrator.md).",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "command", Usage: "the command running the workflow, e.g. coordinate", Destination: &start.command},
				&cli.StringFlag{Name: "machine", Usage: "the command's workflow definition JSON `FILE` (default: the built-in one)", Destination: &start.machine},
				&cli.BoolFlag{Name: "sequential", Usage: "one worker at a time and no sub-supervisors (/supervise)", Destination: &start.sequential},
				&cli.BoolFlag{Name: "require-scope", Usage: "the arguments must start with --scope SCOPE (/orchestrate)", Destination: &start.requireScope},
				&cli.BoolFlag{Name: "classified", Usage: "the classifier has written its JSON; create the workflow (waits while the classifier is at work; NEXT=classified when it is not done by then)", Destination: &start.classified},
				launchFlag(&start.launch),
				waitFlag(&start.wait),
			},
			Action: func(*cli.Context) error { return e.phaseStart(start) },
		},
		{
			Name:      "phase-plan",
			Usage:     "record what was delivered, advance past finished states and print the next batch of workers",
			UsageText: "flowstate phase-plan [--supervisor]",
			Description: "First records the workers an earlier plan handed out that delivered (a block run again, or a\n" +
				"model back after it stopped early, loses no work), and merges the branches of an isolated state's\n" +
				"workers that are not merged yet, then prints AGENT, SPEC_DIR, WORKER_COUNT, ISOLATED_COUNT and\n" +
				"TOPIC_i, OUTPUT_i (relative to SPEC_DIR) for each worker to run now, and NEXT=work. Workers\n" +
				"recorded completed, or at work already (the hooks record agents' starts and stops), are left out.\n" +
				"The workflow's request, the artifacts to read first (from the project's root), the earlier\n" +
				"workers that did not deliver and the format the files must have are in SPEC_DIR/briefs/AGENT.md.\n" +
				"A batch whose workers run each in a git worktree of its own (the definition's isolation) is\n" +
				"counted in ISOLATED_COUNT, WORKER_COUNT=0, with SPEC_DIR from the project's root and BRIEF the\n" +
				"brief's path (docs/writing-an-orchestrator.md). When the state's size calls for a sub-supervisor\n" +
				"it prints only STATE=, SUPERVISOR= and NEXT=supervised; when agents are at work and nothing else\n" +
				"is left, NEXT=verify; when the workflow is finished, WORKFLOW_ID, FINAL_STATE, ARTIFACTS_DIR,\n" +
				"ARTIFACT_COUNT and NEXT=done.\n" +
				"--supervisor (inside a sub-supervisor): plan the current state only, never delegate.",
			Flags:  []cli.Flag{supervisorFlag(&plan.supervisor), e.workflowFlag()},
			Action: e.onStep(orchestrate.Plan, &plan),
		},
		{
			Name:      "phase-verify",
			Usage:     "check and record the artifacts of the batch handed out, then plan the next one",
			UsageText: "flowstate phase-verify [--supervisor]",
			Description: "Checks the workers the last phase-plan handed out, and any other an agent was launched for.\n" +
				"While their agents are at work (launched in the background, say) it waits up to --wait, then\n" +
				"prints RUNNING= and NEXT=verify to be run again. Each artifact must exist and parse (report, plan\n" +
				"or test results, docs/command-protocol.md section 6). Missing or unreadable: the worker is recorded\n" +
				"failed and the command stops naming the file. The branches of an isolated state's workers are\n" +
				"merged into the working branch in plan order, each merge recorded before the next; a conflict is\n" +
				"aborted, then its worker runs again or a person merges it (exit 6), as the definition says.\n" +
				"Failing tests spend one retry (sm-fail, sm-retry) and lead to debug; exit 3 once spent. Once the\n" +
				"batch is recorded it plans the next one and prints what phase-plan prints, so a phase costs one\n" +
				"bash block and one task block. Run again, it prints what\n" +
				"it printed: nothing is checked twice. --supervisor: never stop; plan the next wave (NEXT=work),\n" +
				"then print the SUPERVISOR_COMPLETE or SUPERVISOR_FAILED line with the workers' counts (the\n" +
				"aggregate is in the checkpoint).",
			Flags:  []cli.Flag{supervisorFlag(&verify.supervisor), waitFlag(&verify.wait), e.workflowFlag()},
			Action: e.onStep(orchestrate.Verify, &verify),
		},
		{
			Name:      "resume",
			Usage:     "point this session at an unfinished workflow and plan its next step",
			UsageText: "flowstate resume [--retry-failed] [ID|-]   (- reads [--retry-failed] [ID] from stdin)",
			Description: "Without an ID: this session's workflow if unfinished, else the project's only unfinished one.\n" +
				"It prints what phase-plan prints: only unfinished states and workers are run again.\n" +
				"--retry-failed also runs again the workers whose failure was accepted (partial failure: enough\n" +
				"others delivered), reopening the workflow if it had finished; when they belong to a state the\n" +
				"workflow went on from, it goes back there, keeping what the others delivered, and the states\n" +
				"after it are done again (their earlier work stays in the rewinds history).",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "retry-failed", Usage: "run again the workers whose failure was accepted", Destination: &retryFailed},
				launchFlag(&resumeLaunches)},
			Action: func(c *cli.Context) error { return e.resume(c, retryFailed, resumeLaunches) },
		},
		{
			Name:      "phase-launched",
			Usage:     "after a workflow's launch as a Claude Code workflow: print how it ended, or the launch again",
			UsageText: "flowstate phase-launched [--steps]",
			Description: "The block a command runs once Claude Code notifies it that the workflow it launched ended\n" +
				"(docs/command-protocol.md): what the workflow's last step answered, as the steps engine's last block\n" +
				"prints it (NEXT=done with FINAL_STATE and ARTIFACT_COUNT, NEXT=stopped with the MESSAGE for the user,\n" +
				"or the step's error and exit code). While the launch was not made it prints it again (NEXT=launch);\n" +
				"while its script is at work it waits up to --wait, then prints NEXT=launched. A launch whose script\n" +
				"ended early is made again, and one whose steps never reached flowstate (no hooks) goes on with the\n" +
				"steps engine. --steps: Claude Code refused the Workflow call as unavailable; go on with the steps\n" +
				"engine (prints what phase-plan prints).",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "steps", Usage: "go on with the steps engine: Claude Code refused the Workflow call", Destination: &launched.steps},
				waitFlag(&launched.wait)},
			Action: func(*cli.Context) error { return e.phaseLaunched(launched) },
		},
		{
			Name:      "classify",
			Usage:     "classify a workflow description offline and print the classifier JSON",
			UsageText: "flowstate classify DESCRIPTION",
			Description: "Deterministic rules, no model and no network: for when the user chooses offline\n" +
				"classification (FLOWSTATE_CLASSIFICATION=offline), never a silent fallback for the agent.\n" +
				"Prints the same JSON as the workflow-classifier agent, ready for sm-init --classification;\n" +
				fmt.Sprintf("a confidence below %g means no rule matched and the scope is a guess.", classify.MinConfidence),
			Action: e.classify,
		},
	}
}

// startOptions are phase-start's flags.
type startOptions struct {
	command, machine                             string
	sequential, requireScope, classified, launch bool
	wait                                         *time.Duration // nil: not given
}

// launchedOptions are phase-launched's flags.
type launchedOptions struct {
	steps bool
	wait  *time.Duration
}

func launchFlag(dst *bool) cli.Flag {
	return &cli.BoolFlag{Name: strings.TrimPrefix(orchestrate.LaunchFlag, "--"), Usage: "the command can run as a Claude Code workflow: it has the sections ## launch, ## launched and ## steps", Destination: dst}
}

func (e *env) phaseStart(o startOptions) error {
	command := o.command
	if command == "" {
		return fail.Usagef("phase-start needs --command NAME")
	}
	// Before anything: a start that first classifies creates the
	// workflow a step later, and the name would fail only there.
	if err := protocol.CheckCommandName(strings.TrimPrefix(command, "/")); err != nil {
		return fmt.Errorf("--command: %w", err)
	}
	raw, err := limit.ReadAll(e.Stdin, "command arguments")
	if err != nil {
		return err
	}
	p, opts, err := e.projectOptions(stepOptions{wait: o.wait})
	if err != nil {
		return err
	}
	m := machine.Default()
	var machineJSON []byte
	definition := o.machine
	if definition != "" {
		// Relative to the project, wherever the block runs: a command names
		// its definition as .claude/flows/NAME.json.
		if !filepath.IsAbs(definition) {
			definition = filepath.Join(p.Dir, definition)
		}
		if m, machineJSON, err = e.loadMachine(definition); err != nil {
			return err
		}
	}
	var scopes []string
	if o.requireScope {
		scopes = m.ScopeNames()
	}
	a, err := orchestrate.ParseArgs(command, string(raw), scopes, orchestrate.StartHint(command, definition))
	if err != nil {
		return err
	}
	if _, err := e.budget(a.Budget); err != nil {
		return err
	}
	// A project that wants every plan approved says so in its settings:
	// "env": {"FLOWSTATE_APPROVE_PLAN": "1"} in .claude/settings.json.
	switch v := e.Getenv("FLOWSTATE_APPROVE_PLAN"); v {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		a.ApprovePlan = true
	default:
		return fail.Usagef("FLOWSTATE_APPROVE_PLAN=%q: use 1 (every plan waits for approval) or 0", v)
	}
	flow := ""
	if o.launch && !o.classified {
		flow = e.flowOf(p, command, m, definition)
	}
	if a.Resume {
		r := a.ResumeRequest
		r.Command, r.Actor, r.Flow = command, e.actor(), flow
		return e.printStep(p)(orchestrate.Resume(p, r, e.selector(), opts))
	}
	if machineJSON == nil {
		m = nil // the built-in definition
	}
	return e.printStep(p)(orchestrate.Start(p, orchestrate.Request{Command: command, Scope: a.Scope, Description: a.Description,
		ApprovePlan: a.ApprovePlan, Budget: a.Budget, Sequential: o.sequential, Classified: o.classified, Options: opts,
		Session: e.Getenv("CLAUDE_CODE_SESSION_ID"), Mode: e.Getenv("FLOWSTATE_CLASSIFICATION"),
		Machine: m, MachineJSON: machineJSON, Definition: definition, Flow: flow}))
}

// flowOf is the saved workflow that runs command's definition m (at
// definition, "" for the built-in one) on the workflow engine, as the
// Workflow tool names it; "" when the steps engine runs it
// (lib/engine decides).
func (e *env) flowOf(p *store.Project, command string, m *machine.Machine, definition string) string {
	in := engine.Read(e.Getenv, p.Dir)
	in.Definition = m.Engine
	in.Hooks = !orchestrate.PromptedAt(p, e.Getenv("CLAUDE_CODE_SESSION_ID")).IsZero()
	dir, root := p.Dir, e.Getenv(engine.PluginRootEnv)
	if definition != "" {
		// A plugin's command keeps its definition in <root>/flows.
		if r := filepath.Dir(filepath.Dir(definition)); engine.PluginName(r) != "" {
			dir, root = "", r
		} else {
			root = ""
		}
	}
	saved, ok := engine.FindSaved(dir, root, command)
	in.Saved = ok
	if choice, _ := engine.Choose(in); choice != engine.Workflow {
		return ""
	}
	return saved.Name
}

// onStep runs a phase step (phase-plan, phase-verify) on the block's
// workflow, with the options its flags filled (read when it runs). In a
// Claude Code session whose command has not created its workflow yet (the
// model skipped the classified start, or the start), it answers where the
// command really is instead of failing: the start's work, done now
// (orchestrate.Unstarted).
func (e *env) onStep(step func(*store.Workflow, orchestrate.Options) (orchestrate.Output, error), flags *stepOptions) cli.ActionFunc {
	return func(c *cli.Context) error {
		if _, err := args(c); err != nil {
			return err
		}
		o, err := e.phaseOptions(*flags)
		if err != nil {
			return err
		}
		p, err := e.Project()
		if err != nil {
			return err
		}
		sel := e.selector()
		if !o.Supervisor && sel.Flag == "" && sel.Env == "" {
			if out, ok := orchestrate.OnWorkflowEngine(p, sel.Session); ok {
				return e.printStep(p)(out, nil)
			}
			if out, ok, err := orchestrate.Unstarted(p, sel.Session, e.Getenv("FLOWSTATE_CLASSIFICATION"), o); ok || err != nil {
				return e.printStep(p)(out, err)
			}
		}
		w, err := p.Resolve(sel)
		if err != nil && !o.Supervisor && fail.Code(err) == fail.Usage {
			if out, ok := orchestrate.NoStart(p, sel); ok {
				return e.printStep(p)(out, nil)
			}
		}
		if err != nil {
			return err
		}
		return e.printStep(w.P)(step(w, o))
	}
}

func (e *env) resume(c *cli.Context, retryFailed, launches bool) error {
	if c.NArg() > 1 {
		return fail.Usagef("resume takes at most one workflow ID")
	}
	r := orchestrate.ResumeRequest{ID: c.Args().First()}
	if r.ID == "-" {
		raw, err := limit.ReadAll(e.Stdin, "workflow id")
		if err != nil {
			return err
		}
		if r, err = orchestrate.ParseResumeArgs(string(raw)); err != nil {
			return err
		}
	}
	r.RetryFailed = r.RetryFailed || retryFailed
	r.Actor = e.actor()
	p, o, err := e.projectOptions(stepOptions{})
	if err != nil {
		return err
	}
	if launches {
		r.Flow = e.flowOf(p, orchestrate.ResumeCommand, machine.Default(), "")
	}
	return e.printStep(p)(orchestrate.Resume(p, r, e.selector(), o))
}

// phaseLaunched is the block after a launch (orchestrate.Launched).
func (e *env) phaseLaunched(flags launchedOptions) error {
	p, o, err := e.projectOptions(stepOptions{wait: flags.wait})
	if err != nil {
		return err
	}
	return e.printStep(p)(orchestrate.Launched(p, orchestrate.LaunchedRequest{Sel: e.selector(), Mode: e.Getenv("FLOWSTATE_CLASSIFICATION"),
		ToSteps: flags.steps, Options: o}))
}

// stepOptions are the flags of the phase steps: --supervisor (phase-plan,
// phase-verify) and --wait (phase-start, phase-verify).
type stepOptions struct {
	supervisor bool
	wait       *time.Duration // nil: not given
}

func supervisorFlag(dst *bool) cli.Flag {
	return &cli.BoolFlag{Name: "supervisor", Usage: "called by a sub-supervisor agent", Destination: dst}
}

// waitFlag bounds how long a step waits for agents at work.
func waitFlag(dst **time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "wait", Usage: "how long to wait for agents still at work before answering NEXT=... to be run again (default: FLOWSTATE_WAIT, else 60s)", Action: given(dst)}
}

// phaseOptions are a phase step's flags and environment: --supervisor,
// --wait (FLOWSTATE_WAIT), and FLOWSTATE_STUCK_AFTER, the time after
// which an agent at work counts as stuck.
func (e *env) phaseOptions(flags stepOptions) (orchestrate.Options, error) {
	o := orchestrate.Options{Supervisor: flags.supervisor, Cwd: e.Cwd, Agent: e.Getenv(orchestrate.AgentEnv)}
	var err error
	if o.Waiting.For, err = e.duration("--wait", flags.wait, "FLOWSTATE_WAIT", orchestrate.DefaultWait); err != nil {
		return o, err
	}
	if o.Limits, err = e.limits(); err != nil {
		return o, err
	}
	o.Waiting.StuckAfter, err = e.envDuration("FLOWSTATE_STUCK_AFTER", orchestrate.DefaultStuckAfter)
	return o, err
}

// projectOptions are the project and a step's options, for the steps
// that find their workflow themselves (phase-start, resume).
func (e *env) projectOptions(flags stepOptions) (*store.Project, orchestrate.Options, error) {
	p, err := e.Project()
	if err != nil {
		return nil, orchestrate.Options{}, err
	}
	o, err := e.phaseOptions(flags)
	return p, o, err
}

// printStep records how a step ended (orchestrate.StepEnded) and prints
// its output and warnings.
func (e *env) printStep(p *store.Project) func(orchestrate.Output, error) error {
	return func(out orchestrate.Output, err error) error {
		if err := orchestrate.StepEnded(p, e.Getenv("CLAUDE_CODE_SESSION_ID"), err); err != nil {
			return err
		}
		for _, w := range out.Warnings {
			e.warn("%s", w)
		}
		e.printf("%s", out)
		return nil
	}
}

func (e *env) classify(c *cli.Context) error {
	a, err := args(c, "DESCRIPTION")
	if err != nil {
		return err
	}
	return e.printJSON(intent.Classify(a[0]))
}
