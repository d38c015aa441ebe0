// Package app is flowstate's command line: it parses each command's
// flags and arguments, finds the project and workflow, calls the package
// that does the work and prints its result: machine output on stdout,
// one `flowstate: ...` line per problem on stderr. It is the one place
// that turns errors into exit codes (docs/cli.md#exit-codes).
//
// Each command group is one file (sm.go, state.go, checkpoint.go,
// orchestrate.go, supervisor.go, people.go, author.go, setup.go,
// compat.go) with a method returning the group's commands; every command
// runs a method of env named after it. A command's flags fill its options
// (a struct such as smInitOptions, or a variable for a lone flag) through
// their Destination, and the method is given those: no flag is read by
// name (flags_test.go). commands.go lists the groups in the order
// `flowstate help` shows them.
package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/compat"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
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

// env is what every action gets: the streams, the lazily found project,
// and the workflow the command line names (workflowFlag).
type env struct {
	IO
	project                      *store.Project
	workflowID, globalWorkflowID string
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
	if io.Getenv("FLOWSTATE_LOCK_TIMING") != "" {
		// How long this command waited for locks, for bench/cmd/fsload.
		waited := fsx.Waited()
		defer func() { fmt.Fprintf(io.Stderr, "flowstate: waited %s for locks\n", fsx.Waited()-waited) }()
	}
	notFound := false // urfave/cli reports an unknown command as success
	app := &cli.App{
		Name:                  "flowstate",
		Usage:                 "workflow state for Claude Code commands: state machine, key/value state, checkpoints",
		UsageText:             "flowstate [--workflow ID] COMMAND [flags] [args]   (`flowstate COMMAND --help` for a command's flags)",
		Version:               version.Version,
		HideHelpCommand:       true,
		CustomAppHelpTemplate: appHelp,
		Writer:                helpWriter{io.Stdout, io.Getenv},
		ErrWriter:             io.Stderr,
		Reader:                io.Stdin,
		EnableBashCompletion:  true,
		// sm-init --gate 'STATE=MESSAGE' may hold commas.
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {}, // Main maps errors itself
		// Our own help command keeps urfave from adding --help, and our
		// own --version replaces urfave's.
		HideVersion:  true,
		Flags:        e.globalFlags(),
		Commands:     e.commands(),
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
	if n := len(args); n > 0 && args[n-1] == completeFlag {
		e.complete(app, args[1:n-1])
		return fail.OK
	}
	// --version is a flag before a command only: completion, which
	// answers above and offers the global flags after a command too,
	// leaves it out.
	app.Flags = append(app.Flags, e.versionFlag())
	err := app.Run(permute(app, args))
	if notFound {
		return fail.Usage
	}
	if err == nil {
		e.refreshCompat()
	}
	return exitCode(e.kept(err), io.Stderr)
}

// refreshCompat brings the bash libraries' state file of each workflow
// the command changed up to date, where compat keeps one. The change is
// made and kept whatever happens here, so a failure is a warning: an
// exit code would say that nothing changed.
func (e *env) refreshCompat() {
	if e.project == nil {
		return
	}
	for _, id := range e.project.Changed() {
		if err := compat.Refresh(e.project, id); err != nil {
			fmt.Fprintf(e.Stderr, "flowstate: warning: workflow %s: its state file for the bash libraries (.claude/tmp/workflow_%s.sh) was not brought up to date: %v\n", id, id, err)
		}
	}
}

// globalFlags are the flags before the command, but --version.
func (e *env) globalFlags() []cli.Flag {
	return []cli.Flag{e.globalWorkflowFlag(), cli.HelpFlag}
}

// versionFlag is --version: what `flowstate version` prints, and nothing
// else runs (the Exit ends the run with 0 before any command). It is
// urfave's VersionFlag with an Action, where urfave/cli v2 would print
// through the package-level VersionPrinter.
func (e *env) versionFlag() cli.Flag {
	return &cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version", DisableDefaultText: true,
		Action: func(_ *cli.Context, show bool) error {
			if !show {
				return nil
			}
			e.printf("%s\n", version.Line())
			return cli.Exit("", fail.OK)
		}}
}

// kept adds to a command's error what its earlier writes recorded and
// keep (docs/architecture.md, "What a non-zero exit means"): the steps of
// phase-plan, say, record what a worker delivered before they plan the
// next phase. A workflow that waits for a person (exit 6) says what it
// recorded already.
func (e *env) kept(err error) error {
	if err == nil || e.project == nil || fail.Code(err) == fail.Waiting || len(e.project.Recorded()) == 0 {
		return err
	}
	return fmt.Errorf("%w; before that, this command recorded (and keeps): %s", err, strings.Join(e.project.Recorded(), "; "))
}

// exitCode is the one mapping of an error to flowstate's exit code
// (fail.Code; docs/cli.md#exit-codes), after reporting it on stderr in
// one line.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return fail.OK
	}
	msg := err.Error()
	var ec cli.ExitCoder
	if errors.As(err, &ec) && fail.Code(err) == fail.Unexpected {
		// urfave's own exits, and compat-call's: their code as it is.
		if msg != "" {
			fmt.Fprintln(stderr, "flowstate: "+msg)
		}
		return ec.ExitCode()
	}
	if msg != "" {
		fmt.Fprintln(stderr, "flowstate: "+kv.OneLine(msg))
	}
	return fail.Code(err)
}
