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
	var (
		should           = shouldOptions{counts: map[string]int{}}
		estimate         bool
		recordSupervisor string
		status           statusOptions
		agg              aggregateOptions
	)
	return []*cli.Command{
		{
			Name:      "should-supervise",
			Usage:     "print hierarchical or flat for the size of the work (thresholds in docs/supervisors.md)",
			UsageText: "flowstate should-supervise --kind research --topics N\n   flowstate should-supervise --kind implementation [--domains N] [--complexity N]\n   flowstate should-supervise --kind testing [--tests N] [--test-types N]",
			Description: fmt.Sprintf("hierarchical when research has >= %d topics, implementation >= %d domains or complexity >= %d,\n"+
				"testing >= %d tests or >= %d test types; flat otherwise.",
				supervisor.ResearchTopics, supervisor.ImplementationDomains, supervisor.ImplementationComplexity, supervisor.TestingTests, supervisor.TestingTypes),
			Flags:  append([]cli.Flag{kindFlag(&should.kind)}, countFlags(should.counts)...),
			Action: func(c *cli.Context) error { return e.shouldSupervise(c, should) },
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
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "estimate", Usage: "add the parallel and sequential duration estimate", Destination: &estimate}},
			Action: func(c *cli.Context) error { return e.waves(c, estimate) },
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
			Flags:  []cli.Flag{&cli.StringFlag{Name: "supervisor", Usage: "supervisor `NAME`, e.g. research_supervisor", Destination: &recordSupervisor}, e.workflowFlag()},
			Action: func(c *cli.Context) error { return e.supervisorRecord(c, recordSupervisor) },
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
				&cli.StringFlag{Name: "expect", Usage: "comma-separated worker ids the phase runs", Destination: &status.expect},
				&cli.BoolFlag{Name: "json", Usage: "print {completed, failed, pending} as JSON", Destination: &status.json},
				e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.supervisorStatus(c, status) },
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
				kindFlag(&agg.kind),
				&cli.BoolFlag{Name: "signal", Usage: "print \"SUPERVISOR_COMPLETE: <json>\", the supervisor's final answer", Destination: &agg.signal},
			},
			Action: func(c *cli.Context) error { return e.aggregate(c, agg) },
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

func kindFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "kind", Usage: "research, implementation or testing", Destination: dst}
}

// countFlags are should-supervise's counts, those of every kind, each
// given one recorded in counts under its name; supervisor.Decide says
// which one kind reads.
func countFlags(counts map[string]int) []cli.Flag {
	var fs []cli.Flag
	for _, n := range supervisor.AllCountNames() {
		fs = append(fs, &cli.IntFlag{Name: n, Usage: "count of " + n, Action: func(_ *cli.Context, v int) error {
			counts[n] = v
			return nil
		}})
	}
	return fs
}

// shouldOptions are should-supervise's flags.
type shouldOptions struct {
	kind   string
	counts map[string]int // the counts given
}

func (e *env) shouldSupervise(c *cli.Context, o shouldOptions) error {
	kind, err := supervisor.ParseKind(o.kind)
	if err != nil {
		return err
	}
	if _, err := args(c); err != nil {
		return err
	}
	hier, err := supervisor.Decide(kind, o.counts)
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

func (e *env) waves(c *cli.Context, estimate bool) error {
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
	if estimate {
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

// supervisorRecord stores a worker record under supervisor name, which
// is required: checked here because urfave prints help on stdout for a
// missing Required flag.
func (e *env) supervisorRecord(c *cli.Context, name string) error {
	if name == "" {
		return fail.Usagef("%s needs --supervisor NAME, e.g. --supervisor research_supervisor", c.Command.Name)
	}
	if err := supervisor.CheckName(name); err != nil {
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
	w, err := e.workflow()
	if err != nil {
		return err
	}
	return supervisor.Upsert(w, name, rec)
}

// statusOptions are supervisor-status's flags.
type statusOptions struct {
	expect string
	json   bool
}

func (e *env) supervisorStatus(c *cli.Context, o statusOptions) error {
	a, err := args(c, "NAME")
	if err != nil {
		return err
	}
	if err := supervisor.CheckName(a[0]); err != nil {
		return err
	}
	w, err := e.workflow()
	if err != nil {
		return err
	}
	var expected []string
	for _, id := range strings.Split(o.expect, ",") {
		if id = strings.TrimSpace(id); id != "" {
			expected = append(expected, id)
		}
	}
	p, err := supervisor.Status(w, a[0], expected)
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(p)
	}
	e.printf("%s", p.Pairs())
	return nil
}

// aggregateOptions are aggregate's flags.
type aggregateOptions struct {
	kind   string
	signal bool
}

func (e *env) aggregate(c *cli.Context, o aggregateOptions) error {
	kind, err := supervisor.ParseKind(o.kind)
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
	if o.signal {
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
