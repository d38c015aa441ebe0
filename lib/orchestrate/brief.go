package orchestrate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// What a state's workers read first. Pure: no I/O.

// Context is what a role's workers build on: the artifacts of the
// earlier states it reads, in the order to read them, and, per state
// read, how many of its workers delivered and those that did not.
type Context struct {
	Read   []string
	Missed []Missed
}

// Missed is an earlier state whose workers did not all deliver: the
// workflow went on without those (a partial failure).
type Missed struct {
	State     string
	Delivered int
	Failed    []supervisor.Record
}

// ContextOf is the context of r's workers from the records of every
// state's workers (byState, each in worker order).
func ContextOf(r Role, byState map[string][]supervisor.Record) Context {
	var c Context
	for _, s := range r.Reads {
		m := Missed{State: s}
		for _, rec := range byState[s] {
			switch rec.Status {
			case checkpoint.WorkerCompleted:
				c.Read = append(c.Read, rec.OutputPath)
				m.Delivered++
			case checkpoint.WorkerFailed:
				m.Failed = append(m.Failed, rec)
			}
		}
		if len(m.Failed) > 0 {
			c.Missed = append(c.Missed, m)
		}
	}
	return c
}

// Brief is the file a state's workers read first, so that their prompts
// carry only what differs between them: the workflow's request, what a
// person said sending the state's earlier work back (a rejection, a rewind
// with a reason), what failed the check a recovery state works on (failing
// tests for debug), the classifier's notes on a topics fan-out, the
// earlier artifacts to read and the earlier workers that delivered none,
// and the format their file must have.
func Brief(r Role, f Facts, c Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Brief: %s\n\n## Workflow request\n\n%s\n", r.State, f.Description)
	if f.Feedback != "" {
		fmt.Fprintf(&b, "\n## Sent back\n\n%s\n", f.Feedback)
	}
	if r.Source() == machine.SourceFailures && f.Failures != "" {
		fmt.Fprintf(&b, "\n## What failed\n\n%s\n", f.Failures)
	}
	if len(f.Conflicts) > 0 {
		b.WriteString("\n## Merge conflicts\n\n")
		for _, c := range f.Conflicts {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if r.Source() == machine.SourceTopics && len(f.TopicNotes) > 0 {
		b.WriteString("\n## Topics\n\n")
		for _, n := range f.TopicNotes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\n## Read first\n\n")
	if len(c.Read) == 0 {
		b.WriteString("Nothing yet: start from the workflow request.\n")
	}
	for _, p := range c.Read {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	if len(c.Missed) > 0 {
		b.WriteString(notDelivered(c.Missed))
	}
	return b.String() + "\n" + Contract(r)
}

// notDelivered is the brief's section on the earlier workers the
// workflow went on without, each with why, so that the work built on
// theirs can say what it lacks ("2 of 3 files were analysed").
func notDelivered(missed []Missed) string {
	var b strings.Builder
	b.WriteString("\n## Not delivered\n\nThe workflow went on without these workers; where it matters, say what your work lacks for it.\n")
	for _, m := range missed {
		fmt.Fprintf(&b, "\n%s: %d of %d workers delivered; these did not:\n\n", m.State, m.Delivered, m.Delivered+len(m.Failed))
		for _, rec := range m.Failed {
			why := rec.Error
			if why == "" {
				why = "no reason recorded"
			}
			fmt.Fprintf(&b, "- %s (%s): %s\n", kv.OneLine(rec.Label()), rec.WorkerID, kv.OneLine(why))
		}
	}
	return b.String()
}

// BriefPath is where the brief of a role's workers is written, under the
// workflow's spec directory.
func BriefPath(specDir string, r Role) string {
	return filepath.Join(specDir, "briefs", r.Agent+".md")
}

// Feedback is what a person said when sending a state's work back, as
// its workers read it: who, what they sent back (the earlier artifacts,
// kept) and why.
func Feedback(kind, by, reason string, earlier []string) string {
	if reason == "" {
		return ""
	}
	what := "the earlier work"
	if len(earlier) > 0 {
		what = strings.Join(earlier, " ")
	}
	verb := "sent back"
	if kind == "reject" {
		verb = "rejected"
	}
	return fmt.Sprintf("%s %s %s; do it again, addressing: %s", by, verb, what, reason)
}
