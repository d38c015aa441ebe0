package orchestrate

import (
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// A command's arguments as typed. Pure: no I/O.

// Arguments are a command's arguments as the user typed them: options
// first, then the description.
type Arguments struct {
	Scope       string // --scope SCOPE (or --scope=SCOPE)
	ApprovePlan bool   // --approve-plan: a person approves the plan before the work built on it
	Budget      string // --budget AMOUNT: the workflow's spend limit (usage.ParseBudget), one word
	Description string
	// Resume: --resume [--retry-failed] [WORKFLOW_ID] continues the
	// command's unfinished workflow (or the one named) instead of
	// starting one.
	Resume bool
	ResumeRequest
}

// ParseArgs splits a command's arguments as typed into the options before
// the description (--scope SCOPE, --approve-plan, --budget AMOUNT, in any
// order) and the
// description. One pair of quotes around the whole description is
// dropped. A command that requires a scope (requireScope lists its
// definition's scopes) refuses arguments without one, naming them.
// hint is how to run the command (StartHint), for arguments with no
// description; "" for the built-in commands' example.
func ParseArgs(command, raw string, requireScope []string, hint string) (Arguments, error) {
	var a Arguments
	if strings.IndexByte(raw, 0) >= 0 {
		// No stored value may hold one (state-append refuses it too).
		return a, fail.Invalidf("/%s: the arguments hold a NUL byte, which no value may; type them again without it", command)
	}
	s := strings.TrimSpace(raw)
	if rest, ok := option(s, "--resume"); ok {
		r, err := ParseResumeArgs(rest)
		if err != nil {
			return a, fail.Usagef("/%s --resume %s: give [--retry-failed] [WORKFLOW_ID]", command, rest)
		}
		return Arguments{Resume: true, ResumeRequest: r}, nil
	}
	for {
		if rest, ok := option(s, "--approve-plan"); ok {
			a.ApprovePlan, s = true, rest
			continue
		}
		if rest, ok := option(s, "--budget"); ok {
			rest = strings.TrimLeft(rest, " \t=")
			a.Budget, s, _ = strings.Cut(rest, " ")
			if _, err := usage.ParseBudget(a.Budget); err != nil {
				return a, fail.Usagef("%v; e.g. /%s --budget 500k DESCRIPTION, or --budget 5USD", err, command)
			}
			s = strings.TrimSpace(s)
			continue
		}
		rest, ok := option(s, "--scope")
		if !ok {
			break
		}
		rest = strings.TrimLeft(rest, " \t=")
		a.Scope, s, _ = strings.Cut(rest, " ")
		if a.Scope == "" {
			return a, fail.Usagef("--scope needs a value, e.g. --scope research-only DESCRIPTION")
		}
		s = strings.TrimSpace(s)
	}
	if q := s[:min(1, len(s))]; len(s) >= 2 && (q == `"` || q == "'") && !strings.Contains(s[1:len(s)-1], q) && strings.HasSuffix(s, q) {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	switch {
	case s == "" && hint != "":
		return a, fail.Usagef("no arguments given; run %s", hint)
	case s == "":
		return a, fail.Usagef("no workflow description given; say what to do after the command, e.g. /%s research auth patterns", command)
	}
	a.Description = s
	if a.Scope == "" && requireScope != nil {
		return a, fail.Usagef("give the scope first: /%s --scope SCOPE DESCRIPTION, SCOPE one of %s", command, strings.Join(requireScope, ", "))
	}
	return a, nil
}

// option cuts the option name off the start of s, where it stands as a
// word of its own (or before =), and returns the rest, trimmed.
func option(s, name string) (string, bool) {
	rest, ok := strings.CutPrefix(s, name)
	if !ok || rest != "" && !strings.ContainsRune(" \t\n=", rune(rest[0])) {
		return s, false
	}
	return strings.TrimLeft(rest, " \t\n"), true
}
