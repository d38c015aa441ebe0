package app

import (
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
)

func checkpointCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "checkpoint-save",
			Usage:     "replace the workflow's checkpoint with a whole document from FILE or stdin",
			UsageText: "flowstate checkpoint-save [FILE|-]",
			Description: "The document is validated against schema 2.1 (older versions 1.0-2.0 are migrated\n" +
				"first). Its workflow_id must be the workflow's. Nothing is written if it is invalid.",
			Flags: []cli.Flag{workflowFlag()},
			Action: func(c *cli.Context) error {
				data, err := e.readInput(c, "checkpoint")
				if err != nil {
					return err
				}
				w, err := e.workflow(c)
				if err != nil {
					return err
				}
				doc, from, err := checkpoint.Migrate(data)
				if err != nil {
					return fmt.Errorf("checkpoint-save: %w", err)
				}
				if id := gjson.GetBytes(doc, "workflow_id").String(); id != w.ID {
					return fail.Invalidf("checkpoint-save: document has workflow_id %q but the workflow is %q; nothing was written", id, w.ID)
				}
				return w.Update(func(tx *store.Tx) error {
					tx.Checkpoint = doc
					tx.Event("checkpoint-save", map[string]any{"schema_from": from})
					return nil
				})
			},
		},
		{
			Name:      "checkpoint-load",
			Usage:     "print the workflow's checkpoint JSON",
			UsageText: "flowstate checkpoint-load",
			Flags:     []cli.Flag{workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
				doc, err := w.ReadCheckpoint()
				if err != nil {
					return err
				}
				_, err = e.Stdout.Write(doc)
				return err
			}),
		},
		{
			Name:      "checkpoint-get",
			Usage:     "print the value at PATH: strings raw, numbers as 160, objects and arrays as JSON",
			UsageText: "flowstate checkpoint-get PATH [--default VALUE]   (PATH like state_machine.current_state or phase_data.research.reports.0)",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "default", Usage: "print this when PATH is missing instead of failing"}, workflowFlag()},
			Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, a []string) error {
				doc, err := w.ReadCheckpoint()
				if err != nil {
					return err
				}
				raw, ok, err := checkpoint.Get(doc, a[0])
				if err != nil {
					return err
				}
				switch {
				case ok:
					e.printf("%s\n", checkpoint.Display(raw))
				case c.IsSet("default"):
					e.printf("%s\n", c.String("default"))
				default:
					return fail.Usagef("checkpoint of workflow %s has no value at %s; pass --default to accept that", w.ID, a[0])
				}
				return nil
			}, "PATH"),
		},
		{
			Name:      "checkpoint-set",
			Usage:     "set the value at PATH to JSON-VALUE, atomically; --increment adds, --append appends",
			UsageText: "flowstate checkpoint-set PATH JSON-VALUE\n   flowstate checkpoint-set PATH [DELTA] --increment   (prints the new number)\n   flowstate checkpoint-set PATH JSON-VALUE --append",
			Description: "JSON-VALUE is JSON: a string needs its quotes ('\"done\"'). The document is validated\n" +
				"after the change; an invalid result is refused and nothing is written.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "increment", Usage: "add DELTA (default 1) to the number at PATH"},
				&cli.BoolFlag{Name: "append", Usage: "append JSON-VALUE to the array at PATH"},
				workflowFlag(),
			},
			Action: e.checkpointSet,
		},
	}
}

func (e *env) checkpointSet(c *cli.Context) error {
	inc, app := c.Bool("increment"), c.Bool("append")
	if inc && app {
		return fail.Usagef("checkpoint-set: --increment and --append exclude each other")
	}
	var path, value string
	switch {
	case inc && c.NArg() == 1:
		path, value = c.Args().Get(0), "1"
	default:
		a, err := args(c, "PATH", "JSON-VALUE")
		if err != nil {
			return err
		}
		path, value = a[0], a[1]
	}
	var delta int64
	if inc {
		d, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fail.Invalidf("checkpoint-set --increment: delta %q is not an integer", value)
		}
		delta = d
	} else if !gjson.Valid(value) {
		return fail.Invalidf("checkpoint-set: %q is not JSON; quote strings as '\"text\"'", value)
	}
	w, err := e.workflow(c)
	if err != nil {
		return err
	}
	var result int64
	err = w.Update(func(tx *store.Tx) error {
		var err error
		switch {
		case inc:
			tx.Checkpoint, result, err = checkpoint.Increment(tx.Checkpoint, path, delta, tx.Now)
		case app:
			tx.Checkpoint, err = checkpoint.Append(tx.Checkpoint, path, []byte(value), tx.Now)
		default:
			tx.Checkpoint, err = checkpoint.Set(tx.Checkpoint, path, []byte(value), tx.Now)
		}
		if err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		return nil
	})
	if err == nil && inc {
		e.printf("%d\n", result)
	}
	return err
}
