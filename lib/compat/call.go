package compat

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Env is what a function call touches besides its arguments.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Answer gets the assignments for the calling shell (fd 3 of
	// `flowstate compat-call`), which the dispatcher evaluates.
	Answer io.Writer
	Getenv func(string) string
	Cwd    string
	Now    func() time.Time
}

// Call runs one function as `flowstate compat-call --answer-fd 3` is
// asked to:
//
//	[--workflow-id ID] [--state-file PATH] [--set NAME=VALUE]... [--function NAME]... -- FUNC ARGS...
//
// the options being the calling shell's state the binary cannot see: its
// WORKFLOW_ID and STATE_FILE, the variables the function reads that are set, the shell
// functions it may call. It returns the function's return code, as the
// original documents it; its messages are on Stderr, one line each.
func Call(env Env, argv []string) int {
	c := &call{Env: env, vars: map[string]string{}, funcs: map[string]bool{}}
	if env.Now == nil {
		c.Now = time.Now
	}
	rest, err := c.parse(argv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "flowstate compat-call: %v\n", err)
		return fail.Usage
	}
	f, ok := lookup(rest[0])
	if !ok {
		fmt.Fprintf(env.Stderr, "flowstate compat-call: no function %q (run `flowstate compat` for the list)\n", rest[0])
		return fail.Usage
	}
	c.name, c.args = f.name, rest[1:]
	rc := f.run(c)
	// The workflow is as the call left it, whatever its generated file:
	// a failed rewrite is warned of and never turns a stored value into a
	// non-zero exit (load_workflow_state's 1 would mean "no workflow"), as
	// app's refreshCompat does after a flowstate command.
	if c.touched != nil {
		if err := writeFile(c.touched, c.touchedView); err != nil {
			c.warn("workflow %s: its state file %s was not rewritten, though what the call stored is stored: %v", c.touched.ID, stateFile(c.touched.P, c.touched.ID), err)
		}
	}
	if _, err := io.WriteString(env.Answer, c.answer.String()); err != nil && rc == 0 {
		c.warn("cannot hand the shell its variables: %v", err)
		rc = 1
	}
	return rc
}

// parse reads the shell's state and returns FUNC ARGS.
func (c *call) parse(argv []string) ([]string, error) {
	for i := 0; i < len(argv); i++ {
		opt := argv[i]
		if opt == "--" {
			if i+1 == len(argv) {
				return nil, errors.New("no function named after --")
			}
			return argv[i+1:], nil
		}
		if i+1 == len(argv) {
			return nil, fmt.Errorf("%s needs a value", opt)
		}
		i++
		switch v := argv[i]; opt {
		case "--workflow-id":
			c.shellID = v
		case "--state-file":
			c.stateFile = v
		case "--set":
			name, value, ok := strings.Cut(v, "=")
			if !ok {
				return nil, fmt.Errorf("--set %q is not NAME=VALUE", v)
			}
			c.vars[name] = value
		case "--function":
			c.funcs[v] = true
		default:
			return nil, fmt.Errorf("unknown option %q (this is the internal call of `flowstate compat`'s functions)", opt)
		}
	}
	return nil, errors.New("no -- before the function name")
}

// call is one function call: its arguments, the shell's state and what
// it answers.
type call struct {
	Env
	name    string
	args    []string
	shellID string // the shell's WORKFLOW_ID, "" when unset or empty
	// stateFile is the shell's STATE_FILE, "" when unset or empty: the
	// original's functions wrote to the workflow it names.
	stateFile string
	vars      map[string]string // the variables it reads that the shell has set
	funcs     map[string]bool   // the shell's functions it may call
	answer    strings.Builder
	project   *store.Project
	// touched is the workflow whose generated state file the call
	// rewrites when it is done: one it changed or loaded.
	touched *store.Workflow
	// touchedView is touched's view, when the call built one after its last
	// change of it (touch): the state file is rendered from it.
	touchedView *shell
}

// touch has the call rewrite w's generated state file when it is done,
// from s when not nil: a view of w built after the call's last change.
func (c *call) touch(w *store.Workflow, s *shell) {
	c.touched, c.touchedView = w, s
}

// arg is argument i, "" when not given.
func (c *call) arg(i int) string {
	if i < len(c.args) {
		return c.args[i]
	}
	return ""
}

// warn writes one line for people, prefixed with the function's name.
func (c *call) warn(format string, a ...any) {
	fmt.Fprintf(c.Stderr, "%s: %s\n", c.name, kv.OneLine(fmt.Sprintf(format, a...)))
}

// fail warns and returns rc.
func (c *call) fail(rc int, format string, a ...any) int {
	c.warn(format, a...)
	return rc
}

// failErr reports err, returning 1: the originals' code for any failure.
func (c *call) failErr(err error) int { return c.fail(1, "%v", err) }

// usage reports a wrong call, naming what to write instead.
func (c *call) usage(format string, a ...any) int {
	return c.fail(1, "usage: "+format, a...)
}

// print writes machine output: one line of s.
func (c *call) print(s string) {
	io.WriteString(c.Stdout, s)
	if !strings.HasSuffix(s, "\n") {
		io.WriteString(c.Stdout, "\n")
	}
}

// set answers NAME=value for the shell, exported when export is true.
func (c *call) set(name, value string, export bool) {
	if export {
		c.answer.WriteString("export ")
	}
	c.answer.WriteString(name + "=" + statefile.Quote(value) + "\n")
}

// setArray answers NAME=(values...).
func (c *call) setArray(name string, values []string) {
	c.answer.WriteString(name + "=(")
	for i, v := range values {
		if i > 0 {
			c.answer.WriteByte(' ')
		}
		c.answer.WriteString(statefile.Quote(v))
	}
	c.answer.WriteString(")\n")
}

// runAnswer is the dispatcher's array of the shell function to call.
const runAnswer = "__fs_run"

// run has the dispatcher call the shell function fn with args: the only
// thing compat leaves to bash, since the binary cannot call the shell.
func (c *call) run(fn string, args ...string) {
	c.setArray(runAnswer, append([]string{fn}, args...))
}

func (c *call) proj() (*store.Project, error) {
	if c.project == nil {
		p, err := store.FindProject(c.Getenv, c.Cwd)
		if err != nil {
			return nil, err
		}
		p.Now = c.Now
		c.project = p
	}
	return c.project, nil
}

func (c *call) session() string { return c.Getenv("CLAUDE_CODE_SESSION_ID") }

// exists reports whether workflow id has a directory.
func exists(p *store.Project, id string) bool {
	dir, err := p.WorkflowDir(id)
	if err != nil {
		return false
	}
	_, err = os.Lstat(dir)
	return !errors.Is(err, fs.ErrNotExist)
}

// shellWorkflowID is the workflow the shell names: the one whose state
// file its STATE_FILE is, as the original's functions wrote to
// STATE_FILE whatever WORKFLOW_ID said (a command that switches between
// workflows sets STATE_FILE), else its WORKFLOW_ID; "" for none.
func (c *call) shellWorkflowID() string {
	return firstNonEmpty(c.stateFileWorkflowID(), c.shellID)
}

// stateFileWorkflowID is the workflow whose generated state file the
// shell's STATE_FILE is, "" for none.
func (c *call) stateFileWorkflowID() string {
	if c.stateFile == "" {
		return ""
	}
	p, err := c.proj()
	if err != nil {
		return ""
	}
	name, ok := strings.CutPrefix(filepath.Base(c.stateFile), "workflow_")
	id, sh := strings.CutSuffix(name, ".sh")
	if !ok || !sh || store.ValidID(id) != nil || c.abs(c.stateFile) != stateFile(p, id) || !exists(p, id) {
		return ""
	}
	return id
}

// workflow finds the shell's workflow: the one it names
// (shellWorkflowID), else what flowstate would pick (FLOWSTATE_WORKFLOW,
// the session's workflow, the project's only active one).
func (c *call) workflow() (*store.Workflow, error) {
	p, err := c.proj()
	if err != nil {
		return nil, err
	}
	if id := c.shellWorkflowID(); id != "" {
		return p.Workflow(id)
	}
	return p.Resolve(store.Selector{Env: c.Getenv("FLOWSTATE_WORKFLOW"), Session: c.session()})
}

// named is the workflow the shell names (shellWorkflowID,
// FLOWSTATE_WORKFLOW, the session's unless finished), nil when it names
// none. The checkpoint functions work without a workflow, as the
// original's did: they never guess one.
func (c *call) named() (*store.Workflow, error) {
	p, err := c.proj()
	if err != nil {
		return nil, err
	}
	if c.shellWorkflowID() == "" && c.Getenv("FLOWSTATE_WORKFLOW") == "" {
		id, err := p.SessionWorkflow(c.session())
		if err != nil {
			return nil, err
		}
		// A session's finished workflow is its last command's, not this one's.
		if s, ok := p.Summary(id); id == "" || ok && s.Finished() {
			return nil, nil
		}
	}
	return c.workflow()
}

// checkpointed is the shell's workflow and its checkpoint.
func (c *call) checkpointed() (*store.Workflow, []byte, error) {
	w, err := c.workflow()
	if err != nil {
		return nil, nil, err
	}
	doc, err := w.ReadCheckpoint()
	return w, doc, err
}
