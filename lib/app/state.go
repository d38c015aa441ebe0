package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// stateCommands keep a workflow's key/value state, which bash blocks
// load with eval (lib/statefile), and its logs.
func (e *env) stateCommands() []*cli.Command {
	var (
		stdin bool
		def   *string // nil: not given
		load  loadOptions
	)
	return []*cli.Command{
		{
			Name:      "state-append",
			Usage:     "store KEY=VALUE in the workflow's state (last value wins)",
			UsageText: "flowstate state-append KEY VALUE\n   flowstate state-append --stdin < lines   (KEY=VALUE per line, # comments and blank lines skipped)",
			Description: "Any value without NUL is stored exactly; an empty value is a value. Keys match\n" +
				"[A-Za-z_][A-Za-z0-9_]*. KEY and VALUE are taken as typed, even a VALUE like --stdin;\n" +
				"flags go before KEY or after VALUE.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "stdin", Usage: "read KEY=VALUE lines from stdin", Destination: &stdin}, e.workflowFlag()},
			Action: func(c *cli.Context) error { return e.stateAppend(c, stdin) },
		},
		{
			Name:      "state-get",
			Usage:     "print the raw value of KEY",
			UsageText: "flowstate state-get KEY [--default VALUE]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "default", Usage: "print this when KEY is not set instead of failing", Action: given(&def)}, e.workflowFlag()},
			Action:    func(c *cli.Context) error { return e.stateGet(c, def) },
		},
		{
			Name:      "state-load",
			Usage:     "print KEY=... lines for eval: stored keys plus the state machine's",
			UsageText: `out=$(flowstate state-load) && eval "$out"`,
			Description: "Values are quoted so that eval never expands or runs anything in them. The lines\n" +
				"set shell variables, which no command the block runs sees in its environment; with\n" +
				"--export they are exported (at most 1 MiB in all). Also set: WORKFLOW_ID,\n" +
				"CLAUDE_PROJECT_DIR, COMMAND_NAME, WORKFLOW_DESCRIPTION, WORKFLOW_SCOPE, CURRENT_STATE,\n" +
				"TERMINAL_STATE, COMPLETED_STATES, COMPLETED_STATES_COUNT, RESEARCH_COMPLEXITY,\n" +
				"RESEARCH_TOPICS_JSON. Left out, with a warning on stderr (state-get still reads them):\n" +
				"reserved names (PATH, BASH_ENV, LD_*, GIT_*, ... see docs/architecture.md), values over\n" +
				"64 KiB, and without --export a key the shell already exports with another value.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "export", Usage: "print export lines: the values reach the environment of the block's commands", Destination: &load.export},
				&cli.BoolFlag{Name: "json", Usage: "print a JSON object of every stored and derived value instead", Destination: &load.json},
				e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.stateLoad(c, load) },
		},
		{
			Name:      "log-append",
			Usage:     "append one JSON value as a line of the workflow's log NAME (logs/NAME.jsonl)",
			UsageText: "flowstate log-append NAME JSON",
			Flags:     []cli.Flag{e.workflowFlag()},
			Action:    e.onWorkflow(e.logAppend, "NAME", "JSON"),
		},
	}
}

func (e *env) stateAppend(c *cli.Context, stdin bool) error {
	pairs, err := e.statePairs(c, stdin)
	if err != nil {
		return err
	}
	w, err := e.workflow()
	if err != nil {
		return err
	}
	return w.AppendState(pairs)
}

// statePairs collects the pairs to append from args or stdin, refusing
// the whole batch if any pair is bad, so nothing is half-written.
func (e *env) statePairs(c *cli.Context, stdin bool) ([][2]string, error) {
	var pairs [][2]string
	if stdin {
		if c.NArg() != 0 {
			return nil, fail.Usagef("state-append --stdin takes no arguments")
		}
		data, err := limit.ReadAll(e.Stdin, "stdin")
		if err != nil {
			return nil, err
		}
		if pairs, err = statefile.ParsePairs(data); err != nil {
			return nil, fmt.Errorf("stdin: %w; nothing was stored", err)
		}
	} else {
		a, err := args(c, "KEY", "VALUE")
		if err != nil {
			return nil, err
		}
		pairs = [][2]string{{a[0], a[1]}}
	}
	return pairs, sm.CheckPairs(pairs)
}

func (e *env) stateGet(c *cli.Context, def *string) error {
	a, err := args(c, "KEY")
	if err != nil {
		return err
	}
	if !statefile.ValidKey(a[0]) {
		return fail.Invalidf("invalid key %q: keys must match [A-Za-z_][A-Za-z0-9_]*", a[0])
	}
	st, w, err := e.loadValues()
	if err != nil {
		return err
	}
	v, ok := st.Values[a[0]]
	switch {
	case ok:
	case def != nil:
		v = *def
	default:
		return fail.Usagef("key %s is not set in workflow %s; set it with state-append or pass --default", a[0], w.ID)
	}
	_, err = e.Stdout.Write([]byte(v))
	return err
}

// loadOptions are state-load's flags.
type loadOptions struct{ export, json bool }

func (e *env) stateLoad(c *cli.Context, o loadOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	if o.json && o.export {
		return fail.Usagef("state-load: --json and --export exclude each other")
	}
	st, w, err := e.loadValues()
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(st.Values)
	}
	warnings, err := st.WriteLoad(e.Stdout, statefile.LoadOptions{Export: o.export, Getenv: e.Getenv, Own: sm.IsDerived})
	for _, warning := range warnings {
		e.warn("workflow %s state: %s", w.ID, warning)
	}
	return err
}

// loadValues resolves the workflow and reads its values, reporting
// damaged lines on stderr.
func (e *env) loadValues() (statefile.State, *store.Workflow, error) {
	w, err := e.workflow()
	if err != nil {
		return statefile.State{}, nil, err
	}
	st, err := sm.Values(w)
	if err != nil {
		return statefile.State{}, nil, err
	}
	for _, warning := range st.Warnings {
		e.warn("workflow %s state: %s", w.ID, warning)
	}
	return st, w, nil
}

func (e *env) logAppend(w *store.Workflow, a []string) error {
	return w.AppendLog(a[0], []byte(a[1]))
}
