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
// artifact.go (what an artifact proves, the record kept of it) and
// args.go (a command's arguments). The other files read the checkpoint
// and the artifacts, write through lib/store and lib/sm, and return what
// a step prints as an Output. The package prints nothing and parses no
// flags; it never touches state files, hooks or installs.
package orchestrate

import "github.com/flowstate-dev/flowstate/lib/kv"

// Output is what one step prints: KEY=VALUE lines, ending with NEXT=, or a
// sub-supervisor's closing signal line. Warnings go to stderr.
type Output struct {
	Pairs    kv.Pairs
	Signal   string // SUPERVISOR_COMPLETE: ... or SUPERVISOR_FAILED: ..., printed alone
	Warnings []string
}

func (o *Output) add(key string, value any) { o.Pairs.Add(key, value) }

// String is the output as printed: the signal line, or a line per pair.
func (o Output) String() string {
	if o.Signal != "" {
		return o.Signal + "\n"
	}
	return o.Pairs.String()
}

// finished reports whether the output ends the command (NEXT=done).
func (o Output) finished() bool {
	for _, p := range o.Pairs {
		if p.Key == "NEXT" {
			return p.Value == "done"
		}
	}
	return false
}
