package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/graph"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func graphCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "graph",
		Usage:     "draw the state machine (default or --machine FILE) as a Mermaid or Graphviz dot diagram",
		UsageText: "flowstate graph [--machine FILE] [--format mermaid|dot]",
		Description: "States that end a scope are marked: in Mermaid an edge to [*] labelled with the scopes and\n" +
			"a bold border, in dot a double border. Recovery transitions (test -> debug) are labelled\n" +
			"\"on failure\". The output is deterministic, so docs can embed it and check it for drift.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "machine", Usage: "custom state machine JSON `FILE` (default: the built-in machine)"},
			&cli.StringFlag{Name: "format", Value: graph.Formats[0], Usage: strings.Join(graph.Formats, " or ")},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c); err != nil {
				return err
			}
			m, _, err := e.loadMachine(c.String("machine"))
			if err != nil {
				return err
			}
			out, err := graph.Render(m, c.String("format"))
			if err != nil {
				return err
			}
			e.printf("%s", out)
			return nil
		},
	}}
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
