package app

import "github.com/urfave/cli/v2"

// commands lists every command, category by category in the order
// `flowstate help` and docs/cli.md show them. Each category is one file.
func (e *env) commands() []*cli.Command {
	var all []*cli.Command
	for _, g := range []struct {
		category string
		commands []*cli.Command
	}{
		{"State machine", e.smCommands()},
		{"Workflow state", e.stateCommands()},
		{"Checkpoints", e.checkpointCommands()},
		{"Orchestration (used by the commands)", e.orchestrateCommands()},
		{"Supervisors", e.supervisorCommands()},
		{"People in the loop", e.peopleCommands()},
		{"Writing your own commands", e.authorCommands()},
		{"Setup", e.setupCommands()},
		{"Compatibility with the bash libraries", e.compatCommands()},
	} {
		for _, c := range g.commands {
			c.Category = g.category
		}
		all = append(all, g.commands...)
	}
	return all
}

// Commands returns flowstate's command tree without running anything,
// for tools that describe the CLI from the same definitions the binary
// runs: docs/gen renders docs/cli.md from it.
func Commands() []*cli.Command {
	return (&env{IO: OS()}).commands()
}

// appHelp is `flowstate help`: urfave/cli's layout, with the commands
// under their categories in the order commands lists them (urfave sorts
// categories by name) and their descriptions in one column.
const appHelp = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{wrap .UsageText 3}}

VERSION:
   {{.Version}}

COMMANDS:{{$width := offsetCommands .VisibleCommands 5}}{{$category := ""}}{{range .VisibleCommands}}{{if ne .Category $category}}{{if $category}}
{{end}}{{$category = .Category}}
   {{.Category}}:{{end}}
     {{$names := join .Names ", "}}{{$names}}{{indent (subtract $width (offset $names 3)) ""}}{{wrap .Usage (add $width 2)}}{{end}}

GLOBAL OPTIONS:
{{flags .VisibleFlags}}
`

// prepare makes every command report usage errors as exit 2 with one
// line on stderr, never help text on stdout (stdout may be eval'd).
func prepare(c *cli.Command) {
	c.OnUsageError = usageError
	if c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = commandHelp
	}
	for _, sub := range c.Subcommands {
		prepare(sub)
	}
}
