// Package grant decides which of a Claude Code session's tool calls are
// flowstate's own steps, so that the PreToolUse hook can answer them
// "allow" and a person in Claude Code's default permission mode is never
// asked about them, and nothing else: a Bash call is one only when it is,
// verbatim, a bash block of the command the user invoked (or of the agent
// that makes it), as Claude Code expanded it, and that block runs nothing
// but flowstate. Which command, which agent and which files are the
// workflow's is the hook's and lib/orchestrate's to say.
//
// It is pure: it reads texts, never the disk, and parses shell in Go
// (mvdan.cc/sh), never runs it.
package grant

import (
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// Expansion is what Claude Code substitutes into a command file before
// the model reads it (verified with Claude Code 2.1.328): $ARGUMENTS
// becomes the arguments as typed after the command's name (surrounding
// white space trimmed), in one pass, and then every ${CLAUDE_NAME} of the
// whole text, the arguments included, its value. An agent file is
// not expanded (Command false).
type Expansion struct {
	Command bool
	Args    string
	// Vars are the ${CLAUDE_NAME} values the caller knows
	// (CLAUDE_SESSION_ID, CLAUDE_PROJECT_DIR, CLAUDE_PLUGIN_ROOT for a
	// plugin's command): a block that holds any other after expansion is
	// never one of flowstate's steps, since its text cannot be known.
	Vars map[string]string
}

// Step is one bash block of a command or agent file that is flowstate's
// own: its text as the model receives it, surrounding white space
// trimmed.
type Step struct {
	Text string
	// Phase: it runs a phase step (phase-start, phase-plan, phase-verify,
	// resume), which records that it ran (orchestrate.StepEnded).
	Phase bool
}

// argumentsToken stands for $ARGUMENTS while a block is checked: a word
// no block holds, and one the shell reads as plain text.
const argumentsToken = "FLOWSTATE_GRANT_ARGUMENTS_6d1f0a"

// unexpandable are the parts of a command file Claude Code replaces in
// ways this package does not reproduce: positional arguments ($0, $1,
// $ARGUMENTS[N]), text glued to $ARGUMENTS, and shell commands run
// before the model reads the file (!`cmd`). A block that holds one is
// not a step.
var unexpandable = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\\$[0-9]|\\$ARGUMENTS[A-Za-z0-9_\\[]|!`")
})

// Steps lists the bash blocks of md (a command or agent file) that are
// flowstate's own steps, as the model receives them when Claude Code
// expands the file with x. A block is one when it runs nothing but
// flowstate (Own) and the arguments land only in the bodies of quoted
// heredocs they cannot end: arguments holding a line `FLOWSTATE_EOF`
// would turn the rest of them into commands. A file that does not parse,
// or declares named arguments, has none.
func Steps(md string, x Expansion) []Step {
	d, err := protocol.Parse(md)
	if err != nil || d.Frontmatter["arguments"] != "" {
		return nil
	}
	var out []Step
	for _, s := range d.Steps {
		if !s.Bash() {
			continue
		}
		if st, ok := step(s.Body, x); ok {
			out = append(out, st)
		}
	}
	return out
}

// step is body as expanded with x, if it is one of flowstate's steps.
func step(body string, x Expansion) (Step, bool) {
	if !x.Command {
		if strings.Contains(body, "${CLAUDE_") {
			return Step{}, false
		}
		return own(body)
	}
	if unexpandable().MatchString(body) {
		return Step{}, false
	}
	args := expandVars(x.Args, x.Vars)
	marked := expandVars(strings.ReplaceAll(body, "$ARGUMENTS", argumentsToken), x.Vars)
	if strings.Contains(marked, "${CLAUDE_") {
		return Step{}, false
	}
	if strings.Contains(marked, argumentsToken) && (strings.Contains(args, "${CLAUDE_") || !argumentsEnclosed(marked, args)) {
		return Step{}, false
	}
	return own(strings.ReplaceAll(marked, argumentsToken, args))
}

// expandVars replaces each ${NAME} of vars in text.
func expandVars(text string, vars map[string]string) string {
	for name, value := range vars {
		text = strings.ReplaceAll(text, "${"+name+"}", value)
	}
	return text
}

// own is text as a Step, if it runs nothing but flowstate.
func own(text string) (Step, bool) {
	f, ok := parse(text)
	if !ok || !ownFile(f) {
		return Step{}, false
	}
	return Step{Text: strings.TrimSpace(text), Phase: runsPhase(f)}, true
}

// argumentsEnclosed reports whether every argumentsToken of text lies in
// the body of a heredoc whose delimiter is quoted (nothing in it is
// expanded), and args holds no line that would end such a heredoc.
func argumentsEnclosed(text, args string) bool {
	f, ok := parse(text)
	if !ok {
		return false
	}
	inBodies := 0
	enclosed := true
	syntax.Walk(f, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Hdoc == nil {
			return true
		}
		body := wordText(r.Hdoc)
		k := strings.Count(body, argumentsToken)
		if k == 0 {
			return true
		}
		inBodies += k
		delim, quoted := delimiter(r.Word)
		if r.Op != syntax.Hdoc || !quoted || endsHeredoc(args, delim) {
			enclosed = false
		}
		return true
	})
	return enclosed && inBodies == strings.Count(text, argumentsToken)
}

// endsHeredoc reports whether text holds a line that is delim.
func endsHeredoc(text, delim string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line == delim {
			return true
		}
	}
	return false
}

// parse reads text as bash.
func parse(text string) (*syntax.File, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	return f, err == nil
}

// delimiter is a heredoc's delimiter word, and whether it is quoted
// (<<'EOF', <<"EOF", <<\EOF), which keeps the body from being expanded.
func delimiter(w *syntax.Word) (string, bool) {
	var b strings.Builder
	quoted := false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				quoted = true
			}
			b.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
		case *syntax.SglQuoted:
			quoted = true
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			quoted = true
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String(), quoted
}

// wordText is the literal text of a heredoc body; a quoted heredoc's body
// is one literal.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		}
	}
	return b.String()
}
