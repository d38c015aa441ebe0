package protocol

import "github.com/flowstate-dev/flowstate/lib/fail"

// maxNameLen is the longest command name: the agents `flowstate new`
// names after a command (NAME-reviewer, NAME-writer) stay within the 64
// bytes of a definition's names.
const maxNameLen = 48

// CheckCommandName is the one rule of what a command may be named: 1 to
// 48 lower-case letters, digits, '-' and '_', the first a letter or a
// digit, as Claude Code calls it (/NAME, without the slash). The name
// goes where text of its own choosing must not: a KEY=VALUE line
// (COMMAND_NAME=NAME, which a newline would forge), file names, the
// markdown and agent names `flowstate new` writes (NAME-reviewer), a
// command line (a leading '-' is a flag). phase-start and sm-init check
// --command by it, and `flowstate new` the command it writes and the
// plugin that prefixes it (/PLUGIN:NAME), so what new writes,
// phase-start starts.
func CheckCommandName(name string) error {
	switch {
	case name == "":
		return fail.Invalidf("an empty name; a name is 1 to %d lower-case letters, digits, '-' and '_', e.g. review-pr", maxNameLen)
	case len(name) > maxNameLen:
		return fail.Invalidf("a name of %d bytes, more than %d", len(name), maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_') {
			continue
		}
		return fail.Invalidf("%q: a name is lower-case letters, digits, '-' and '_', the first a letter or a digit, e.g. review-pr", name)
	}
	return nil
}
