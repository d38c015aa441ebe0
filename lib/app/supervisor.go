package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// supervisorCommands serve the supervisor agents (lib/supervisor;
// docs/supervisors.md): whether to use one, in which waves, the records of
// their workers, the aggregate of those, and the reports and signals
// agents write.
func (e *env) supervisorCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "should-supervise",
			Usage:     "print hierarchical or flat for the size of the work (thresholds in docs/supervisors.md)",
			UsageText: "flowstate should-supervise --kind research --topics N\n   flowstate should-supervise --kind implementation [--domains N] [--complexity N]\n   flowstate should-supervise --kind testing [--tests N] [--test-types N]",
			Description: fmt.Sprintf("hierarchical when research has >= %d topics, implementation >= %d domains or complexity >= %d,\n"+
				"testing >= %d tests or >= %d test types; flat otherwise.",
				supervisor.ResearchTopics, supervisor.ImplementationDomains, supervisor.ImplementationComplexity, supervisor.TestingTests, supervisor.TestingTypes),
			Flags:  append([]cli.Flag{&cli.StringFlag{Name: "kind", Usage: "research, implementation or testing"}}, countFlags()...),
			Action: e.shouldSupervise,
		},
		{
			Name:      "waves",
			Usage:     "print the phases of a plan grouped into parallel waves, e.g. [[1],[2,3],[4]]",
			UsageText: "flowstate waves [--estimate] PLAN.md|DEPS.json|-",
			Description: "A plan has \"### Phase N: Name\" headings, each with a \"dependencies: [..]\" line and\n" +
				"optionally \"estimate_ms: N\". DEPS.json is [{\"phase\": 1, \"dependencies\": [], \"estimate_ms\": N}]\n" +
				"or {\"1\": [], \"2\": [1]}. --estimate prints {waves, parallel_ms, sequential_ms,\n" +
				"time_savings_percent} instead and needs estimate_ms on every phase. A dependency cycle or a\n" +
				"dependency on a missing phase: exit 4.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "estimate", Usage: "add the parallel and sequential duration estimate"}},
			Action: e.waves,
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
			Flags:  []cli.Flag{supervisorFlag(), workflowFlag()},
			Action: e.supervisorRecord,
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
			Name:      "report-meta",
			Usage:     "print {title, summary, key_findings} of a markdown report",
			UsageText: "flowstate report-meta FILE|-",
			Description: "The report format is docs/command-protocol.md section 6: title from the first H1,\n" +
				"summary from the Executive Summary (or Overview) paragraph cut to 50 words, findings from\n" +
				"the Key Findings list or the \"### Finding N:\" headings. No such report: exit 4.",
			Action: e.reportMeta,
		},
		{
			Name:      "parse-signal",
			Usage:     "print the completion signals in agent output (stdin) as JSON",
			UsageText: "flowstate parse-signal [FILE|-]",
			Description: "Signals are lines REPORT_CREATED: <path>, SUPERVISOR_COMPLETE: {json} and\n" +
				"SUPERVISOR_FAILED: {json}; the JSON must be valid. No signal: exit 4.",
			Action: e.parseSignal,
		},
	}
}

// countFlags are should-supervise's counts, those of every kind;
// supervisor.Decide says which one kind reads.
func countFlags() []cli.Flag {
	var fs []cli.Flag
	for _, n := range supervisor.AllCountNames() {
		fs = append(fs, &cli.IntFlag{Name: n, Usage: "count of " + n})
	}
	return fs
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

func (e *env) shouldSupervise(c *cli.Context) error {
	kind, err := supervisor.ParseKind(c.String("kind"))
	if err != nil {
		return err
	}
	if _, err := args(c); err != nil {
		return err
	}
	given := map[string]int{}
	for _, n := range supervisor.AllCountNames() {
		if c.IsSet(n) {
			given[n] = c.Int(n)
		}
	}
	hier, err := supervisor.Decide(kind, given)
	if err != nil {
		return err
	}
	if hier {
		e.printf("hierarchical\n")
	} else {
		e.printf("flat\n")
	}
	return nil
}

func (e *env) waves(c *cli.Context) error {
	data, err := e.readInput(c, "plan")
	if err != nil {
		return err
	}
	phases, err := supervisor.ParsePhases(c.Args().First(), data)
	if err != nil {
		return fmt.Errorf("waves: %w", err)
	}
	waves, err := supervisor.Waves(phases)
	if err != nil {
		return fmt.Errorf("waves: %w", err)
	}
	var out any = waves
	if c.Bool("estimate") {
		est, err := supervisor.EstimateWaves(phases, waves)
		if err != nil {
			return fmt.Errorf("waves --estimate: %w", err)
		}
		out = struct {
			Waves [][]int `json:"waves"`
			supervisor.Estimate
		}{waves, est}
	}
	return e.printLine(out)
}

func (e *env) supervisorRecord(c *cli.Context) error {
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
	return supervisor.Upsert(w, name, rec)
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
	p, err := supervisor.Status(w, a[0], expected)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return e.printJSON(p)
	}
	e.printf("%s", p.Pairs())
	return nil
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
	dirs := supervisor.Dirs{Cwd: e.Cwd, Project: e.Cwd}
	if p, err := e.Project(); err == nil {
		dirs.Project = p.Dir
	}
	out, warnings, err := supervisor.Aggregate(kind, recs, dirs)
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

func (e *env) reportMeta(c *cli.Context) error {
	if _, err := args(c, "FILE"); err != nil {
		return err
	}
	md, err := e.readInput(c, "report")
	if err != nil {
		return err
	}
	m, err := supervisor.ParseReport(md)
	if err != nil {
		return fmt.Errorf("report-meta %s: %w", c.Args().First(), err)
	}
	return e.printJSON(m)
}

func (e *env) parseSignal(c *cli.Context) error {
	text, err := e.readInput(c, "agent output")
	if err != nil {
		return err
	}
	sigs, err := supervisor.ParseSignals(text)
	if err != nil {
		return fmt.Errorf("parse-signal: %w", err)
	}
	return e.printJSON(sigs)
}
