package protocol

import "strings"

// A command that runs its definition as a Claude Code workflow (the
// workflow engine, docs/command-protocol.md section 3a) launches it from
// a ```workflow block: one Workflow tool call, then the model waits for
// Claude Code's notification and runs the next block.

// Launch is a ```workflow block: the saved workflow to launch and its
// args, each a value or a ${KEY} a bash block before it printed.
type Launch struct {
	Name string
	Args string
}

// parseLaunch reads the body of a ```workflow block: "Workflow {", then
// name: and args:, each on its line, then "}".
func parseLaunch(body string) (Launch, *SyntaxError) {
	var l Launch
	err := braced(body, "Workflow", func(_ []string, i, _ int, key, value string) (int, *SyntaxError) {
		switch key {
		case "name":
			l.Name = value
		case "args":
			l.Args = value
		default:
			return i, syntaxErrorf(i+1, "unknown field %q: a workflow block has name and args", key)
		}
		return i, nil
	})
	if err != nil {
		return l, err
	}
	if l.Name == "" || l.Args == "" {
		return l, syntaxErrorf(1, "a workflow block needs name and args")
	}
	return l, nil
}

// harnessFrame starts the text Claude Code 2.1.328 gives an agent that a
// workflow script started, before the task the script computed; every
// line of the task follows it indented by two spaces (verified: the
// agent's first message, and the first line of its transcript).
const harnessFrame = "[Workflow harness — computed task]"

// ComputedTask is the task a workflow script gave its agent, as the
// script wrote it, from the text Claude Code framed it in; ok is false
// when text is not so framed (an Agent tool call's prompt, given
// verbatim).
func ComputedTask(text string) (task string, ok bool) {
	text = strings.TrimLeft(text, " \t\n")
	if !strings.HasPrefix(text, harnessFrame) {
		return "", false
	}
	_, body, _ := strings.Cut(text, "\n")
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n"), true
}
