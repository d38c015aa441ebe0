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
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/version"
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

func init() {
	// `flowstate --version` prints what `flowstate version` prints.
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, version.Line()) }
}

// Main runs flowstate with args (args[0] is the program name) and
// returns the exit code.
func Main(args []string, io IO) int {
	e := &env{IO: io}
	notFound := false // urfave/cli reports an unknown command as success
	app := &cli.App{
		Name:                 "flowstate",
		Usage:                "workflow state for Claude Code commands: state machine, key/value state, checkpoints",
		UsageText:            "flowstate [--workflow ID] COMMAND [flags] [args]   (`flowstate COMMAND --help` for a command's flags)",
		Version:              version.Version,
		HideHelpCommand:      true,
		Writer:               io.Stdout,
		ErrWriter:            io.Stderr,
		Reader:               io.Stdin,
		EnableBashCompletion: true,
		// sm-init --gate 'STATE=MESSAGE' may hold commas.
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {}, // Main maps errors itself
		// --help and --version (urfave adds --version itself); our own
		// help command keeps urfave from adding --help.
		Flags:        []cli.Flag{workflowFlag(), cli.HelpFlag},
		Commands:     commands(e),
		OnUsageError: usageError,
		CommandNotFound: func(c *cli.Context, name string) {
			notFound = true
			hint := ""
			if s := closest(name, commandNames(c.App.Commands)); s != "" {
				hint = "; did you mean `flowstate " + s + "`?"
			}
			fmt.Fprintf(io.Stderr, "flowstate: unknown command %q%s (run `flowstate help` for the list)\n", name, hint)
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
		personCommands(e),
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

// usageError turns a flag error into one line that names the command,
// spells the flag as typed (--name, not Go's -name), suggests the flag
// that was probably meant, and points at that command's help.
func usageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	var flags []cli.Flag
	if c != nil {
		flags = c.App.Flags
		if c.Command != nil && !isRoot(c) {
			flags = c.Command.Flags
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + dashed(name)
		if s := closest(name, flagNames(flags)); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		msg = "flag needs a value: " + dashed(name)
	}
	msg = strings.Replace(msg, "for flag -", "for flag --", 1) // invalid value "x" for flag -complexity
	if c != nil && !isRoot(c) {
		return fail.Usagef("%s: %s (see `flowstate %s --help`)", c.Command.Name, msg, c.Command.Name)
	}
	return fail.Usagef("%s (see `flowstate --help`)", msg)
}

// isRoot is true for flowstate's own flags, before any command.
func isRoot(c *cli.Context) bool {
	return c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
}

// dashed spells a flag name as users type it: -h, --reason.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func commandNames(cs []*cli.Command) []string {
	var names []string
	for _, c := range cs {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

func flagNames(fs []cli.Flag) []string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Names()...)
	}
	return names
}

// closest is the candidate typed most likely meant, or "" when none is
// close enough to be a useful suggestion: the most similar by
// Jaro-Winkler (as urfave/cli's own suggestions), above a floor, else the
// one candidate that has typed as a dash-separated part (init: sm-init).
func closest(typed string, candidates []string) string {
	best, score := "", 0.0
	for _, c := range candidates {
		if s := smetrics.JaroWinkler(typed, c, 0.7, 4); s > score {
			best, score = c, s
		}
	}
	if score >= 0.8 {
		return best
	}
	var parts []string
	for _, c := range candidates {
		if slices.Contains(strings.Split(c, "-"), typed) {
			parts = append(parts, c)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return ""
}
