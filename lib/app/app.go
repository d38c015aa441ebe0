// Package app wires flowstate's subcommands to the packages that do the
// work, and is the one place that turns errors into exit codes and
// messages. It holds no domain logic: stdout gets machine output only,
// stderr gets one `flowstate: ...` line per problem.
package app

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Set by the linker: -ldflags "-X .../lib/app.Version=... -X .../lib/app.Commit=...".
var (
	Version = "0.1.0-dev"
	Commit  = "unknown"
)

// IO is everything a run touches outside its arguments, so tests and
// the hooks can run Main in-process with their own streams and env.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Cwd    string
}

// OS returns the IO of the current process.
func OS() IO {
	cwd, _ := os.Getwd()
	return IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Cwd: cwd}
}

// env is what every action gets: the streams plus lazily found project.
type env struct {
	IO
	project *store.Project
}

func (e *env) Project() (*store.Project, error) {
	if e.project == nil {
		p, err := store.FindProject(e.Getenv, e.Cwd)
		if err != nil {
			return nil, err
		}
		e.project = p
	}
	return e.project, nil
}

// Main runs flowstate with args (args[0] is the program name) and
// returns the exit code.
func Main(args []string, io IO) int {
	e := &env{IO: io}
	notFound := false // urfave/cli reports an unknown command as success
	app := &cli.App{
		Name:                 "flowstate",
		Usage:                "workflow state for Claude Code commands: state machine, key/value state, checkpoints",
		UsageText:            "flowstate [--workflow ID] COMMAND [flags] [args]",
		Version:              Version,
		HideVersion:          true,
		HideHelpCommand:      true,
		Writer:               io.Stdout,
		ErrWriter:            io.Stderr,
		Reader:               io.Stdin,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // Main maps errors itself
		Flags:                []cli.Flag{workflowFlag()},
		Commands:             commands(e),
		OnUsageError:         usageError,
		CommandNotFound: func(c *cli.Context, name string) {
			notFound = true
			fmt.Fprintf(io.Stderr, "flowstate: unknown command %q; run `flowstate help` for the list\n", name)
		},
	}
	for _, c := range app.Commands {
		prepare(c)
	}
	err := app.Run(permute(app, args))
	if notFound {
		return fail.Usage
	}
	if err == nil {
		return fail.OK
	}
	msg := err.Error()
	var ec cli.ExitCoder
	if errors.As(err, &ec) && fail.Code(err) == fail.Unexpected {
		// urfave's own exits (e.g. unknown command already reported).
		if msg != "" {
			fmt.Fprintln(io.Stderr, "flowstate: "+msg)
		}
		return ec.ExitCode()
	}
	if msg != "" {
		fmt.Fprintln(io.Stderr, "flowstate: "+kv.OneLine(msg))
	}
	return fail.Code(err)
}

// commands lists every subcommand; each group lives in its own file.
func commands(e *env) []*cli.Command {
	var cs []*cli.Command
	for _, group := range [][]*cli.Command{
		smCommands(e),
		stateCommands(e),
		checkpointCommands(e),
		miscCommands(e),
		phaseCommands(e),
		hookCommands(e),
		installCommands(e),
		classifyCommands(e),
		supervisorCommands(e),
		graphCommands(e),
		completionCommands(e),
		compatCommands(e),
		statusCommands(e),
	} {
		cs = append(cs, group...)
	}
	return cs
}

// prepare makes every command report usage errors as exit 2 with one
// line on stderr, never help text on stdout (stdout may be eval'd).
func prepare(c *cli.Command) {
	c.OnUsageError = usageError
	for _, sub := range c.Subcommands {
		prepare(sub)
	}
}

func usageError(c *cli.Context, err error, _ bool) error {
	if c != nil && c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		name := c.Command.Name
		return fail.Usagef("%s: %v (see `flowstate %s --help`)", name, err, name)
	}
	return fail.Usagef("%v (see `flowstate --help`)", err)
}
