package app

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/hook"
)

func hookCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "hook",
		Usage:     "Claude Code hook handler (session-start, session-end); always exits 0",
		UsageText: "flowstate hook session-start|session-end < hook-payload.json",
		Description: "session-start appends to $CLAUDE_ENV_FILE the exports later bash blocks need\n" +
			"(PATH with this binary's directory, CLAUDE_PROJECT_DIR, FLOWSTATE_BIN) and clears\n" +
			"stale session pointers and stray temp files. session-end removes the session's\n" +
			"pointer when its workflow is finished. Problems go to .claude/state/hooks.log\n" +
			"(or ~/.claude/flowstate-hooks.log), never to the exit code: a hook must not break\n" +
			"a Claude Code session.",
		// Anything on the command line is the hook's business, reported
		// in the log rather than as a usage error with a non-zero exit.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a := c.Args().Slice()
			if len(a) > 0 && a[0] == "--" { // urfave keeps it with SkipFlagParsing
				a = a[1:]
			}
			event := ""
			if len(a) > 0 {
				event = a[0]
			}
			exe, err := os.Executable()
			if err != nil {
				exe = ""
			}
			hook.Run(event, hook.Env{Stdin: e.Stdin, Getenv: e.Getenv, Exe: exe, Now: time.Now()})
			return nil
		},
	}}
}
