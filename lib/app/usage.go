package app

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// usageError turns a flag error into one line that names the command,
// spells the flag as typed (--name, not Go's -name), suggests the flag
// that was probably meant, and points at that command's help. urfave/cli
// v2 passes on the error of Go's flag package, which is text only; v2
// reads a flag's name back out of that text itself (parse.go,
// flagFromError), and so does this.
func usageError(c *cli.Context, err error, inCommand bool) error {
	flags, help, prefix := c.App.Flags, "flowstate", ""
	if inCommand {
		flags, help, prefix = c.Command.Flags, "flowstate "+c.Command.Name, c.Command.Name+": "
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + dashed(name)
		if s := closest(name, flagNames(flags)); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		msg = "flag needs a value: " + dashed(name)
	}
	msg = valueFlag(msg)
	return fail.Usagef("%s%s (see `%s --help`)", prefix, msg, help)
}

// valueFlag spells the flag of a bad value as typed: Go's flag package
// writes `invalid value "x" for flag -complexity: …` and, for a boolean,
// `invalid boolean value "x" for -json: parse error`, where the
// parse error says less than what a boolean takes.
func valueFlag(msg string) string {
	for _, sep := range []string{`" for flag -`, `" for -`} {
		if head, rest, ok := strings.Cut(msg, sep); ok {
			name, tail, _ := strings.Cut(rest, ":")
			if head, ok = strings.CutPrefix(head, "invalid boolean value"); ok {
				return "invalid value" + head + `" for flag ` + dashed(name) + ": want true or false"
			}
			return head + `" for flag ` + dashed(name) + ":" + tail
		}
	}
	return msg
}

// dashed spells a flag name as users type it: -h, --reason.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func commandNames(cs []*cli.Command) []string {
	var names []string
	for _, c := range cs {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

func flagNames(fs []cli.Flag) []string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Names()...)
	}
	return names
}

// closest is the candidate typed most likely meant, or "" when none is
// close enough to be a useful suggestion: the one candidate that has typed
// as a dash-separated part (init: sm-init, though lint is one letter
// off), else the most similar by Jaro-Winkler (as urfave/cli's own
// suggestions), above a floor.
func closest(typed string, candidates []string) string {
	var parts []string
	for _, c := range candidates {
		if slices.Contains(strings.Split(c, "-"), typed) {
			parts = append(parts, c)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	best, score := "", 0.0
	for _, c := range candidates {
		if s := smetrics.JaroWinkler(typed, c, 0.7, 4); s > score {
			best, score = c, s
		}
	}
	if score >= 0.8 {
		return best
	}
	return ""
}
