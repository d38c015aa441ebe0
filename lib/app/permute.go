package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permute moves a command's known flags in front of its positional
// arguments, so `sm-transition plan --reason x` works although urfave/cli
// v2 stops parsing flags at the first positional. Commands whose
// positionals are arbitrary values (state-append, log-append) take those
// as typed, so a value like "--stdin" stays a value; flags before the
// first of them or after the last are still flags, as everywhere
// (`state-append K v --workflow x`). "--" ends flags.
func permute(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	// Help and shell completion are urfave's own flags, not the command's;
	// they must reach it where typed. A command that parses its own
	// arguments (compat-call) gets them as typed.
	last := args[len(args)-1]
	if cmd == nil || cmd.SkipFlagParsing || last == "--generate-bash-completion" {
		return args
	}
	verbatim := rawArgs[cmd.Name]
	var flags, pos []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if len(pos) > 0 && len(pos) < verbatim {
			pos = append(pos, a) // a value, whatever it looks like
			continue
		}
		if a == "--" {
			pos = append(pos, rest[j+1:]...)
			break
		}
		if a == "-h" || a == "--help" {
			return append(append([]string{}, args[:i+1]...), "--help")
		}
		// An unknown "--name" is a mistyped flag, not a value (no
		// positional of these commands starts with "--"): leave it among
		// the flags so the error names it.
		if strings.HasPrefix(a, "-") && len(a) > 1 && findFlag(cmd.Flags, a) != nil || strings.HasPrefix(a, "--") && len(a) > 2 {
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && j+1 < len(rest) {
				j++
				flags = append(flags, rest[j])
			}
			continue
		}
		pos = append(pos, a)
	}
	out := append([]string{}, args[:i+1]...)
	out = append(out, flags...)
	if len(pos) == 0 {
		return out
	}
	// "--" keeps positionals such as a negative delta from being read
	// as flags.
	out = append(out, "--")
	return append(out, pos...)
}

// rawArgs counts, for commands whose positional arguments are values
// taken verbatim, how many of them there are.
var rawArgs = map[string]int{"state-append": 2, "log-append": 2}

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

// takesValue is true for a non-boolean flag written without "=value".
func takesValue(flags []cli.Flag, arg string) bool {
	f := findFlag(flags, arg)
	if f == nil || strings.Contains(arg, "=") {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
