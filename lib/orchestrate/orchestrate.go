// Package orchestrate owns running the phases of a stored workflow for the
// orchestrator commands (/coordinate, /supervise, /orchestrate,
// /workflow-resume): starting a workflow from a command's arguments (with
// the pending-classification file that carries its id between two bash
// blocks), the view of a workflow's current phase, advancing past finished
// states, planning the next batch of workers, verifying and recording
// their artifacts, aggregating a sub-supervisor's workers, resuming, and
// which files only its agents may write.
//
// The decisions are pure files, table-tested without a project: roles.go
// (which agents a state needs), workers.go (its workers, their batches,
// the test/debug loop), brief.go (what the workers read first),
// contract.go (the format their file must have, as their brief says it,
// from the data the check reads), artifact.go (what an artifact proves,
// the record kept of it) and
// args.go (a command's arguments). The other files read the checkpoint
// and the artifacts, write through lib/store and lib/sm, and return what
// a step prints as an Output. The package prints nothing and parses no
// flags; it never touches state files, hooks or installs.
package orchestrate

import (
	"fmt"
	"slices"

	"github.com/flowstate-dev/flowstate/lib/kv"
)

// Output is what one step prints: KEY=VALUE lines, ending with NEXT=, or a
// sub-supervisor's closing signal line. Warnings go to stderr.
type Output struct {
	Pairs    kv.Pairs
	Signal   string // SUPERVISOR_COMPLETE: ... or SUPERVISOR_FAILED: ..., printed alone
	Warnings []Warning
	// handed is the batch a plan handed out for the workflow engine,
	// which runs the workers itself; not printed.
	handed *handedOut
}

// handedOut is a batch a plan handed out: its state, its agent, its
// workers, in the order of the TOPIC_i and OUTPUT_i lines, and whether
// each runs in a worktree of its own.
type handedOut struct {
	state, agent string
	workers      []Worker
	isolated     bool
}

func (o *Output) add(key string, value any) { o.Pairs.Add(key, value) }

// Warning is one thing a step tells the person, on stderr. Its kind lets
// a step that says a thing once leave out what another part said of it.
type Warning struct {
	kind warningKind
	Text string
}

func (w Warning) String() string { return w.Text }

type warningKind int

const (
	note            warningKind = iota
	workerFailed                // the aggregation's: a worker that did not deliver
	partialAccepted             // a verify went on without some workers of its state
	finishedWithout             // the finished workflow went on without some workers
)

// warn adds a note of kind to the output.
func (o *Output) warn(kind warningKind, format string, args ...any) {
	o.Warnings = append(o.Warnings, Warning{kind: kind, Text: fmt.Sprintf(format, args...)})
}

// without is ws less the warnings of kind.
func without(ws []Warning, kind warningKind) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.kind != kind {
			out = append(out, w)
		}
	}
	return out
}

// has reports whether ws has a warning of kind.
func has(ws []Warning, kind warningKind) bool {
	return slices.ContainsFunc(ws, func(w Warning) bool { return w.kind == kind })
}

// String is the output as printed: the signal line, or a line per pair.
func (o Output) String() string {
	if o.Signal != "" {
		return o.Signal + "\n"
	}
	return o.Pairs.String()
}
