package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Reading what a command is given: its workflow, positional arguments,
// files and stdin, and values from flags or the environment.

// workflowFlag is a command's --workflow, which every command that acts
// on a workflow takes; globalWorkflowFlag is the one before the command.
// Each fills its own field: urfave/cli sets a flag's Destination to its
// default when it parses that flag's command, so one field for both would
// lose the global value.
func (e *env) workflowFlag() cli.Flag { return workflowFlag(&e.workflowID) }

func (e *env) globalWorkflowFlag() cli.Flag { return workflowFlag(&e.globalWorkflowID) }

func workflowFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "workflow", Usage: "workflow `ID` (default: FLOWSTATE_WORKFLOW, then the session's workflow, then the only active one)", Destination: dst}
}

// workflow resolves the workflow a command acts on (see selector), or
// the only active workflow.
func (e *env) workflow() (*store.Workflow, error) {
	p, err := e.Project()
	if err != nil {
		return nil, err
	}
	return p.Resolve(e.selector())
}

// selector is how a command names its workflow: the command's
// --workflow, the global --workflow, FLOWSTATE_WORKFLOW, the session's
// current workflow.
func (e *env) selector() store.Selector {
	return store.Selector{
		Flag:    cmp.Or(e.workflowID, e.globalWorkflowID),
		Env:     e.Getenv("FLOWSTATE_WORKFLOW"),
		Session: e.Getenv("CLAUDE_CODE_SESSION_ID"),
	}
}

// given is a flag's Action that points *p at the flag's value. urfave/cli
// v2 runs a flag's Action only when the flag was given, so *p stays nil
// when it was not: a value given empty (--default "") is not a value left
// out.
func given[T any](p **T) func(*cli.Context, T) error {
	return func(_ *cli.Context, v T) error {
		*p = &v
		return nil
	}
}

// deref is *p, or the zero value for a flag not given.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// args checks the positional argument count and names them in the error.
func args(c *cli.Context, names ...string) ([]string, error) {
	switch {
	case c.NArg() == len(names):
	case len(names) == 0:
		return nil, fail.Usagef("%s takes no arguments; got %q (see `flowstate %s --help`)", c.Command.Name, c.Args().First(), c.Command.Name)
	default:
		return nil, fail.Usagef("%s takes %d argument(s): %s; got %d (see `flowstate %s --help`)", c.Command.Name, len(names), strings.Join(names, " "), c.NArg(), c.Command.Name)
	}
	return c.Args().Slice(), nil
}

// readInput reads a FILE argument, "-" or no argument meaning stdin.
func (e *env) readInput(c *cli.Context, what string) ([]byte, error) {
	if c.NArg() > 1 {
		return nil, fail.Usagef("%s takes at most one FILE (or - for stdin)", c.Command.Name)
	}
	return e.readNamed(what, c.Args().First())
}

// readNamed reads the file name, "-" or "" meaning stdin.
func (e *env) readNamed(what, name string) ([]byte, error) {
	if name == "" || name == "-" {
		return limit.ReadAll(e.Stdin, what)
	}
	return e.readFile(what, name)
}

// readFile reads whole, up to limit.Max, the file a person named for what
// (an argument, or a flag such as --machine), relative to the working
// directory. A missing file is a usage error (exit 2).
func (e *env) readFile(what, name string) ([]byte, error) {
	b, err := fsx.ReadNamed(e.path(name), limit.Max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail.Usagef("%s: file %s not found", what, name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// flagJSON is the value v of a flag that takes JSON or @FILE (sm-init
// --classification, sm-transition --checkpoint), flag naming it in errors.
func (e *env) flagJSON(flag, v string) ([]byte, error) {
	if name, ok := strings.CutPrefix(v, "@"); ok {
		return e.readFile(flag, name)
	}
	return []byte(v), nil
}

// text is the value v of a text flag, "-" reading it from stdin (a slash
// command passes what the user typed that way), trimmed.
func (e *env) text(flag, v string) (string, error) {
	if v == "-" {
		b, err := limit.ReadAll(e.Stdin, flag)
		if err != nil {
			return "", err
		}
		v = string(b)
	}
	return strings.TrimSpace(v), nil
}

// duration is the value of a duration flag if given (flag naming it in
// errors), else envDuration's.
func (e *env) duration(flag string, given *time.Duration, env string, def time.Duration) (time.Duration, error) {
	switch {
	case given == nil:
		return e.envDuration(env, def)
	case *given < 0:
		return 0, fail.Usagef("%s must not be negative", flag)
	}
	return *given, nil
}

// envDuration is the duration in the environment variable env, else def.
func (e *env) envDuration(env string, def time.Duration) (time.Duration, error) {
	s := e.Getenv(env)
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fail.Usagef("%s=%q is not a duration like 30s or 2m", env, s)
	}
	return d, nil
}

// path resolves a path a person typed from the working directory.
func (e *env) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(e.Cwd, name)
}

// onWorkflow wraps an action that takes exactly the named positional
// arguments and acts on the resolved workflow.
func (e *env) onWorkflow(fn func(w *store.Workflow, a []string) error, names ...string) cli.ActionFunc {
	return func(c *cli.Context) error {
		a, err := args(c, names...)
		if err != nil {
			return err
		}
		w, err := e.workflow()
		if err != nil {
			return err
		}
		return fn(w, a)
	}
}

// onHeld wraps an action that takes no arguments and acts on a workflow
// that waits for a person with status (store's ResolveWaiting finds it).
func (e *env) onHeld(status string, fn func(w *store.Workflow) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		p, err := e.argless(c)
		if err != nil {
			return err
		}
		sel := e.selector()
		w, waiting, err := p.ResolveWaiting(sel, status)
		if err != nil {
			return err
		}
		if err := fn(w); err != nil || !waiting {
			return err
		}
		return p.Adopt(sel.Session, w)
	}
}

// argless is the project of a command that takes no arguments.
func (e *env) argless(c *cli.Context) (*store.Project, error) {
	if _, err := args(c); err != nil {
		return nil, err
	}
	return e.Project()
}
