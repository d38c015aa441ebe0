// Package status renders workflows for people: one workflow's route as a
// small diagram (✓ done, ▶ current, · pending) with the time spent in each
// state, the supervisors and their workers, and errors and retries; and
// the table of a project's workflows. It is pure: the caller reads the
// checkpoint and events and decides on colour.
package status

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/term"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Input is everything Render shows.
type Input struct {
	ID         string
	Checkpoint []byte
	Events     []byte // events.jsonl; damaged lines are skipped
	Machine    *machine.Machine
	Now        time.Time
	StuckAfter time.Duration // an agent at work longer than this is shown stuck
	Color      bool
	// Timeline is the run folded from Checkpoint and Events, with what
	// running agents spent so far (the caller reads their transcripts);
	// nil: Render folds it.
	Timeline *timeline.Timeline
	Prices   *usage.Prices // turns tokens into money; nil: tokens only
	Width    int           // lines wider are wrapped (term.Fit); 0: none
	// Resume is how the user continues the workflow in Claude Code
	// (orchestrate.ResumeHint); "": /flowstate:workflow-resume. Retry,
	// Approve and Reject are the other commands (Hints).
	Resume, Retry, Approve, Reject string
	// Project is the project's directory: paths in it are shown relative
	// to it.
	Project string
}

// Hints are in's commands as the user types them.
func (in Input) Hints() Hints {
	return Hints{Resume: in.Resume, Retry: in.Retry, Approve: in.Approve, Reject: in.Reject}
}

// run is in's timeline, folded when the caller did not.
func (in Input) run() *timeline.Timeline {
	if in.Timeline == nil {
		tl := timeline.Build(timeline.Input{ID: in.ID, Checkpoint: in.Checkpoint, Events: in.Events, Initial: in.Machine.Initial, Now: in.Now, StuckAfter: in.StuckAfter})
		in.Timeline = &tl
	}
	return in.Timeline
}

// ANSI colours, used only when Input.Color is set.
const (
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	red    = "\x1b[31m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

// Marks of a state or worker.
const (
	markDone    = "✓"
	markCurrent = "▶"
	markPending = "·"
	markFailed  = "✗"
	markHeld    = "⏸"
)

type painter bool

func (p painter) paint(color, s string) string {
	if !p || s == "" {
		return s
	}
	return color + s + reset
}

// Render returns the text for `flowstate status`.
func Render(in Input) string {
	doc := gjson.ParseBytes(in.Checkpoint)
	v := checkpoint.ViewOf(in.Checkpoint)
	p := painter(in.Color)
	var b strings.Builder
	current := oneLine(v.CurrentState)
	scope := v.Scope
	fmt.Fprintf(&b, "%s  %s · %s · %s\n", p.paint(bold, in.ID), oneLine(v.Command), oneLine(scope), oneLine(v.Status))
	if d := v.Description; d != "" {
		fmt.Fprintf(&b, "%s\n", oneLine(d))
	}
	run := in.run()
	if notes := Notes(in.ID, in.Checkpoint, run, in.Prices, in.Hints()); len(notes) > 0 {
		b.WriteString("\n")
		notesSection(&b, notes, p)
	}
	rewoundLine(&b, v)
	b.WriteString("\n")

	var completed []string
	for _, s := range v.CompletedStates {
		completed = append(completed, oneLine(s))
	}
	evs := parseEvents(in.Events)
	active := checkpoint.Active(v.Status)
	spent, running := timeIn(evs, in.Machine.Initial, current, active, in.Now)
	failed := oneLine(v.Error.FailedState)
	rows := route(in.Machine, scope, completed, current)
	done := set(completed)
	width := 0
	for _, s := range rows {
		width = max(width, len(s))
	}
	cost := newCosts(run, in.Prices)
	timeWidth := 0
	for s, d := range spent {
		timeWidth = max(timeWidth, len(Duration(d))+len(soFar(s == running)))
	}
	for _, s := range rows {
		mark, color := markPending, dim
		// The current state comes before completed: back in test after
		// debug, test is both, and it is where the workflow is now.
		switch {
		case s == current && s == failed:
			mark, color = markFailed, red
		case s == current && active:
			mark, color = markCurrent, yellow
		case done[s]:
			mark, color = markDone, green
		case s == current:
			mark, color = markCurrent, yellow
		}
		line := fmt.Sprintf("  %s %-*s", p.paint(color, mark), width, s)
		took := ""
		if d, ok := spent[s]; ok {
			took = Duration(d) + soFar(s == running)
		}
		if t := cost.state(s); t != "" {
			line += fmt.Sprintf("  %-*s  %s", timeWidth, took, t)
		} else if took != "" {
			line += "  " + took
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if t := cost.total(); t != "" {
		fmt.Fprintf(&b, "  spent %s\n", t)
	}
	if active {
		agentSection(&b, in, run, v.Session, current, p, cost)
	}
	supervisorSection(&b, doc.Get(checkpoint.PathSupervisorState), in.Project, branches(doc), p)
	errorSection(&b, v.Error, evs, p)
	return term.Fit(b.String(), in.Width)
}

// rewoundLine says when the workflow was last taken back (rewound).
func rewoundLine(b *strings.Builder, v checkpoint.View) {
	if v.Rewinds == 0 {
		return
	}
	last, by := v.LastRewind, ""
	switch {
	case last.Kind == checkpoint.RetryRewind:
		by = ", to run failed workers again"
	case last.By != "":
		by = " by " + oneLine(last.By)
	}
	fmt.Fprintf(b, "rewound %d× (last: %s → %s%s; flowstate history)\n", v.Rewinds, oneLine(last.From), oneLine(last.To), by)
}

// agentSection shows the agents launched in the current state, as the
// timeline pairs them with their workers (the report shows the same):
// at work (for how long), stuck (past the bound), or stopped, and then
// whether their worker was recorded done or failed.
func agentSection(b *strings.Builder, in Input, run *timeline.Timeline, session, current string, p painter, cost costs) {
	agents := currentAgents(run, session, current)
	if len(agents) == 0 {
		return
	}
	fmt.Fprintf(b, "\nagents in %s\n", current)
	width, places := 0, cost.agentPlaces(agents)
	for _, a := range agents {
		width = max(width, len(agentName(a)))
	}
	for _, a := range agents {
		mark, color, what := markCurrent, yellow, fmt.Sprintf("running %s", Duration(in.Now.Sub(a.Start)))
		switch a.Status {
		case timeline.Stuck:
			mark, color, what = markFailed, red, fmt.Sprintf("stuck: at work for %s, more than %s", Duration(in.Now.Sub(a.Start)), Duration(in.StuckAfter))
		case timeline.Running:
		case timeline.Done:
			mark, color, what = markDone, green, "done"
		case timeline.Failed:
			mark, color, what = markFailed, red, "failed"
		default:
			mark, color, what = markPending, dim, "stopped, not checked yet"
		}
		if !a.End.IsZero() && a.End.After(a.Start) {
			what += " after " + Duration(a.End.Sub(a.Start))
		}
		what += cost.agent(a, places) + Branch(a)
		fmt.Fprintf(b, "  %s %-*s  %s\n", p.paint(color, mark), width, agentName(a), what)
	}
}

// currentAgents are the agents session launched since the workflow last
// entered current, its current state.
func currentAgents(run *timeline.Timeline, session, current string) []timeline.Agent {
	var since time.Time
	if n := len(run.States); n > 0 {
		since = run.States[n-1].Start
	}
	var out []timeline.Agent
	for _, a := range run.Agents {
		if a.State == current && !a.Rewound && !a.Start.Before(since) && (session == "" || a.Session == session) {
			out = append(out, a)
		}
	}
	return out
}

// Branch says, for an agent that worked in a git worktree of its own,
// its branch and what became of it: "; branch worktree-agent-x merged".
func Branch(a timeline.Agent) string { return branchText(a.Branch, a.Merge, a.MergeNote) }

// branchText is a branch and what became of it (a merge's status, and
// what more its note says).
func branchText(branch, merge, note string) string {
	s := "; branch " + oneLine(branch)
	switch {
	case merge == "empty":
		return "; nothing to merge"
	case branch == "":
		return ""
	case merge == "merged":
		return s + " merged"
	case merge == "conflict":
		s += " conflicts"
	case merge != "":
		s += " " + oneLine(merge)
	}
	if note != "" {
		s += " " + oneLine(note)
	}
	return s
}

// agentName is an agent's type and its worker, on one line.
func agentName(a timeline.Agent) string {
	name := oneLine(a.Type)
	if a.Worker != "" {
		name += " " + oneLine(a.Worker)
	}
	return name
}

// route lists the states to show: those completed, in the order they
// were left, then the current one, then the rest of the scope's route.
// Detours off the route (debug in a full implementation) show where they
// happened.
func route(m *machine.Machine, scope string, completed []string, current string) []string {
	rows := slices.Clone(completed)
	shown := set(rows)
	add := func(s string) {
		if !shown[s] {
			shown[s] = true
			rows = append(rows, s)
		}
	}
	add(current)
	if sc, err := m.Scope(scope); err == nil {
		for _, s := range sc.Route {
			add(s)
		}
	}
	return rows
}

// set is the strings of ss as a set: a checkpoint or machine a cloned
// repository carries can list a hundred thousand states, which
// slices.Contains in a loop would make minutes.
func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

type event struct {
	TS    time.Time `json:"ts"`
	Event string    `json:"event"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	State string    `json:"state"`
	Error string    `json:"error"`
	Retry int       `json:"retry"`
	Max   int       `json:"max"`
}

func parseEvents(data []byte) []event {
	var out []event
	for _, line := range strings.Split(string(data), "\n") {
		var ev event
		if line != "" && json.Unmarshal([]byte(line), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// timeIn sums the time spent in each state from the init, transition
// and finish events. The state of an active workflow counts until now
// and is returned as running.
func timeIn(evs []event, initial, current string, active bool, now time.Time) (map[string]time.Duration, string) {
	spent := map[string]time.Duration{}
	in, since := "", time.Time{}
	for _, ev := range evs {
		if ev.Event == "transition" || ev.Event == "rewind" || ev.Event == "finish" {
			if in != "" && !since.IsZero() {
				spent[in] += max(ev.TS.Sub(since), 0) // a clock stepped back adds nothing
			}
			in = ""
		}
		switch ev.Event {
		case "init":
			in, since = initial, ev.TS
		case "transition", "rewind":
			in, since = ev.To, ev.TS
		}
	}
	if in == "" || in != current || !active || since.IsZero() {
		return spent, ""
	}
	spent[in] += max(now.Sub(since), 0)
	return spent, in
}

// branches is, by worker, the branch of an isolated state's worker and
// what became of it, as the checkpoint records its merges.
func branches(doc gjson.Result) map[string]string {
	out := map[string]string{}
	doc.Get(checkpoint.PathPhaseData).ForEach(func(_, phase gjson.Result) bool {
		phase.Get(checkpoint.PhaseMerges).ForEach(func(worker, m gjson.Result) bool {
			note := m.Get("patch").String()
			if note != "" {
				note = "; its work kept in " + note
			}
			if with := m.Get("with").Array(); len(with) > 0 {
				note = fmt.Sprintf("with %s in %s%s", joined(with), joined(m.Get("files").Array()), note)
			}
			out[worker.String()] = branchText(m.Get("branch").String(), m.Get("status").String(), note)
			return true
		})
		return true
	})
	return out
}

// joined is a list of strings on one line.
func joined(l []gjson.Result) string {
	var s []string
	for _, x := range l {
		s = append(s, oneLine(x.String()))
	}
	return strings.Join(s, ", ")
}

func supervisorSection(b *strings.Builder, ss gjson.Result, project string, branch map[string]string, p painter) {
	if len(ss.Map()) == 0 {
		return
	}
	b.WriteString("\nsupervisors\n")
	// The artifacts' shared directory once, each worker's file after it.
	var paths []string
	ss.ForEach(func(_, sup gjson.Result) bool {
		for _, w := range sup.Get("workers.#.output_path").Array() {
			paths = append(paths, Rel(project, w.String()))
		}
		return true
	})
	dir := CommonDir(paths)
	if len(paths) > 1 && dir != "" {
		fmt.Fprintf(b, "  artifacts in %s\n", oneLine(dir))
	} else {
		dir = ""
	}
	ss.ForEach(func(name, sup gjson.Result) bool {
		workers := sup.Get("workers").Array()
		counts := map[string]int{}
		for _, w := range workers {
			counts[w.Get("status").String()]++
		}
		var parts []string
		for _, st := range []string{checkpoint.WorkerCompleted, checkpoint.WorkerFailed, checkpoint.WorkerRunning, checkpoint.WorkerInProgress, checkpoint.WorkerPending} {
			if counts[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			}
		}
		fmt.Fprintf(b, "  %s  %s", oneLine(name.String()), Count(len(workers), "worker"))
		if len(parts) > 0 {
			fmt.Fprintf(b, ": %s", strings.Join(parts, ", "))
		}
		b.WriteString("\n")
		width := 0
		for _, w := range workers {
			width = max(width, len([]rune(label(w))))
		}
		for _, w := range workers {
			mark, color := markPending, dim
			switch w.Get("status").String() {
			case checkpoint.WorkerCompleted:
				mark, color = markDone, green
			case checkpoint.WorkerFailed:
				mark, color = markFailed, red
			case checkpoint.WorkerRunning, checkpoint.WorkerInProgress:
				mark, color = markCurrent, yellow
			}
			l := label(w)
			line := fmt.Sprintf("    %s %s%s  %s", p.paint(color, mark), l, strings.Repeat(" ", width-len([]rune(l))), oneLine(w.Get("status").String()))
			if ms := w.Get("duration_ms").Int(); ms > 0 {
				line += "  " + Duration(time.Duration(ms)*time.Millisecond)
			}
			if out := w.Get("output_path").String(); out != "" {
				line += "  " + oneLine(strings.TrimPrefix(Rel(project, out), dir))
			}
			line += branch[w.Get("worker_id").String()]
			if e := w.Get("error").String(); e != "" {
				line += "  " + p.paint(red, oneLine(e))
			}
			b.WriteString(line + "\n")
		}
		return true
	})
}

// label is what a person calls a worker: its topic, track or stage, else
// its id.
func label(w gjson.Result) string {
	for _, k := range []string{"topic", "track", "stage", "worker_id"} {
		if s := w.Get(k).String(); s != "" {
			return oneLine(s)
		}
	}
	return "?"
}

// errorSection shows the current error, retries per state, and the error
// history from the events.
func errorSection(b *strings.Builder, es checkpoint.ErrorState, evs []event, p painter) {
	var history []event
	for _, ev := range evs {
		if ev.Event == "error" || ev.Event == "retry" {
			history = append(history, ev)
		}
	}
	retries := es.Retries
	if es.LastError == nil && len(retries) == 0 && len(history) == 0 {
		return
	}
	b.WriteString("\nerrors\n")
	if es.LastError != nil {
		fmt.Fprintf(b, "  %s in %s: %s\n", p.paint(red, "failing"), oneLine(es.FailedState), oneLine(*es.LastError))
	}
	if len(retries) > 0 {
		var parts []string
		for _, st := range slices.Sorted(maps.Keys(retries)) {
			parts = append(parts, fmt.Sprintf("%s %d", oneLine(st), retries[st]))
		}
		fmt.Fprintf(b, "  retries used: %s\n", strings.Join(parts, ", "))
	}
	const shown = 5
	if len(history) > shown {
		fmt.Fprintf(b, "  … %d earlier\n", len(history)-shown)
		history = history[len(history)-shown:]
	}
	for _, ev := range history {
		ts := ev.TS.UTC().Format("2006-01-02 15:04:05")
		if ev.Event == "retry" {
			fmt.Fprintf(b, "  %s  retry %d of %d of %s\n", ts, ev.Retry, ev.Max, oneLine(ev.State))
			continue
		}
		fmt.Fprintf(b, "  %s  error in %s: %s\n", ts, oneLine(ev.State), oneLine(ev.Error))
	}
}

// Duration is how flowstate shows a duration to people: 4.2s, 3m07s, 2h05m.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// oneLine keeps free text (descriptions, errors) on one line and free of
// control bytes, so a value cannot draw on the terminal.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

// Rel is path as a person reads it in the project: relative to project
// when it lies there, else as it is.
func Rel(project, path string) string {
	if project == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(project, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return path
}

// CommonDir is the directory (ending in /) every path of paths is in; ""
// for none.
func CommonDir(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	dir := paths[0][:strings.LastIndex(paths[0], "/")+1]
	for _, p := range paths[1:] {
		for dir != "" && !strings.HasPrefix(p, dir) {
			dir = dir[:strings.LastIndex(strings.TrimSuffix(dir, "/"), "/")+1]
		}
	}
	return dir
}
