package app

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/flowstate-dev/flowstate/lib/term"
)

// Writing a command's result: machine output on stdout, messages for
// people on stderr.

func (e *env) printf(format string, a ...any) {
	fmt.Fprintf(e.Stdout, format, a...)
}

func (e *env) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", b)
	return err
}

// printLine prints v as one line of compact JSON, for output that must fit
// on one line (after SUPERVISOR_COMPLETE:, or a KEY=VALUE value).
func (e *env) printLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.printf("%s\n", b)
	return nil
}

func (e *env) warn(format string, a ...any) {
	fmt.Fprintf(e.Stderr, "flowstate: warning: "+format+"\n", a...)
}

// tell says to the person at the terminal what happened and what to do
// next, on stderr.
func (e *env) tell(format string, a ...any) {
	fmt.Fprintf(e.Stderr, "flowstate: "+format+"\n", a...)
}

// colorful is true when stdout is a terminal and the user has not asked
// for no colour (https://no-color.org).
func (e *env) colorful() bool {
	return e.Getenv("NO_COLOR") == "" && e.Getenv("TERM") != "dumb" && e.terminal()
}

// terminal is true when stdout is a terminal: a person reads it.
func (e *env) terminal() bool {
	f, ok := e.Stdout.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// width is the terminal width to fit output for people to (term.Width):
// COLUMNS, else stdout's terminal, else 0 (whole lines).
func (e *env) width() int { return term.Width(e.Getenv, e.Stdout) }
