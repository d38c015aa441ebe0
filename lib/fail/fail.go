// Package fail owns flowstate's exit-code table: the typed error every
// package returns when a failure must reach the user with a specific code.
// It must not do I/O; lib/app is the one place that turns these into exits.
package fail

import (
	"errors"
	"fmt"
)

// Exit codes, documented in the README and by `flowstate help exit-codes`.
const (
	OK         = 0 // success
	Unexpected = 1 // I/O or other unexpected error
	Usage      = 2 // bad flags, no project, no or ambiguous workflow, missing file, a link in the state
	Refused    = 3 // transition not allowed, out of a terminal state, retries exhausted, cancelled
	Invalid    = 4 // bad JSON or UTF-8, too deep, schema violation, unknown version, bad key, NUL, too large
	Locked     = 5 // lock not acquired in time
	Waiting    = 6 // waiting for a person: an approval gate, a pause
)

// Table lists every code with its meaning, in order, for help output.
var Table = []struct {
	Code    int
	Meaning string
}{
	{OK, "success"},
	{Unexpected, "unexpected error (I/O, permissions, a bug)"},
	{Usage, "usage or configuration: bad flags or arguments, no project, no workflow found, ambiguous workflow, missing file, a symlink or special file where flowstate keeps state"},
	{Refused, "refused: transition not in the machine's table, leaving a terminal state, retries exhausted, every supervisor worker failed, any change to a cancelled workflow"},
	{Invalid, "invalid data: malformed JSON, invalid UTF-8, nesting over 64 levels, schema violation, unknown schema version, bad or reserved key, bad id, NUL in a value, over a size limit"},
	{Locked, "lock not acquired in time (the message names the lock file)"},
	{Waiting, "waiting for a person: the workflow awaits approval to enter a gated state, or is paused (the message says what to run)"},
}

// Error carries an exit code along with the cause. It wraps, so
// errors.As finds it under any number of fmt.Errorf("...: %w") layers.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func newf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Usagef reports bad usage or configuration (exit 2).
func Usagef(format string, args ...any) error { return newf(Usage, format, args...) }

// Refusedf reports a refused state change (exit 3).
func Refusedf(format string, args ...any) error { return newf(Refused, format, args...) }

// Invalidf reports invalid data (exit 4).
func Invalidf(format string, args ...any) error { return newf(Invalid, format, args...) }

// Lockedf reports a lock that was not acquired in time (exit 5).
func Lockedf(format string, args ...any) error { return newf(Locked, format, args...) }

// Waitingf reports a workflow that waits for a person (exit 6).
func Waitingf(format string, args ...any) error { return newf(Waiting, format, args...) }

// Code returns the exit code for err: 0 for nil, the code of the first
// *Error in its chain, else Unexpected.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return Unexpected
}
