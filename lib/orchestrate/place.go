package orchestrate

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Place is where a session's command stands, for the hooks that send a
// model that lost its way back to it.
type Place struct {
	Run    Run
	Exists bool   // the workflow has been created
	Status string // its status: in_progress, complete, ...
	State  string // its current state
	// Section is the "## name" of the command to continue at: a model
	// that lost the values earlier blocks printed can start there, since
	// its first block needs none of them. start until the workflow exists
	// (phase-start is safe to run again); verify once every worker the
	// last plan handed out was launched (checking them is the next step);
	// else phase (phase-plan records what was delivered and hands out what
	// is left). A command on the low-level API names its sections after
	// the workflow's states: the current one, start in the initial state.
	// A command whose workflow runs as a Claude Code workflow continues at
	// the block after its launch (launched), which prints the launch
	// again, or how it ended.
	Section string
	// Held is what the user is told while a person holds the workflow
	// (approval, pause) or once it was cancelled; "" otherwise.
	Held string
}

// Where tells where the session's command stands; ok is false when the
// session runs none.
func Where(p *store.Project, session string) (pl Place, ok bool) {
	run, ok := ReadRun(p, session)
	if !ok {
		return pl, false
	}
	pl = Place{Run: run, Section: "start"}
	if run.Engine == EngineWorkflow {
		pl.Section = LaunchedSection
	}
	if s, ok := p.Summary(run.Workflow); ok {
		pl.Exists, pl.Status, pl.State = true, s.Status, s.CurrentState
		if run.Engine != EngineWorkflow {
			pl.Section = "phase"
		}
		w, err := p.Workflow(run.Workflow)
		if err != nil {
			return pl, true
		}
		if run.ByState {
			pl.Section = byStateSection(w, s.CurrentState)
		}
		switch {
		case s.Status == checkpoint.Cancelled || checkpoint.Held(s.Status):
			if doc, err := w.ReadCheckpoint(); err == nil {
				pl.Held = HeldMessage(w, doc)
			}
		case run.Engine == EngineWorkflow:
		case !run.ByState && launched(w):
			pl.Section = "verify"
		}
	}
	return pl, true
}

// byStateSection is the section of a command on the low-level API to
// continue at: the one named after the workflow's state, start while it
// is in its initial state.
func byStateSection(w *store.Workflow, state string) string {
	if m, err := sm.LoadMachine(w); err == nil && state == m.Initial {
		return "start"
	}
	return state
}

// launched reports whether the workers the last plan of w's current state
// handed out are all launched (the sub-supervisor that has them, when it
// has them) and not all recorded yet.
func launched(w *store.Workflow) bool {
	v, runs, err := look(w, Options{})
	if err != nil || !v.hasRole {
		return false
	}
	plan := v.planned(false)
	if !plan.known {
		return false
	}
	now := w.P.Now()
	if plan.Supervised {
		_, left := Pending(v.workers, v.done, false)
		return left > 0 && runs.Launched(v.role.SupervisorAgent(), plan.At)
	}
	open := 0
	for _, id := range plan.Workers {
		if v.done(id) {
			continue
		}
		open++
		if st, _ := runs.Worker(id, now, time.Hour); st == agentrun.NotLaunched {
			return false
		}
	}
	return open > 0
}

// workerIn names the worker of a state (workers) that an Agent call with
// prompt is for: the one whose artifact, a path under specDir, the
// prompt names, absolute or as specRel (specDir relative to the
// project) and the rest; the first worker named on a
// line with " to:", else the first named at all. One pass over the
// prompt and a map lookup per path in it: a checkpoint can list any
// number of workers, a prompt be a megabyte, and this runs in a hook.
func workerIn(workers []Worker, specDir, specRel, prompt string) string {
	index := make(map[string]int, len(workers))
	for i, wk := range workers {
		if rest, err := filepath.Rel(specDir, wk.Output); err == nil {
			if _, dup := index[rest]; !dup {
				index[rest] = i
			}
		}
	}
	marker := specRel + string(filepath.Separator)
	best, bestTo := -1, -1
	for line := range strings.Lines(prompt) {
		to := strings.Contains(line, " to:")
		for rest := line; ; {
			at := strings.Index(rest, marker)
			if at < 0 {
				break
			}
			rest = rest[at+len(marker):]
			i, ok := index[strings.TrimRight(pathRun(rest), ".")]
			if !ok {
				continue
			}
			if best < 0 || i < best {
				best = i
			}
			if to && (bestTo < 0 || i < bestTo) {
				bestTo = i
			}
		}
	}
	switch {
	case bestTo >= 0:
		return workers[bestTo].ID
	case best >= 0:
		return workers[best].ID
	}
	return ""
}

// pathRun is the start of s that can be part of an artifact's path
// (slug keeps names to ASCII letters, digits and '_').
func pathRun(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return s[:i]
		}
	}
	return s
}
