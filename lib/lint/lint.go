// Package lint checks a command or agent markdown file against the
// command protocol (docs/command-protocol.md), for `flowstate lint`: each
// finding names its line and says what is wrong and what to do. It holds
// the rules that make a file safe for a model to follow literally, for
// flowstate's own commands and for the ones users write, and those that
// make a command's files agree (command.go: the definition it starts,
// the agents that names); it knows no command or agent by name. It is
// pure: Check reads a file's text, never the disk (the caller reads the
// files a command uses), and bash blocks are parsed in Go
// (mvdan.cc/sh), not run.
package lint

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// patterns are lint's regular expressions, compiled on first use rather
// than at every flowstate start (each bash block is a process of its own).
var patterns = sync.OnceValue(func() *patternSet {
	return &patternSet{
		// KEY= text a bash block prints (echo "KEY=...", printf,
		// a heredoc: script.printed); KEY_1=, KEY_$i= or KEY_${i}= (a
		// printf's KEY_%d=) print a for_each's KEY_i.
		literalKey:  regexp.MustCompile(`\b(` + protocol.KeyPattern + `)=`),
		indexedKey:  regexp.MustCompile(`\b(` + protocol.KeyPattern + `?)_(?:[0-9]+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)=`),
		literalNext: regexp.MustCompile(`\bNEXT=["']?([A-Za-z0-9][A-Za-z0-9_.-]*)`),
		// What Claude Code replaces in a command file with the command's
		// arguments before the model reads it: $0 is the first argument
		// in the version flowstate targets, $1 the second, $ARGUMENTS[N]
		// the (N+1)th.
		positional: regexp.MustCompile(`\$[0-9]|\$ARGUMENTS\[`),
		upperCase:  regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`),
		name:       regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`),
		// A [N] of a key's path as messages write it ("fields[1]").
		indexed: regexp.MustCompile(`\[([0-9]+)\]`),
	}
})

type patternSet struct {
	literalKey, indexedKey, literalNext, positional, upperCase, name, indexed *regexp.Regexp
}

// A Finding is one violation: the file, its line, and a one-line message
// that says what is wrong and what to do.
type Finding struct {
	Path    string
	Line    int
	Message string
}

// String is the finding as a compiler prints one: file:line: message.
func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.Path, f.Line, f.Message) }

// Kind tells commands, which Claude Code expands with the user's
// arguments, from agents, which it runs as subagents.
type Kind int

const (
	Command Kind = iota
	Agent
)

func (k Kind) String() string {
	if k == Agent {
		return "agent"
	}
	return "command"
}

// KindOf is the kind of the file at path: an agent under a directory
// named agents, a command under one named commands (the layout of
// .claude/ and of a plugin); elsewhere an agent when its frontmatter has
// a name, else a command.
func KindOf(path string, frontmatter map[string]string) Kind {
	for dir := filepath.Dir(filepath.Clean(path)); ; dir = filepath.Dir(dir) {
		switch filepath.Base(dir) {
		case "agents":
			return Agent
		case "commands":
			return Command
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if _, ok := frontmatter["name"]; ok {
		return Agent
	}
	return Command
}

// linter collects the findings of one file.
type linter struct {
	path     string
	kind     Kind
	doc      protocol.Doc
	scripts  []*script // per step: the parsed bash block; nil for a task block or a block that does not parse
	findings []Finding
}

func (l *linter) add(line int, format string, a ...any) {
	l.findings = append(l.findings, Finding{Path: l.path, Line: line, Message: fmt.Sprintf(format, a...)})
}

// Check returns the findings for the command or agent file at path whose
// text is md, in line order; none when it follows the protocol. A file
// that does not parse as the protocol's markdown gets one finding, where
// it stops parsing.
func Check(path, md string) []Finding {
	l := &linter{path: path}
	md = strings.ReplaceAll(md, "\r\n", "\n") // a file saved with Windows line ends reads the same
	d, err := protocol.Parse(md)
	if err != nil {
		line := 1
		if se, ok := err.(*protocol.SyntaxError); ok {
			line, err = se.Line, fmt.Errorf("%s", se.Msg)
		}
		l.add(line, "%v", err)
		return l.findings
	}
	l.doc, l.kind = d, KindOf(path, d.Frontmatter)
	l.frontmatter()
	l.bash()
	l.tasks()
	l.jumps()
	if l.kind == Command {
		l.arguments(md)
	} else {
		l.agentBody()
	}
	slices.SortStableFunc(l.findings, func(a, b Finding) int { return cmp.Compare(a.Line, b.Line) })
	return l.findings
}

// frontmatter: Claude Code lists a command by its description, and picks
// an agent by its name and description with the tools it may use.
func (l *linter) frontmatter() {
	want := []string{"description"}
	if l.kind == Agent {
		want = []string{"name", "description", "tools"}
	}
	var missing []string
	for _, k := range want {
		if l.doc.Frontmatter[k] == "" {
			missing = append(missing, k)
		}
	}
	switch {
	case missing == nil:
	case l.kind == Agent:
		l.add(1, "agent frontmatter without %s: start the file with --- lines holding name: (the agent's name), description: (when to use it) and tools: (e.g. Read, Write, Bash)", strings.Join(missing, ", "))
	default:
		l.add(1, "command frontmatter without a description: start the file with --- lines holding description: (what the command does; Claude Code lists it)")
	}
}

// bash parses every bash block: each must parse, source nothing and read
// no variable that only an earlier block (another process) set.
func (l *linter) bash() {
	l.scripts = make([]*script, len(l.doc.Steps))
	perrs := make([]*parseError, len(l.doc.Steps))
	stored := map[string]bool{} // keys the file's blocks store, which state-load sets
	for i, st := range l.doc.Steps {
		if !st.Bash() {
			continue
		}
		l.scripts[i], perrs[i] = readScript(st.Body)
		if l.scripts[i] != nil {
			for _, k := range l.scripts[i].stored {
				stored[k] = true
			}
		}
	}
	for i, st := range l.doc.Steps {
		s, perr := l.scripts[i], perrs[i]
		switch {
		case perr != nil && perr.deep:
			l.add(st.Line+perr.line, "bash block %s", perr.msg)
			continue
		case perr != nil:
			l.add(st.Line+perr.line, "bash block does not parse: %s; fix the shell syntax", perr.msg)
			continue
		}
		if s == nil {
			continue
		}
		for _, src := range s.sources {
			l.add(st.Line+src.line, "`%s`: a bash block never sources a file (each block is a new process, and the file may change under it); call flowstate instead (eval \"$(flowstate compat)\" has the bash libraries' functions)", src.name)
		}
		for _, u := range s.unset {
			if u.name == "ARGUMENTS" && l.kind == Command {
				continue // the arguments rule says where $ARGUMENTS may stand
			}
			if s.loads && stored[u.name] {
				continue // a key the file stores, set by state-load (lower case too)
			}
			l.add(st.Line+u.line, "$%s is never set in this block: each bash block runs as its own process, so an earlier block's variables are gone; set it here, get it from flowstate (state-append, then state-get), or write ${%s:?...} if the environment provides it", u.name, u.name)
		}
	}
}

// agentBody: the paths an agent writes and the line it returns come from
// its prompt; a write or return line in the agent's own text would be
// followed as well, and can name a stale path.
func (l *linter) agentBody() {
	for _, p := range l.doc.Prose {
		if _, ok := protocol.WriteTarget(p.Text); ok {
			l.add(p.Line, "a write line in the agent's text (%q): the path an agent writes comes from its prompt; say \"at exactly the path given\" instead", strings.TrimSpace(p.Text))
		}
		if _, ok := protocol.ReturnLine(p.Text); ok {
			l.add(p.Line, "a return line in the agent's text (%q): the line an agent returns comes from its prompt's Return exactly: line; refer to that instead", strings.TrimSpace(p.Text))
		}
	}
}
