package orchestrate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// What a state's workers read first. Pure: no I/O.

// ContextOf lists the artifacts of earlier states that r's workers
// build on (the states its definition reads), from the completed
// workers' outputs per state, in the order to read them.
func ContextOf(r Role, outputs map[string][]string) []string {
	var paths []string
	for _, s := range r.Reads {
		paths = append(paths, outputs[s]...)
	}
	return paths
}

// Brief is the file a state's workers read first, so that their prompts
// carry only what differs between them: the workflow's request, what a
// person said sending the state's earlier work back (a rejection, a rewind
// with a reason), what failed the check a recovery state works on (failing
// tests for debug), the classifier's notes on a topics fan-out, and the
// earlier artifacts to read.
func Brief(r Role, f Facts, context []string) string {
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
	if len(context) == 0 {
		b.WriteString("Nothing yet: start from the workflow request.\n")
	}
	for _, p := range context {
		fmt.Fprintf(&b, "- %s\n", p)
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
