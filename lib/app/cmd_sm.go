package app

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

func smCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "sm-init",
			Usage:     "create a workflow, print its id, and make it the session's current workflow",
			UsageText: "flowstate sm-init --description TEXT --command NAME (--scope SCOPE [--complexity 1-4] [--topics JSON] | --classification JSON) [--machine FILE] [--gate STATE[=MESSAGE]]... [--workflow ID]",
			Description: "With --scope, the scope is given; with --classification, the classifier agent's JSON\n" +
				"(workflow_type, confidence, research_complexity, research_topics, reasoning) is validated\n" +
				"and its workflow_type becomes the scope. --classification @FILE reads the JSON from FILE.\n" +
				"--gate STATE (repeatable) adds an approval gate: the workflow enters STATE only once a person\n" +
				"runs `flowstate approve`; until then it waits (status awaiting_approval, sm-transition exit 6).",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "description", Usage: "what the workflow is for"},
				&cli.StringFlag{Name: "command", Usage: "the command running it, e.g. coordinate"},
				&cli.StringFlag{Name: "scope", Usage: "one of the machine's scopes"},
				&cli.IntFlag{Name: "complexity", Usage: "research complexity 1-4", DefaultText: "number of topics, else 2"},
				&cli.StringFlag{Name: "topics", Usage: "research topics as a JSON array of strings"},
				&cli.StringFlag{Name: "classification", Usage: "classifier JSON, or @FILE"},
				&cli.Float64Flag{Name: "min-confidence", Value: classify.MinConfidence, Usage: "lowest classifier confidence accepted"},
				&cli.StringFlag{Name: "machine", Usage: "custom state machine JSON `FILE`"},
				&cli.StringSliceFlag{Name: "gate", Usage: "approval gate before `STATE[=MESSAGE]` (repeatable; adds to the machine's gates)"},
				workflowFlag(),
			},
			Action: e.smInit,
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
				&cli.StringFlag{Name: "reason", Usage: "why, recorded in the event log"},
				&cli.StringFlag{Name: "from", Usage: "the state the workflow must be in"},
				&cli.StringFlag{Name: "checkpoint", Usage: "JSON object to merge into the checkpoint, or @FILE"},
				workflowFlag(),
			},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, a []string) error {
				var opts []sm.Option
				if from := c.String("from"); from != "" {
					opts = append(opts, sm.From(from))
				}
				if c.IsSet("checkpoint") {
					patch := []byte(c.String("checkpoint"))
					if name, ok := strings.CutPrefix(c.String("checkpoint"), "@"); ok {
						b, err := e.readFile("--checkpoint", name)
						if err != nil {
							return err
						}
						patch = b
					}
					opts = append(opts, sm.WithCheckpoint(patch))
				}
				_, err := sm.Transition(w, a[0], c.String("reason"), opts...)
				return err
			}, "STATE"),
		},
		{
			Name:      "sm-status",
			Usage:     "print the workflow's state as KEY=VALUE lines (or JSON)",
			UsageText: "flowstate sm-status [--json]",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				st, err := sm.Current(w)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return e.printJSON(st)
				}
				e.printf("%s", st.Pairs())
				return nil
			}),
		},
		{
			Name:      "sm-next",
			Usage:     "print the state after the current one on the scope's route, or done",
			UsageText: "flowstate sm-next [--failed]",
			Description: "With --failed, print the state that recovers the current one (test -> debug).\n" +
				"From a recovery state, print the state that failed. At the terminal state, print done.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "failed", Usage: "the current state's phase failed"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				next, err := sm.Next(w, c.Bool("failed"))
				if err != nil {
					return err
				}
				if next == "" {
					next = "done"
				}
				e.printf("%s\n", next)
				return nil
			}),
		},
		{
			Name:      "sm-finish",
			Usage:     "mark the workflow finished: complete (in its terminal state), failed or abandoned",
			UsageText: "flowstate sm-finish [--status complete|failed|abandoned]",
			Description: "A workflow stays active in its terminal state while that last phase runs; finish it\n" +
				"when the phase's work is done. Entering a state with no way out (complete) finishes it.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "status", Value: "complete", Usage: "complete, failed or abandoned"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				return sm.Finish(w, c.String("status"))
			}),
		},
		{
			Name:      "sm-fail",
			Usage:     "record an error for the current state in the checkpoint's error_state",
			UsageText: "flowstate sm-fail --error TEXT",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "error", Usage: "what failed"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				return sm.Fail(w, c.String("error"))
			}),
		},
		{
			Name:      "sm-retry",
			Usage:     "spend one retry of the failed state; exit 3 once the retries are used up",
			UsageText: "flowstate sm-retry [--max N]",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "max", Value: sm.DefaultMaxRetries, Usage: "retries allowed per state"},
				workflowFlag(),
			},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				used, err := sm.Retry(w, c.Int("max"))
				if err != nil {
					return err
				}
				e.printf("%d\n", used)
				return nil
			}),
		},
	}
}

func (e *env) smInit(c *cli.Context) error {
	if _, err := args(c); err != nil {
		return err
	}
	m, machineJSON, err := e.loadMachine(c.String("machine"))
	if err != nil {
		return err
	}
	cls, err := e.classification(c)
	if err != nil {
		return err
	}
	gates, err := machine.ParseGates(c.StringSlice("gate"))
	if err != nil {
		return err
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	w, err := sm.Init(p, sm.InitParams{
		ID:             c.String("workflow"),
		Description:    c.String("description"),
		Command:        c.String("command"),
		Scope:          cls.WorkflowType,
		Classification: cls,
		Machine:        m,
		MachineJSON:    machineJSON,
		Session:        e.Getenv("CLAUDE_CODE_SESSION_ID"),
		Gates:          gates,
	})
	if err != nil {
		return err
	}
	e.printf("%s\n", w.ID)
	return nil
}

// classification builds the classification from either --classification
// (validated classifier output) or --scope with optional complexity and
// topics (given by the user, so confidence 1).
func (e *env) classification(c *cli.Context) (classify.Classification, error) {
	raw, scope := c.String("classification"), c.String("scope")
	switch {
	case raw != "" && scope != "":
		return classify.Classification{}, fail.Usagef("sm-init: give either --scope or --classification, not both")
	case raw != "":
		if c.IsSet("complexity") || c.IsSet("topics") {
			return classify.Classification{}, fail.Usagef("sm-init: --complexity and --topics come from --classification; drop them")
		}
		data := []byte(raw)
		if name, ok := strings.CutPrefix(raw, "@"); ok {
			b, err := e.readFile("--classification", name)
			if err != nil {
				return classify.Classification{}, err
			}
			data = b
		}
		// classify's errors name the classification already.
		return classify.Parse(data, c.Float64("min-confidence"))
	case scope != "":
		return classify.Given(scope, c.Int("complexity"), c.String("topics"))
	default:
		return classify.Classification{}, fail.Usagef("sm-init needs --scope SCOPE or --classification JSON")
	}
}
