package app

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/version"
)

func miscCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "log-append",
			Usage:     "append one JSON value as a line of the workflow's log NAME (logs/NAME.jsonl)",
			UsageText: "flowstate log-append NAME JSON",
			Flags:     []cli.Flag{workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, a []string) error {
				return w.AppendLog(a[0], []byte(a[1]))
			}, "NAME", "JSON"),
		},
		{
			Name:      "list",
			Usage:     "list the project's workflows, newest first, with their state and status (in_progress, awaiting_approval, paused, complete, failed, abandoned, cancelled)",
			UsageText: "flowstate list [--json]",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
			Action: func(c *cli.Context) error {
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
				if c.Bool("json") {
					return e.printJSON(all)
				}
				e.printf("%s", status.List(all))
				return nil
			},
		},
		{
			Name:      "version",
			Usage:     "print the version and commit; --at-least X fails (exit 2) when older than X",
			UsageText: "flowstate version [--at-least X.Y.Z]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "at-least", Usage: "minimum version required"}},
			Action: func(c *cli.Context) error {
				if _, err := args(c); err != nil {
					return err
				}
				if min := c.String("at-least"); min != "" {
					ok, err := version.AtLeast(version.Version, min)
					if err != nil {
						return err
					}
					if !ok {
						return fail.Usagef("flowstate %s is older than the required %s; rebuild it with ./install.sh", version.Version, min)
					}
				}
				e.printf("%s\n", version.Line())
				return nil
			},
		},
		{
			Name:      "help",
			Usage:     "show help for a command, or `flowstate help exit-codes`",
			UsageText: "flowstate help [COMMAND|exit-codes]",
			Action: func(c *cli.Context) error {
				topic := c.Args().First()
				switch topic {
				case "":
					return cli.ShowAppHelp(c)
				case "exit-codes":
					tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "CODE\tMEANING")
					for _, row := range fail.Table {
						fmt.Fprintf(tw, "%d\t%s\n", row.Code, row.Meaning)
					}
					return tw.Flush()
				}
				if c.App.Command(topic) == nil {
					hint := ""
					if s := closest(topic, append(commandNames(c.App.Commands), "exit-codes")); s != "" {
						hint = "; did you mean `flowstate help " + s + "`?"
					}
					return fail.Usagef("no help topic %q%s (run `flowstate help` for the commands)", topic, hint)
				}
				// The app's context, not help's own, knows the commands.
				return cli.ShowCommandHelp(c.Lineage()[1], topic)
			},
		},
	}
}
