package orchestrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// What a start checks before its workflow exists: what the definition
// alone cannot say, because it depends on the arguments or the
// classification, is refused here rather than by a step of the run.

// requestError is a start refused for what the request holds (its
// arguments, its topics), not for its definition: the same definition
// runs with another request.
type requestError struct{ error }

func (e requestError) Unwrap() error { return e.error }

// runnable refuses a definition the phase loop cannot run: with no state
// given work, it would walk the workflow to its end with nothing done.
func runnable(r Request) error {
	if r.Machine == nil || len(r.Machine.Work) > 0 {
		return nil
	}
	return fail.Invalidf("%s: machine %q gives no state any work, so /%s's phase loop has nothing to run; give its states \"work\" (docs/writing-an-orchestrator.md), or run it from your command's own blocks with sm-init",
		r.Definition, r.Machine.Name, r.Command)
}

// checkArguments refuses, naming each, the items of the arguments that
// are not what the definition says they are: files, directories (a
// relative path is the project's), or words matching its pattern.
func checkArguments(p *store.Project, r Request, m *machine.Machine) error {
	re, err := m.ArgumentPattern()
	if err != nil || m.Arguments == "" {
		return err
	}
	var bad []string
	for _, item := range ArgumentItems(r.Description) {
		if why := argumentProblem(p, m.Arguments, item, re != nil && !re.MatchString(item)); why != "" {
			bad = append(bad, item+" ("+why+")")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	what := map[string]string{machine.ArgumentsFiles: "a file", machine.ArgumentsDirs: "a directory"}[m.Arguments]
	if what == "" {
		what = "text matching " + m.Arguments
	}
	return requestError{fail.Usagef("/%s takes arguments that are each %s, and these are not: %s; nothing was started", r.Command, what, strings.Join(bad, ", "))}
}

// argumentProblem says what is wrong with one argument, "" when nothing.
func argumentProblem(p *store.Project, kind, item string, mismatch bool) string {
	if kind != machine.ArgumentsFiles && kind != machine.ArgumentsDirs {
		if mismatch {
			return "does not match"
		}
		return ""
	}
	path := item
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "not found"
	case err != nil:
		return err.Error()
	case kind == machine.ArgumentsFiles && fi.IsDir():
		return "a directory"
	case kind == machine.ArgumentsDirs && !fi.IsDir():
		return "not a directory"
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return "not a regular file"
	}
	return ""
}

// preflight plans, without writing anything, the workers of each state
// the workflow can reach whose fan-out the arguments or the
// classification decide: too many of them, two sharing an id or a file,
// or a min_delivered above their number is refused before the workflow
// exists. A plan's phases are known only once it is written.
func preflight(m *machine.Machine, scope string, cls classify.Classification, description string) error {
	s, err := m.Scope(scope)
	if err != nil {
		return err
	}
	f := Facts{SpecDir: string(filepath.Separator), Description: description, Topics: cls.ResearchTopics, Version: 1}
	for _, state := range m.Reach(s) {
		role, ok := RoleOf(m, state)
		if !ok || role.Source() != machine.SourceArguments && role.Source() != machine.SourceTopics {
			continue
		}
		ws, err := Workers(role, f)
		if err != nil {
			return requestError{err}
		}
		what := "the arguments"
		if role.Source() == machine.SourceTopics {
			what = "the research topics"
		}
		if err := role.CheckShareOf(len(ws), what); err != nil {
			return requestError{fail.Invalidf("state %s: %v", state, err)}
		}
	}
	return nil
}

// StartHint is how the user runs the command, for a start given no
// arguments: "/NAME " and the argument-hint of the command's file, found
// beside its definition (DIR/flows/NAME.json: DIR/commands/NAME.md); ""
// for a command without a definition of its own, which has the built-in
// commands' example.
func StartHint(command, definition string) string {
	if definition == "" {
		return ""
	}
	hint := "ARGUMENTS"
	file := filepath.Join(filepath.Dir(filepath.Dir(definition)), "commands", command+".md")
	if md, err := fsx.ReadFile(file, 1<<20); err == nil {
		if d, err := protocol.Parse(string(md)); err == nil && d.Frontmatter["argument-hint"] != "" {
			hint = d.Frontmatter["argument-hint"]
		}
	}
	return fmt.Sprintf("/%s %s", command, hint)
}
