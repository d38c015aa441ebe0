package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/intent"
)

func classifyCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "classify",
			Usage:     "classify a workflow description offline and print the classifier JSON",
			UsageText: "flowstate classify DESCRIPTION",
			Description: "Deterministic rules, no model and no network: for when the user chooses offline\n" +
				"classification (FLOWSTATE_CLASSIFICATION=offline), never a silent fallback for the agent.\n" +
				"Prints the same JSON as the workflow-classifier agent, ready for sm-init --classification;\n" +
				fmt.Sprintf("a confidence below %g means no rule matched and the scope is a guess.", classify.MinConfidence),
			Action: func(c *cli.Context) error {
				a, err := args(c, "DESCRIPTION")
				if err != nil {
					return err
				}
				return e.printJSON(intent.Classify(a[0]))
			},
		},
	}
}
