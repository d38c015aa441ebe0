package grant

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What "runs nothing but flowstate" means, read from the parsed shell:
// every command is flowstate (by name or as $FLOWSTATE_BIN) or echo,
// with literal words only (no expansion, substitution, glob or
// assignment), joined by newlines, &&, || or pipes, reading only quoted
// heredocs (whose bodies are never expanded) and writing only to
// /dev/null or another descriptor. Whatever the arguments hold, such a
// text runs flowstate and prints.

// Own reports whether text runs nothing but flowstate.
func Own(text string) bool {
	f, ok := parse(text)
	return ok && ownFile(f)
}

func ownFile(f *syntax.File) bool {
	if len(f.Stmts) == 0 {
		return false
	}
	for _, st := range f.Stmts {
		if !ownStmt(st) {
			return false
		}
	}
	return true
}

func ownStmt(st *syntax.Stmt) bool {
	if st.Background || st.Coprocess || slices.ContainsFunc(st.Redirs, notOwnRedirect) {
		return false
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		return ownCall(c)
	case *syntax.BinaryCmd:
		return (c.Op == syntax.AndStmt || c.Op == syntax.OrStmt || c.Op == syntax.Pipe) && ownStmt(c.X) && ownStmt(c.Y)
	}
	return false
}

func ownCall(c *syntax.CallExpr) bool {
	if len(c.Assigns) > 0 || len(c.Args) == 0 {
		return false
	}
	if !isFlowstate(c.Args[0]) && literal(c.Args[0]) != "echo" {
		return false
	}
	for _, w := range c.Args[1:] {
		if _, ok := literalWord(w); !ok {
			return false
		}
	}
	return true
}

// notOwnRedirect reports a redirection that reads or writes a file, or
// reads text the shell expands.
func notOwnRedirect(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		_, quoted := delimiter(r.Word)
		return !quoted && !allLiteral(r.Hdoc)
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll:
		return literal(r.Word) != "/dev/null"
	case syntax.DplOut:
		d := literal(r.Word)
		return d == "" || strings.Trim(d, "0123456789") != "" && d != "-"
	}
	return true
}

// allLiteral reports whether a heredoc body expands nothing.
func allLiteral(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return false
		}
	}
	return true
}

// isFlowstate reports whether a command word runs flowstate: its name,
// or $FLOWSTATE_BIN (quoted or not), the binary the SessionStart hook
// exports. A path is not: any file can be named flowstate.
func isFlowstate(w *syntax.Word) bool {
	if literal(w) == "flowstate" {
		return true
	}
	parts := w.Parts
	if len(parts) == 1 {
		if q, ok := parts[0].(*syntax.DblQuoted); ok && !q.Dollar {
			parts = q.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	p, ok := parts[0].(*syntax.ParamExp)
	return ok && p.Param != nil && p.Param.Value == "FLOWSTATE_BIN" && !p.Excl && !p.Length && !p.Width &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// literal is w's text when the shell takes it as it is, "" otherwise.
func literal(w *syntax.Word) string {
	s, _ := literalWord(w)
	return s
}

// literalWord is w's text and true when nothing in it is expanded:
// plain text with no glob, brace or tilde, single quotes, double quotes
// around plain text.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{~") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// phaseSteps are the flowstate subcommands that record that they ran.
var phaseSteps = []string{"phase-start", "phase-plan", "phase-verify", "resume"}

// runsPhase reports whether f runs one of phaseSteps.
func runsPhase(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && isFlowstate(c.Args[0]) {
			sub, _ := subcommand(c.Args[1:])
			found = found || slices.Contains(phaseSteps, sub)
		}
		return !found
	})
	return found
}

// subcommand is flowstate's subcommand among its arguments (the global
// --workflow ID and other flags may come first) and the arguments after
// it.
func subcommand(args []*syntax.Word) (string, []*syntax.Word) {
	for i := 0; i < len(args); i++ {
		switch a := literal(args[i]); {
		case a == "--workflow":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// SupervisorStep reports whether command runs exactly one thing: a
// sub-supervisor's step, flowstate phase-plan or phase-verify with
// --supervisor, all its words literal, nothing redirected. A command
// that only mentions one (in a grep, an echo or a heredoc) is not one.
func SupervisorStep(command string) bool {
	f, ok := parse(command)
	if !ok || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 || !ownStmt(f.Stmts[0]) {
		return false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || !isFlowstate(c.Args[0]) {
		return false
	}
	sub, rest := subcommand(c.Args[1:])
	return (sub == "phase-plan" || sub == "phase-verify") && slices.ContainsFunc(rest, func(w *syntax.Word) bool { return literal(w) == "--supervisor" })
}

// Match is the step of steps that command is, verbatim but for
// surrounding white space.
func Match(steps []Step, command string) (Step, bool) {
	command = strings.TrimSpace(command)
	for _, s := range steps {
		if s.Text == command {
			return s, true
		}
	}
	return Step{}, false
}
