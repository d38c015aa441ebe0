package app

import (
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/hook"
)

func hookCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "hook",
		Usage:     "Claude Code hook handler (" + strings.Join(hook.Events(), ", ") + "); always exits 0",
		UsageText: "flowstate hook EVENT < hook-payload.json",
		Description: "session-start appends to $CLAUDE_ENV_FILE the exports later bash blocks need\n" +
			"(PATH with this binary's directory, CLAUDE_PROJECT_DIR, FLOWSTATE_BIN), clears stale\n" +
			"session pointers and stray temp files, and after a compaction tells the model where its\n" +
			"command stands. session-end removes the session's pointer when its workflow is finished.\n" +
			"pre-tool-use makes flowstate's agents run in the foreground and records each launch;\n" +
			"subagent-start and subagent-stop record each agent's start and end in its workflow;\n" +
			"stop sends a model that ends its turn before its command is done back to it (at most\n" +
			"3 times in a row). Answers go to stdout as Claude Code's hook JSON. Problems go to\n" +
			".claude/state/hooks.log (or ~/.claude/flowstate-hooks.log), never to the exit code: a\n" +
			"hook must not break a Claude Code session.",
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
			hook.Run(event, hook.Env{Stdin: e.Stdin, Stdout: e.Stdout, Getenv: e.Getenv, Exe: exe, Now: time.Now()})
			return nil
		},
	}}
}
