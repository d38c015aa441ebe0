package status

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Note is one thing a person should know first about a run, and what
// they can do about it: what `flowstate status` and the report show at
// their top.
type Note struct {
	Kind string // gate, budget, paused, cancelled, error, failed, retry, shared, kept, unpriced
	Text string
	Do   string // what to type, as the person types it; "" when there is nothing to do
}

// Hints are the commands that act on a workflow as the user types them
// in Claude Code: the plugin's /flowstate:name or an install's /name,
// a user's own command's --resume (orchestrate.ResumeHint, RetryHint,
// Slash). Empty ones are the plugin's.
type Hints struct {
	Resume  string // continue the workflow
	Retry   string // run again the workers whose failure was accepted
	Approve string // approve at a gate
	Reject  string // send back from a gate
}

func (h Hints) orDefault() Hints {
	h.Resume = cmp.Or(h.Resume, "/flowstate:workflow-resume")
	h.Retry = cmp.Or(h.Retry, h.Resume+" --retry-failed")
	h.Approve = cmp.Or(h.Approve, "/flowstate:workflow-approve")
	h.Reject = cmp.Or(h.Reject, "/flowstate:workflow-reject")
	return h
}

// Notes says what befell workflow id (its checkpoint doc, its run) that
// a person should know first, and what to do next: a hold (a gate and
// who may approve it, a spend limit, a pause, a cancel), the error it
// stopped on, the workers that failed, the errors and retries it came
// through, the models whose tokens have no price (with prices). Nothing
// for a run that went as planned.
func Notes(id string, doc []byte, run *timeline.Timeline, prices *usage.Prices, h Hints) []Note {
	h = h.orDefault()
	v := checkpoint.ViewOf(doc)
	var out []Note
	if n, ok := holdNote(id, v, h); ok {
		out = append(out, n)
	}
	active := checkpoint.Active(v.Status)
	if n, ok := errorNote(v, active, h); ok {
		out = append(out, n)
	}
	out = append(out, failedNotes(doc, active, h)...)
	if n, ok := retryNote(run, v); ok {
		out = append(out, n)
	}
	out = append(out, isolationNotes(doc)...)
	if models, _ := run.Unpriced(prices); len(models) > 0 {
		out = append(out, Note{Kind: "unpriced", Text: UnpricedText(models, run.Total().Total()) + ": the money leaves their tokens out",
			Do: "add their prices to " + usage.SettingsFile})
	}
	return out
}

// holdNote is what holds the workflow, and who lets it go on.
func holdNote(id string, v checkpoint.View, h Hints) (Note, bool) {
	hold := v.Hold
	if hold == nil {
		return Note{}, false
	}
	switch hold.Kind {
	case checkpoint.HoldApproval:
		return Note{Kind: "gate", Text: fmt.Sprintf("waits for a person to approve entering %s: %s", oneLine(hold.State), oneLine(hold.Message)),
			Do: fmt.Sprintf("the user approves with %s [NOTE] (in a shell: flowstate approve --workflow %s), or sends it back with %s REASON; the model may not",
				h.Approve, id, h.Reject)}, true
	case checkpoint.HoldBudget:
		return Note{Kind: "budget", Text: "held at its spend limit: " + oneLine(hold.Message),
			Do: fmt.Sprintf("a person allows more with %s --budget AMOUNT (in a shell: flowstate approve --budget AMOUNT --workflow %s), or cancels it (flowstate cancel --reason TEXT)",
				h.Approve, id)}, true
	case checkpoint.HoldPause:
		return Note{Kind: "paused", Text: oneLine(strings.TrimPrefix(hold.Sentence(), "is ")),
			Do: fmt.Sprintf("flowstate unpause --workflow %s, or %s", id, h.Resume)}, true
	case checkpoint.HoldCancel:
		return Note{Kind: "cancelled", Text: oneLine(strings.TrimPrefix(hold.Sentence(), "was "))}, true
	}
	return Note{}, false
}

// errorNote is the error of the state that failed, while the workflow
// is active: in that state its command stops on it (resume goes on from
// there); in another (debug) it is recovering.
func errorNote(v checkpoint.View, active bool, h Hints) (Note, bool) {
	e := v.Error
	if e.LastError == nil || !active {
		return Note{}, false
	}
	if e.FailedState != v.CurrentState {
		return Note{Kind: "error", Text: fmt.Sprintf("recovering in %s from an error in %s: %s", oneLine(v.CurrentState), oneLine(e.FailedState), oneLine(*e.LastError))}, true
	}
	return Note{Kind: "error", Text: fmt.Sprintf("failing in %s: %s", oneLine(e.FailedState), oneLine(*e.LastError)),
		Do: "once its command has stopped, see to what the error says and continue with " + h.Resume}, true
}

// failedNotes are the workers recorded failed (not taken back by a
// rewind): those whose failure was accepted, run again with Retry; those
// the workflow stopped on, with Resume while it is active.
func failedNotes(doc []byte, active bool, h Hints) []Note {
	accepted := map[string]bool{}
	gjson.GetBytes(doc, checkpoint.PathPhaseData).ForEach(func(_, phase gjson.Result) bool {
		for _, w := range phase.Get(checkpoint.PhasePartialFailures).Array() {
			accepted[w.String()] = true
		}
		return true
	})
	var went, stopped []string
	gjson.GetBytes(doc, checkpoint.PathSupervisorState).ForEach(func(_, sup gjson.Result) bool {
		for _, w := range sup.Get("workers").Array() {
			if w.Get("status").String() != checkpoint.WorkerFailed {
				continue
			}
			id := label(w)
			if e := w.Get("error").String(); e != "" {
				id += " (" + oneLine(e) + ")"
			}
			if accepted[w.Get("worker_id").String()] {
				went = append(went, id)
			} else {
				stopped = append(stopped, id)
			}
		}
		return true
	})
	var out []Note
	if len(went) > 0 {
		out = append(out, Note{Kind: "failed", Text: fmt.Sprintf("%s failed and the workflow went on without %s: %s",
			Count(len(went), "worker"), pick(len(went), "it", "them"), strings.Join(went, "; ")), Do: "run " + pick(len(went), "it", "them") + " again with " + h.Retry})
	}
	if len(stopped) > 0 {
		n := Note{Kind: "failed", Text: fmt.Sprintf("%s failed: %s", Count(len(stopped), "worker"), strings.Join(stopped, "; "))}
		if active {
			n.Do = "run " + pick(len(stopped), "it", "them") + " again with " + h.Resume
		}
		out = append(out, n)
	}
	return out
}

// retryNote counts the errors and retries the run came through.
func retryNote(run *timeline.Timeline, v checkpoint.View) (Note, bool) {
	errs, retries := 0, 0
	for _, m := range run.Marks {
		switch m.Kind {
		case "error":
			errs++
		case "retry":
			retries++
		}
	}
	if v.Error.LastError != nil {
		errs-- // the current one has a note of its own
	}
	var parts, used []string
	if errs > 0 {
		parts = append(parts, Count(errs, "error"))
	}
	if retries > 0 {
		parts = append(parts, Count(retries, "retry"))
	}
	if len(parts) == 0 {
		return Note{}, false
	}
	for _, s := range slices.Sorted(maps.Keys(v.Error.Retries)) {
		used = append(used, fmt.Sprintf("%s %d", oneLine(s), v.Error.Retries[s]))
	}
	text := strings.Join(parts, " and ") + " on the way"
	if len(used) > 0 {
		text += " (retries used: " + strings.Join(used, ", ") + ")"
	}
	return Note{Kind: "retry", Text: text, Do: "flowstate history lists them"}, true
}

// isolationNotes say what became of a definition's isolation: the states
// whose workers shared the project's tree although it asks for a
// worktree each (not a git repository, ...), and the attempts of workers
// whose branch was not merged (a failure, a conflict), kept as patches.
func isolationNotes(doc []byte) []Note {
	var out []Note
	var kept []string
	gjson.GetBytes(doc, checkpoint.PathPhaseData).ForEach(func(state, phase gjson.Result) bool {
		if iso := phase.Get(checkpoint.PhaseIsolation); iso.Exists() && !iso.Get("worktrees").Bool() {
			out = append(out, Note{Kind: "shared", Text: fmt.Sprintf("the workers of %s shared the project's tree, not a git worktree each as its definition asks: %s",
				oneLine(state.String()), oneLine(iso.Get("reason").String()))})
		}
		for _, m := range phase.Get(checkpoint.PhaseAttempts).Array() {
			kept = append(kept, oneLine(m.Get("worker").String())+" "+oneLine(m.Get("status").String())+": "+oneLine(m.Get("patch").String()))
		}
		return true
	})
	if len(kept) > 0 {
		out = append(out, Note{Kind: "kept", Text: "attempts not merged, their work kept: " + strings.Join(kept, "; "),
			Do: "git apply a patch to take its work back"})
	}
	return out
}

// Count is n things, in the plural unless one: "1 worker", "2 workers",
// "3 retries".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	switch {
	case strings.HasSuffix(thing, "y") && !strings.HasSuffix(thing, "ey"):
		thing = strings.TrimSuffix(thing, "y") + "ie"
	case strings.HasSuffix(thing, "s"):
		thing += "e"
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// noteMark is how `flowstate status` marks a note of kind (a switch, not
// a package-level map: every process would build the map before main).
func noteMark(kind string) (mark, color string) {
	switch kind {
	case "gate", "budget", "paused":
		return markHeld, yellow
	case "cancelled", "error", "failed":
		return markFailed, red
	case "retry", "shared", "kept":
		return "↻", yellow
	case "unpriced":
		return "?", yellow
	}
	return "", ""
}

// notesSection writes the notes: each with its mark, and what to do on
// the line after it.
func notesSection(b *strings.Builder, notes []Note, p painter) {
	for _, n := range notes {
		mark, color := noteMark(n.Kind)
		fmt.Fprintf(b, "%s %s\n", p.paint(color, mark), n.Text)
		if n.Do != "" {
			fmt.Fprintf(b, "  next: %s\n", n.Do)
		}
	}
}
