package app

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/compat"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

func compatCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:        "compat",
			Usage:       "print bash functions with the original libraries' names, for eval",
			UsageText:   `eval "$(flowstate compat)"   (instead of sourcing state-persistence.sh, workflow-state-machine.sh, checkpoint-utils.sh)`,
			Description: compat.Help(),
			Action: func(c *cli.Context) error {
				if _, err := args(c); err != nil {
					return err
				}
				e.printf("%s", compat.Script())
				return nil
			},
		},
		{
			// The functions' own entry point: the shell state comes as
			// options, the answer for the shell goes to fd 3.
			Name:            "compat-call",
			Usage:           "run one function of `flowstate compat` (internal: the functions call it)",
			Hidden:          true,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				answer := os.NewFile(3, "fd 3")
				if _, err := answer.Stat(); err != nil {
					return fail.Usagef("compat-call is how the functions of `flowstate compat` call the binary, with fd 3 open for its answer; eval \"$(flowstate compat)\" and call them")
				}
				rc := compat.Call(compat.Env{
					Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Answer: answer,
					Getenv: e.Getenv, Cwd: e.Cwd, Now: time.Now,
				}, c.Args().Slice())
				if rc != 0 {
					return cli.Exit("", rc)
				}
				return nil
			},
		},
	}
}
