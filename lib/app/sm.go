package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/graph"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// smCommands create a workflow and move it through its state machine
// (lib/sm), and draw the machine (lib/graph).
func (e *env) smCommands() []*cli.Command {
	var (
		ini                      smInitOptions
		tr                       transitionOptions
		asJSON, failed           bool
		finishStatus, failure    string
		maxRetries               int
		machineFile, graphFormat string
	)
	return []*cli.Command{
		{
			Name:      "sm-init",
			Usage:     "create a workflow, print its id, and make it the session's current workflow",
			UsageText: "flowstate sm-init --description TEXT --command NAME (--scope SCOPE [--complexity 1-4] [--topics JSON] | --classification JSON) [--machine FILE] [--gate STATE[=MESSAGE]]... [--agents NAME,...] [--budget AMOUNT] [--workflow ID]",
			Description: "With --scope, the scope is given; with --classification, the classifier agent's JSON\n" +
				"(workflow_type, confidence, research_complexity, research_topics, reasoning) is validated\n" +
				"and its workflow_type becomes the scope. --classification @FILE reads the JSON from FILE.\n" +
				"--gate STATE (repeatable) adds an approval gate: the workflow enters STATE only once a person\n" +
				"runs `flowstate approve`; until then it waits (status awaiting_approval, sm-transition exit 6).\n" +
				"--budget AMOUNT is the workflow's spend limit (tokens, 500k, or money in the price table's\n" +
				"currency, 5USD; without it, the project's \"budget\" in " + usage.SettingsFile + "): once what it spent\n" +
				"reaches it, its next step or transition waits as at a gate until a person runs `flowstate approve\n" +
				"--budget AMOUNT` (or cancels it).\n" +
				"The workflow's agents (besides those of its machine's work) are those the command's own task\n" +
				"blocks launch (.claude/commands/NAME.md of the project or the user, NAME being --command or\n" +
				"the command the user typed), or those --agents names instead (a plugin's command names them):\n" +
				"in Claude Code the hooks then run them in the foreground, record them, keep their files from\n" +
				"the main thread, and send a model that stops early back to the section named after the\n" +
				"workflow's state. Run again with the same --command, --description and scope (a start block\n" +
				"repeated), it creates nothing and prints the workflow it created: the one --workflow names,\n" +
				"else the session's unfinished one.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "description", Usage: "what the workflow is for", Destination: &ini.description},
				&cli.StringFlag{Name: "command", Usage: "the command running it, e.g. coordinate", Destination: &ini.command},
				&cli.StringFlag{Name: "scope", Usage: "one of the machine's scopes", Destination: &ini.scope},
				&cli.IntFlag{Name: "complexity", Usage: "research complexity 1-4", DefaultText: "number of topics, else 2", Action: given(&ini.complexity)},
				&cli.StringFlag{Name: "topics", Usage: "research topics as a JSON array of strings", Action: given(&ini.topics)},
				&cli.StringFlag{Name: "classification", Usage: "classifier JSON, or @FILE", Destination: &ini.classification},
				&cli.Float64Flag{Name: "min-confidence", Value: classify.MinConfidence, Usage: "lowest classifier confidence accepted", Destination: &ini.minConfidence},
				&cli.StringFlag{Name: "machine", Usage: "custom state machine JSON `FILE`", Destination: &ini.machine},
				&cli.StringSliceFlag{Name: "gate", Usage: "approval gate before `STATE[=MESSAGE]` (repeatable; adds to the machine's gates)", Destination: &ini.gates},
				&cli.StringSliceFlag{Name: "agents", Usage: "agents that work for the workflow, `NAME[,NAME]` without a plugin prefix (repeatable)", Destination: &ini.agents},
				&cli.StringFlag{Name: "budget", Usage: "the workflow's spend limit: `AMOUNT` in tokens (500k) or money (5USD)", Destination: &ini.budget},
				e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.smInit(c, ini) },
		},
		{
			Name:      "sm-transition",
			Usage:     "move the workflow to STATE if the machine allows it",
			UsageText: "flowstate sm-transition STATE [--reason TEXT] [--from STATE] [--checkpoint JSON|@FILE]",
			Description: "STATE must follow the current state in the machine's table and be on the route of the\n" +
				"workflow's scope (or the recovery state of one on it, such as debug after test): else exit 3,\n" +
				"naming the allowed states or the scope's route. Already in STATE is success and writes no\n" +
				"transition. --from refuses (exit 3) unless the workflow is in that state (or already in\n" +
				"STATE). --checkpoint merges a JSON object into the checkpoint in the same locked write:\n" +
				"objects merge key by key, anything else replaces; flowstate's own fields (state_machine,\n" +
				"status, error_state, workflow_id, metadata, ...) cannot change this way. Bad JSON is\n" +
				"refused (exit 4) and nothing is written.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "reason", Usage: "why, recorded in the event log", Destination: &tr.reason},
				&cli.StringFlag{Name: "from", Usage: "the state the workflow must be in", Destination: &tr.from},
				&cli.StringFlag{Name: "checkpoint", Usage: "JSON object to merge into the checkpoint, or @FILE", Action: given(&tr.checkpoint)},
				e.workflowFlag(),
			},
			Action: e.onWorkflow(func(w *store.Workflow, a []string) error { return e.smTransition(w, a[0], tr) }, "STATE"),
		},
		{
			Name:      "sm-status",
			Usage:     "print the workflow's state as KEY=VALUE lines (or JSON)",
			UsageText: "flowstate sm-status [--json]",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON}, e.workflowFlag()},
			Action:    e.onWorkflow(func(w *store.Workflow, _ []string) error { return e.smStatus(w, asJSON) }),
		},
		{
			Name:      "sm-next",
			Usage:     "print the state after the current one on the scope's route, or done",
			UsageText: "flowstate sm-next [--failed]",
			Description: "With --failed, print the state that recovers the current one (test -> debug).\n" +
				"From a recovery state, print the state that failed. At the terminal state, print done.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "failed", Usage: "the current state's phase failed", Destination: &failed}, e.workflowFlag()},
			Action: e.onWorkflow(func(w *store.Workflow, _ []string) error { return e.smNext(w, failed) }),
		},
		{
			Name:      "sm-finish",
			Usage:     "mark the workflow finished: complete (in its terminal state), failed or abandoned",
			UsageText: "flowstate sm-finish [--status complete|failed|abandoned]",
			Description: "A workflow stays active in its terminal state while that last phase runs; finish it\n" +
				"when the phase's work is done. Entering a state with no way out (complete) finishes it.",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "status", Value: checkpoint.Complete, Usage: "complete, failed or abandoned", Destination: &finishStatus}, e.workflowFlag()},
			Action: e.onWorkflow(func(w *store.Workflow, _ []string) error { return sm.Finish(w, finishStatus) }),
		},
		{
			Name:      "sm-fail",
			Usage:     "record an error for the current state in the checkpoint's error_state",
			UsageText: "flowstate sm-fail --error TEXT",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "error", Usage: "what failed", Destination: &failure}, e.workflowFlag()},
			Action:    e.onWorkflow(func(w *store.Workflow, _ []string) error { return sm.Fail(w, failure) }),
		},
		{
			Name:      "sm-retry",
			Usage:     "spend one retry of the failed state; exit 3 once the retries are used up",
			UsageText: "flowstate sm-retry [--max N]",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "max", Value: sm.DefaultMaxRetries, Usage: "retries allowed per state", Destination: &maxRetries},
				e.workflowFlag(),
			},
			Action: e.onWorkflow(func(w *store.Workflow, _ []string) error { return e.smRetry(w, maxRetries) }),
		},
		{
			Name:      "graph",
			Usage:     "draw the state machine (default or --machine FILE) as a Mermaid or Graphviz dot diagram",
			UsageText: "flowstate graph [--machine FILE] [--format mermaid|dot]",
			Description: "States that end a scope are marked: in Mermaid an edge to [*] labelled with the scopes and\n" +
				"a bold border, in dot a double border. Recovery transitions (test -> debug) are labelled\n" +
				"\"on failure\". The output is deterministic, so docs can embed it and check it for drift.\n" +
				"--machine FILE is checked as phase-start checks a workflow definition: what a run of it would\n" +
				"refuse at any step is exit 4 here, naming the state and the field.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "machine", Usage: "custom state machine JSON `FILE` (default: the built-in machine)", Destination: &machineFile},
				&cli.StringFlag{Name: "format", Value: graph.Formats[0], Usage: strings.Join(graph.Formats, " or "), Destination: &graphFormat},
			},
			Action: func(c *cli.Context) error { return e.graph(c, machineFile, graphFormat) },
		},
	}
}

// smInitOptions are sm-init's flags.
type smInitOptions struct {
	description, command, scope, classification, machine string
	complexity                                           *int    // nil: not given
	topics                                               *string // nil: not given
	minConfidence                                        float64
	gates, agents                                        cli.StringSlice
	budget                                               string
}

func (e *env) smInit(c *cli.Context, o smInitOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	m, machineJSON, err := e.loadMachine(o.machine)
	if err != nil {
		return err
	}
	cls, err := e.classification(o, m)
	if err != nil {
		return err
	}
	gates, err := machine.ParseGates(o.gates.Value())
	if err != nil {
		return err
	}
	agents, err := agentNames(o.agents.Value())
	if err != nil {
		return err
	}
	budget, err := e.budget(o.budget)
	if err != nil {
		return err
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	session := e.Getenv("CLAUDE_CODE_SESSION_ID")
	if len(agents) == 0 && session != "" {
		// A command on the low-level API has the agents its own task
		// blocks launch; --agents, when given, names them instead.
		agents = orchestrate.CommandAgents(p, e.Getenv("HOME"), session, o.command)
	}
	w, _, err := sm.Init(p, sm.InitParams{
		ID:             e.selector().Flag,
		Description:    o.description,
		Command:        o.command,
		Scope:          cls.WorkflowType,
		Classification: cls,
		Machine:        m,
		MachineJSON:    machineJSON,
		Session:        session,
		Gates:          gates,
		Agents:         agents,
		Budget:         budget,
		Since:          orchestrate.PromptedAt(p, session),
	})
	if err != nil {
		return err
	}
	// A workflow with agents of its own is held to the protocol by the
	// hooks like the plugin's commands: they need the session's run.
	if session != "" && (len(agents) > 0 || machineJSON != nil && len(m.AgentNames()) > 0) {
		if err := orchestrate.Follow(p, session, o.command, w.ID); err != nil {
			return err
		}
	}
	e.printf("%s\n", w.ID)
	return nil
}

// agentNames reads --agents: names, comma separated or repeated, without
// a plugin prefix.
func agentNames(given []string) ([]string, error) {
	var out []string
	for _, g := range given {
		for _, n := range strings.Split(g, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if !machine.ValidAgentName(n) {
				return nil, fail.Usagef("--agents %q: %q is not an agent name; give the names of agent files without .md or a plugin prefix, e.g. --agents file-reviewer", g, n)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// classification builds the classification from either --classification
// (validated classifier output) or --scope with optional complexity and
// topics (given by the user, so confidence 1).
func (e *env) classification(o smInitOptions, m *machine.Machine) (classify.Classification, error) {
	switch {
	case o.classification != "" && o.scope != "":
		return classify.Classification{}, fail.Usagef("sm-init: give either --scope or --classification, not both")
	case o.classification != "":
		if o.complexity != nil || o.topics != nil {
			return classify.Classification{}, fail.Usagef("sm-init: --complexity and --topics come from --classification; drop them")
		}
		data, err := e.flagJSON("--classification", o.classification)
		if err != nil {
			return classify.Classification{}, err
		}
		// classify's errors name the classification already.
		return classify.ParseFor(data, o.minConfidence, m.ScopeNames())
	case o.scope != "":
		return classify.Given(o.scope, deref(o.complexity), deref(o.topics))
	default:
		return classify.Classification{}, fail.Usagef("sm-init needs --scope SCOPE or --classification JSON")
	}
}

// loadMachine reads and validates a custom machine, or returns the
// default one for an empty path.
func (e *env) loadMachine(path string) (*machine.Machine, []byte, error) {
	if path == "" {
		return machine.Default(), nil, nil
	}
	b, err := e.readFile("--machine", path)
	if err != nil {
		return nil, nil, err
	}
	m, err := machine.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err) // machine's errors say "machine:"
	}
	return m, b, nil
}

// transitionOptions are sm-transition's flags.
type transitionOptions struct {
	reason, from string
	checkpoint   *string // nil: not given
}

func (e *env) smTransition(w *store.Workflow, state string, o transitionOptions) error {
	var opts []sm.Option
	if o.from != "" {
		opts = append(opts, sm.From(o.from))
	}
	if o.checkpoint != nil {
		patch, err := e.flagJSON("--checkpoint", *o.checkpoint)
		if err != nil {
			return err
		}
		opts = append(opts, sm.WithCheckpoint(patch))
	}
	// A workflow that reached its spend limit waits here (exit 6), as the
	// phase steps make it wait.
	l, err := e.limits()
	if err != nil {
		return err
	}
	if err := sm.CheckBudget(w, l); err != nil {
		return err
	}
	_, err = sm.Transition(w, state, o.reason, opts...)
	return err
}

func (e *env) smStatus(w *store.Workflow, asJSON bool) error {
	st, err := sm.Current(w)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(st)
	}
	e.printf("%s", st.Pairs())
	return nil
}

func (e *env) smNext(w *store.Workflow, failed bool) error {
	next, err := sm.Next(w, failed)
	if err != nil {
		return err
	}
	if next == "" {
		next = "done"
	}
	e.printf("%s\n", next)
	return nil
}

func (e *env) smRetry(w *store.Workflow, maxRetries int) error {
	used, err := sm.Retry(w, maxRetries)
	if err != nil {
		return err
	}
	e.printf("%d\n", used)
	return nil
}

func (e *env) graph(c *cli.Context, machineFile, format string) error {
	if _, err := args(c); err != nil {
		return err
	}
	m, _, err := e.loadMachine(machineFile)
	if err != nil {
		return err
	}
	out, err := graph.Render(m, format)
	if err != nil {
		return err
	}
	e.printf("%s", out)
	return nil
}
