package app

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/store"
)

func statusCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "status",
		Usage:     "show the workflow for people: its route (✓ done, ▶ current, · pending), time per state, the agents at work, supervisors, errors",
		UsageText: "flowstate status [--workflow ID]   (colour only on a terminal, never with NO_COLOR set)",
		Flags:     []cli.Flag{workflowFlag()},
		Action: e.onWorkflow(func(c *cli.Context, w *store.Workflow, _ []string) error {
			doc, err := w.ReadCheckpoint()
			if err != nil {
				return err
			}
			m, err := sm.LoadMachine(w)
			if err != nil {
				return err
			}
			events, err := w.ReadEvents()
			if err != nil {
				return err
			}
			stuck, err := e.duration(nil, "", "FLOWSTATE_STUCK_AFTER", orchestrate.DefaultStuckAfter)
			if err != nil {
				return err
			}
			e.printf("%s", status.Render(status.Input{ID: w.ID, Checkpoint: doc, Events: events, Machine: m, Now: time.Now(), StuckAfter: stuck, Color: e.colorful()}))
			return nil
		}),
	}}
}

// colorful is true when stdout is a terminal and the user has not asked
// for no colour (https://no-color.org).
func (e *env) colorful() bool {
	if e.Getenv("NO_COLOR") != "" || e.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := e.Stdout.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
