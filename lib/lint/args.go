package lint

import "strings"

// arguments: Claude Code pastes the user's text wherever a command says
// $ARGUMENTS. The one safe place is alone on a line of a quoted heredoc in
// a bash block, where the shell neither expands nor runs it and flowstate
// reads it exactly as typed; anywhere else the shell would run it, or the
// model would read it as part of the command.
func (l *linter) arguments(md string) {
	type place struct {
		step int // index in l.doc.Steps
		rel  int // line within the block's body, from 1
	}
	inStep := map[int]place{}
	for i, st := range l.doc.Steps {
		for k := range strings.Count(st.Body, "\n") + 1 {
			inStep[st.Line+1+k] = place{i, k + 1}
		}
	}
	frontmatter := l.doc.Lines - strings.Count(l.doc.Body, "\n")
	for k, text := range strings.Split(md, "\n") {
		line := k + 1
		if line <= frontmatter {
			continue // the frontmatter
		}
		if m := patterns().positional.FindString(text); m != "" {
			l.add(line, "%q in a command: Claude Code replaces $0, $1, ... and $ARGUMENTS[N] with the command's arguments before the model reads it; take the arguments from $ARGUMENTS in a quoted heredoc (in awk, write $(1) for a field)", m)
		}
		if !strings.Contains(text, "$ARGUMENTS") {
			continue
		}
		p, ok := inStep[line]
		switch {
		case !ok:
			l.add(line, "$ARGUMENTS outside a bash block: Claude Code pastes the user's text here, where the model reads it as part of the command; hand it to flowstate in a bash block, alone on a line of a quoted heredoc (<<'EOF')")
		case l.doc.Steps[p.step].Task != nil:
			l.add(line, "$ARGUMENTS in a task block: the agent would get the user's raw text; have a bash block hand it to flowstate and print what the agent needs as KEY=VALUE lines")
		case l.doc.Steps[p.step].Launch != nil:
			l.add(line, "$ARGUMENTS in a workflow block: the workflow's args are what flowstate prints (ids), never the user's raw text; have a bash block hand it to flowstate")
		case l.scripts[p.step] == nil:
			// The block does not parse: that finding comes first.
		case !l.scripts[p.step].heredoc[p.rel]:
			l.add(line, "$ARGUMENTS outside a quoted heredoc: the shell would expand and run the user's text; put $ARGUMENTS alone on a line of a quoted heredoc (<<'EOF') and read it from stdin")
		case strings.TrimSpace(text) != "$ARGUMENTS":
			l.add(line, "$ARGUMENTS must stand alone on its line in the heredoc, so that what flowstate reads is exactly what the user typed")
		}
	}
}
