package app

import (
	"encoding/json"
	"fmt"
)

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

func (e *env) warn(format string, a ...any) {
	fmt.Fprintf(e.Stderr, "flowstate: warning: "+format+"\n", a...)
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

// tell says to the person at the terminal what happened and what to do
// next, on stderr.
func (e *env) tell(format string, a ...any) {
	fmt.Fprintf(e.Stderr, "flowstate: "+format+"\n", a...)
}
