package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// The supervisor commands that touch no workflow: each reads text or counts
// and answers with what lib/supervisor decides.

func (e *env) reportMetaCommand() *cli.Command {
	return &cli.Command{
		Name:      "report-meta",
		Usage:     "print {title, summary, key_findings} of a markdown report",
		UsageText: "flowstate report-meta FILE|-",
		Description: "The report format is docs/command-protocol.md section 6: title from the first H1,\n" +
			"summary from the Executive Summary (or Overview) paragraph cut to 50 words, findings from\n" +
			"the Key Findings list or the \"### Finding N:\" headings. No such report: exit 4.",
		Action: func(c *cli.Context) error {
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
		},
	}
}

func (e *env) shouldSuperviseCommand() *cli.Command {
	return &cli.Command{
		Name:      "should-supervise",
		Usage:     "print hierarchical or flat for the size of the work (thresholds in docs/supervisors.md)",
		UsageText: "flowstate should-supervise --kind research --topics N\n   flowstate should-supervise --kind implementation [--domains N] [--complexity N]\n   flowstate should-supervise --kind testing [--tests N] [--test-types N]",
		Description: fmt.Sprintf("hierarchical when research has >= %d topics, implementation >= %d domains or complexity >= %d,\n"+
			"testing >= %d tests or >= %d test types; flat otherwise.",
			supervisor.ResearchTopics, supervisor.ImplementationDomains, supervisor.ImplementationComplexity, supervisor.TestingTests, supervisor.TestingTypes),
		Flags:  append([]cli.Flag{&cli.StringFlag{Name: "kind", Usage: "research, implementation or testing"}}, countFlags()...),
		Action: e.shouldSupervise,
	}
}

func (e *env) wavesCommand() *cli.Command {
	return &cli.Command{
		Name:      "waves",
		Usage:     "print the phases of a plan grouped into parallel waves, e.g. [[1],[2,3],[4]]",
		UsageText: "flowstate waves [--estimate] PLAN.md|DEPS.json|-",
		Description: "A plan has \"### Phase N: Name\" headings, each with a \"dependencies: [..]\" line and\n" +
			"optionally \"estimate_ms: N\". DEPS.json is [{\"phase\": 1, \"dependencies\": [], \"estimate_ms\": N}]\n" +
			"or {\"1\": [], \"2\": [1]}. --estimate prints {waves, parallel_ms, sequential_ms,\n" +
			"time_savings_percent} instead and needs estimate_ms on every phase. A dependency cycle or a\n" +
			"dependency on a missing phase: exit 4.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "estimate", Usage: "add the parallel and sequential duration estimate"}},
		Action: func(c *cli.Context) error {
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
		},
	}
}

func (e *env) parseSignalCommand() *cli.Command {
	return &cli.Command{
		Name:      "parse-signal",
		Usage:     "print the completion signals in agent output (stdin) as JSON",
		UsageText: "flowstate parse-signal [FILE|-]",
		Description: "Signals are lines REPORT_CREATED: <path>, SUPERVISOR_COMPLETE: {json} and\n" +
			"SUPERVISOR_FAILED: {json}; the JSON must be valid. No signal: exit 4.",
		Action: func(c *cli.Context) error {
			text, err := e.readInput(c, "agent output")
			if err != nil {
				return err
			}
			sigs, err := supervisor.ParseSignals(text)
			if err != nil {
				return fmt.Errorf("parse-signal: %w", err)
			}
			return e.printJSON(sigs)
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
