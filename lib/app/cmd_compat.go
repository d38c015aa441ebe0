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
				// The dispatcher names the fd it reads: an fd 3 the caller
				// happens to have open is never written to unasked.
				a := c.Args().Slice()
				if len(a) < 2 || a[0] != "--answer-fd" || a[1] != "3" {
					return fail.Usagef("compat-call is how the functions of `flowstate compat` call the binary; eval \"$(flowstate compat)\" and call them")
				}
				answer := os.NewFile(3, "fd 3")
				if _, err := answer.Stat(); err != nil {
					return fail.Usagef("compat-call --answer-fd 3: fd 3 is not open: %v", err)
				}
				rc := compat.Call(compat.Env{
					Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Answer: answer,
					Getenv: e.Getenv, Cwd: e.Cwd, Now: time.Now,
				}, a[2:])
				if rc != 0 {
					return cli.Exit("", rc)
				}
				return nil
			},
		},
	}
}
