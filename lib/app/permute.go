package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permute moves a command's flags in front of its positional arguments,
// ending them with "--": urfave/cli v2 (Go's flag package under it) stops
// reading flags at the first positional, and flowstate takes them after
// (`sm-transition plan --reason x`). The "--" keeps a positional such as a
// negative delta from being read as a flag. Commands that parse their own
// arguments (SkipFlagParsing) get them as typed, as do unknown commands,
// which urfave reports.
func permute(app *cli.App, args []string) []string {
	i := commandIndex(app.Flags, args)
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	flags, pos := split(cmd, args[i+1:])
	out := append(append([]string{}, args[:i+1]...), flags...)
	if len(pos) == 0 {
		return out
	}
	return append(append(out, "--"), pos...)
}

// commandIndex is where the command is in args: after the program name
// and the global flags with their values.
func commandIndex(global []cli.Flag, args []string) int {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if takesValue(global, args[i]) {
			i++
		}
		i++
	}
	return i
}

// split parts a command's arguments into its flags (with their values) and
// its positionals. "--" ends the flags; -h or --help asks for the command's
// help whatever else was typed. The positionals of a command that stores
// them (valueArgs) are values, taken as typed: a value like "--stdin"
// stays a value; flags before the first of them or after the last are
// still flags (`state-append K v --workflow x`).
func split(cmd *cli.Command, rest []string) (flags, pos []string) {
	values := valueArgs[cmd.Name]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		switch {
		case len(pos) > 0 && len(pos) < values:
			pos = append(pos, a)
		case a == "--":
			return flags, append(pos, rest[j+1:]...)
		case a == "-h" || a == "--help":
			return []string{"--help"}, nil
		case isFlag(cmd.Flags, a):
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && j+1 < len(rest) {
				j++
				flags = append(flags, rest[j])
			}
		default:
			pos = append(pos, a)
		}
	}
	return flags, pos
}

// valueArgs counts, for the commands whose positional arguments are
// values they store, how many there are: by name, as a urfave/cli v2
// Command has no field of ours to carry it.
var valueArgs = map[string]int{"state-append": 2, "log-append": 2}

// isFlag is true for a flag of flags, and for any "--name": no positional
// starts with "--", so an unknown one is a mistyped flag, left among the
// flags for urfave's error to name. An unknown "-x" is a positional, such
// as a negative number.
func isFlag(flags []cli.Flag, arg string) bool {
	return strings.HasPrefix(arg, "-") && len(arg) > 1 && findFlag(flags, arg) != nil || strings.HasPrefix(arg, "--") && len(arg) > 2
}

func findFlag(flags []cli.Flag, arg string) cli.Flag {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue is true for a flag that takes a value (as urfave says),
// written without "=value": the next argument is its value.
func takesValue(flags []cli.Flag, arg string) bool {
	f, ok := findFlag(flags, arg).(cli.DocGenerationFlag)
	return ok && f.TakesValue() && !strings.Contains(arg, "=")
}
