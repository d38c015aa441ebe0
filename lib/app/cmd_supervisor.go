package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/workers"
)

func supervisorCommands(e *env) []*cli.Command {
	return []*cli.Command{
		e.reportMetaCommand(),
		{
			Name:      "aggregate",
			Usage:     "print the aggregated_metadata of worker records (JSON array) as one JSON line",
			UsageText: "flowstate aggregate --kind research|implementation|testing [--signal] FILE|-",
			Description: "Each worker's output_path is read to fill metadata the record lacks (reports for research\n" +
				"and implementation, test results JSON for testing); implementation counts the lines of\n" +
				"modified files, relative to the project. Some workers failed: exit 0, partial_failures\n" +
				"set and a warning on stderr. All failed: the SUPERVISOR_FAILED line on stdout, exit 3.\n" +
				"Records usually come from the checkpoint:\n" +
				"  flowstate checkpoint-get supervisor_state.research.workers | flowstate aggregate --kind research -",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "kind", Usage: "research, implementation or testing"},
				&cli.BoolFlag{Name: "signal", Usage: "print \"SUPERVISOR_COMPLETE: <json>\", the supervisor's final answer"},
			},
			Action: e.aggregate,
		},
		{
			Name:      "supervisor-record",
			Usage:     "store one worker record in supervisor_state.NAME.workers, replacing the same worker_id",
			UsageText: "flowstate supervisor-record --supervisor NAME FILE|-",
			Description: "The record is a worker object (docs/supervisors.md): worker_id, topic|track|stage, status\n" +
				"(completed, failed, pending, running or in_progress), output_path, duration_ms, started_at,\n" +
				"files_modified, metadata, error. A worker recorded running and later ended without a\n" +
				"duration_ms is given the time between. Workers may record at the same moment: each write\n" +
				"holds the workflow lock.",
			Flags: []cli.Flag{supervisorFlag(), workflowFlag()},
			Action: func(c *cli.Context) error {
				name, err := supervisorName(c)
				if err != nil {
					return err
				}
				data, err := e.readInput(c, "worker record")
				if err != nil {
					return err
				}
				rec, err := supervisor.ParseRecord(data)
				if err != nil {
					return fmt.Errorf("supervisor-record: %w", err)
				}
				w, err := e.workflow(c)
				if err != nil {
					return err
				}
				return workers.Upsert(w, name, rec)
			},
		},
		{
			Name:      "supervisor-status",
			Usage:     "list the completed, failed and pending workers of supervisor NAME",
			UsageText: "flowstate supervisor-status NAME [--expect ID,ID...] [--json]",
			Description: "Prints WORKERS_COMPLETED=, WORKERS_FAILED=, WORKERS_PENDING= (comma-separated ids),\n" +
				"WORKERS_TO_RUN= (failed and pending: what a resumed phase runs again) and\n" +
				"WORKERS_TO_RUN_COUNT=. Pending covers workers recorded pending or running and --expect\n" +
				"ids never recorded.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "expect", Usage: "comma-separated worker ids the phase runs"},
				&cli.BoolFlag{Name: "json", Usage: "print {completed, failed, pending} as JSON"},
				workflowFlag(),
			},
			Action: e.supervisorStatus,
		},
		e.shouldSuperviseCommand(),
		e.wavesCommand(),
		e.parseSignalCommand(),
	}
}

func supervisorFlag() cli.Flag {
	return &cli.StringFlag{Name: "supervisor", Usage: "supervisor `NAME`, e.g. research_supervisor"}
}

// supervisorName checks the --supervisor flag (required; checked here
// because urfave prints help on stdout for a missing Required flag).
func supervisorName(c *cli.Context) (string, error) {
	name := c.String("supervisor")
	if name == "" {
		return "", fail.Usagef("%s needs --supervisor NAME, e.g. --supervisor research_supervisor", c.Command.Name)
	}
	return name, supervisor.CheckName(name)
}

func (e *env) aggregate(c *cli.Context) error {
	kind, err := supervisor.ParseKind(c.String("kind"))
	if err != nil {
		return err
	}
	if _, err := args(c, "FILE|-"); err != nil {
		return err
	}
	data, err := e.readInput(c, "worker records")
	if err != nil {
		return err
	}
	recs, err := supervisor.ParseRecords(data)
	if err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	dirs := workers.Dirs{Cwd: e.Cwd, Project: e.Cwd}
	if p, err := e.Project(); err == nil {
		dirs.Project = p.Dir
	}
	out, warnings, err := workers.Aggregate(kind, recs, dirs)
	for _, w := range warnings {
		e.warn("%s", w)
	}
	var failed *supervisor.FailedError
	if errors.As(err, &failed) {
		e.printf("%s\n", failed.Error())
		return fmt.Errorf("aggregate: %w", errors.Unwrap(failed))
	}
	if err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	if c.Bool("signal") {
		e.printf("%s: ", supervisor.SupervisorComplete)
	}
	e.printf("%s\n", out)
	return nil
}

func (e *env) supervisorStatus(c *cli.Context) error {
	a, err := args(c, "NAME")
	if err != nil {
		return err
	}
	if err := supervisor.CheckName(a[0]); err != nil {
		return err
	}
	w, err := e.workflow(c)
	if err != nil {
		return err
	}
	var expected []string
	for _, id := range strings.Split(c.String("expect"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			expected = append(expected, id)
		}
	}
	p, err := workers.Status(w, a[0], expected)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return e.printJSON(p)
	}
	e.printf("%s", p.Pairs())
	return nil
}
