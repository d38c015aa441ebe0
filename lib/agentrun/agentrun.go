// Package agentrun owns what flowstate knows of the agents that do a
// workflow's work, from the lifecycle events its Claude Code hooks append
// to the workflow's events.jsonl: which worker an Agent call was launched
// for, when each agent started and stopped, and so which workers are
// running now, which are stuck and how long each took.
//
// It is pure: lib/hook records the events, lib/orchestrate waits on them,
// lib/status shows them.
package agentrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Event kinds the hooks record, as the "event" field of an events.jsonl
// line. Launch comes from PreToolUse on the Agent tool (it sees the
// prompt, so it knows the worker); Start and Stop from SubagentStart and
// SubagentStop (they know the agent's id).
const (
	Launch = "agent_launch"
	Start  = "agent_start"
	Stop   = "agent_stop"
	// Failed comes from PostToolUseFailure: an Agent call that failed,
	// its agent never started (Claude Code could not make its worktree).
	Failed = "agent_failed"
)

// Event is one line of events.jsonl as this package reads it. A
// transition or a rewind starts a state's work afresh: only agent events
// after the last one count.
type Event struct {
	TS        time.Time `json:"ts"`
	Event     string    `json:"event"`
	Session   string    `json:"session,omitempty"`
	AgentID   string    `json:"agent_id,omitempty"`
	AgentType string    `json:"agent_type,omitempty"`
	WorkerID  string    `json:"worker_id,omitempty"`
	Output    string    `json:"output,omitempty"` // a launch: the file its prompt says to write
	// Generic: launched as a general-purpose agent told to be AgentType
	// (a start then knows its type only from the launches).
	Generic bool `json:"generic,omitempty"`
	// Transcript is where a start's agent keeps its transcript (status
	// reads what it spent so far; a workflow script's agent is measured
	// from it).
	Transcript string `json:"transcript,omitempty"`
	// Worktree is the git worktree an isolated agent worked in (a start
	// or stop: its working directory; an Agent call's return: where Claude
	// Code kept it; a failed call: the one Claude Code failed to make),
	// "" for one that shared the project's tree.
	Worktree string `json:"worktree,omitempty"`
	// Shell: the agent ran shell commands (an Agent call's return, from
	// the tools it used).
	Shell bool `json:"shell,omitempty"`
}

// Fields are the fields of e as store appends them (it adds ts and
// event); empty ones are left out.
func (e Event) Fields() map[string]any {
	f := map[string]any{"session": e.Session, "agent_type": e.AgentType}
	for k, v := range map[string]string{"agent_id": e.AgentID, "worker_id": e.WorkerID, "output": e.Output, "transcript": e.Transcript, "worktree": e.Worktree} {
		if v != "" {
			f[k] = v
		}
	}
	if e.Generic {
		f["generic"] = true
	}
	return f
}

// Parse reads the events that matter here from events.jsonl; damaged and
// unrelated lines are skipped.
func Parse(data []byte) []Event {
	var out []Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	for sc.Scan() {
		line := sc.Bytes()
		// Cheap filter first: most lines are other events.
		if !bytes.Contains(line, []byte(`"agent_`)) && !bytes.Contains(line, []byte(`"transition"`)) && !bytes.Contains(line, []byte(`"rewind"`)) {
			continue
		}
		var ev Event
		if json.Unmarshal(line, &ev) == nil && (newState(ev.Event) || isAgentEvent(ev.Event)) {
			out = append(out, ev)
		}
	}
	return out
}

func isAgentEvent(kind string) bool {
	return kind == Launch || kind == Start || kind == Stop || kind == Failed || kind == usage.AgentEvent
}

// newState reports an event that starts the work of a state afresh: a
// transition, or a rewind (the work taken back is history, and its
// agents are not this state's).
func newState(kind string) bool { return kind == "transition" || kind == "rewind" }

// Worker is what the events say of one worker's latest launch.
type Worker struct {
	ID        string
	AgentType string
	Output    string // the file the launch's prompt says to write
	Launched  time.Time
	Stopped   time.Time // zero while no stop was attributed to it
	Launches  int       // its launches in the state, this one counted
	// NeverStarted: its Agent call failed before the agent ran.
	NeverStarted bool
	// Unmade is the worktree Claude Code failed to make for it, whose
	// branch git may have made all the same.
	Unmade string
}

func (w *Worker) launches() int {
	if w == nil {
		return 0
	}
	return w.Launches
}

// Runs is the fold of one session's agent events in the current state.
type Runs struct {
	// Hooks tells which of the hooks were seen at work for the session, in
	// any state: a launch means PreToolUse records launches before the
	// Agent call runs; a start or stop, that SubagentStart/SubagentStop
	// do.
	Hooks struct{ Launches, Lifecycle bool }

	launched []Worker // every launch, in order; WorkerID "" when unattributed
	workers  map[string]*Worker
	launches map[string]int // per agent type
	started  map[string]agent
	stopped  map[string]agent // agent id -> type and stop time
	// generic lists the types of the generic launches in order, and
	// genericStarts counts the starts matched to them per type.
	generic       []string
	genericStarts map[string]int
	// settled: every agent of the session has ended, whatever the
	// events say (Settle).
	settled bool
}

type agent struct {
	Type    string
	Started time.Time // for a stopped agent: when it stopped
}

// Fold reads the agent events of session after the last transition (or
// rewind): the workers of the current state. Events of other sessions are of a Claude
// Code process that is gone (or of nobody's concern here).
func Fold(evs []Event, session string) Runs {
	r := Runs{}
	r.reset()
	for _, ev := range evs {
		if newState(ev.Event) {
			r.reset()
			continue
		}
		if ev.Session != session {
			continue
		}
		switch ev.Event {
		case Launch:
			r.Hooks.Launches = true
		case Start, Stop:
			r.Hooks.Lifecycle = true
		}
		switch ev.Event {
		case Launch:
			if ev.Generic {
				r.generic = append(r.generic, ev.AgentType)
			}
			r.launches[ev.AgentType]++
			w := Worker{ID: ev.WorkerID, AgentType: ev.AgentType, Output: ev.Output, Launched: ev.TS}
			r.launched = append(r.launched, w)
			if ev.WorkerID != "" {
				w.Launches = r.workers[ev.WorkerID].launches() + 1
				// A relaunch replaces the earlier attempt.
				r.workers[ev.WorkerID] = &w
			}
		case Start:
			if ev.AgentID != "" {
				r.started[ev.AgentID] = agent{Type: ev.AgentType, Started: ev.TS}
			}
			if ev.Generic {
				r.genericStarts[ev.AgentType]++
			}
		case Stop:
			if ev.AgentID != "" {
				r.stopped[ev.AgentID] = agent{Type: ev.AgentType, Started: ev.TS}
			}
			if w := r.workers[ev.WorkerID]; w != nil && w.Stopped.IsZero() {
				w.Stopped = ev.TS
			}
		case Failed:
			// The launch has no agent to wait for.
			if w := r.workers[ev.WorkerID]; w != nil && w.Stopped.IsZero() {
				w.Stopped, w.NeverStarted, w.Unmade = ev.TS, true, ev.Worktree
				r.launches[ev.AgentType]--
			}
		}
	}
	return r
}

func (r *Runs) reset() {
	r.launched = nil
	r.workers, r.launches = map[string]*Worker{}, map[string]int{}
	r.started, r.stopped = map[string]agent{}, map[string]agent{}
	r.generic, r.genericStarts = nil, map[string]int{}
}

// Settle is r known to have no agent at work: a Claude Code workflow
// script asks flowstate for its next step only between waves, once every
// agent it started has ended, whether or not a stop was recorded (an
// agent ended by a hook, or killed, gets none).
func (r Runs) Settle() Runs {
	r.settled = true
	return r
}

// GenericStart names the agent a general-purpose agent that is starting
// was launched as: the type of the first generic launch of the current
// state no start has been matched to yet; "" when there is none. A
// start's payload has no prompt; its launch's had.
func (r Runs) GenericStart() string {
	seen := map[string]int{}
	for _, t := range r.generic {
		seen[t]++
		if seen[t] > r.genericStarts[t] {
			return t
		}
	}
	return ""
}

// StartOf is the recorded start of the agent with agentID, in any state;
// ok is false when none is on record.
func StartOf(evs []Event, agentID string) (ev Event, ok bool) {
	for _, e := range evs {
		if e.Event == Start && e.AgentID == agentID {
			ev, ok = e, true
		}
	}
	return ev, ok
}

// StartsOf lists the agents session's hooks saw start, in any state,
// each once (its last start), in the order they started.
func StartsOf(evs []Event, session string) []Event {
	var out []Event
	for _, e := range evs {
		if e.Event != Start || e.Session != session || e.AgentID == "" {
			continue
		}
		out = slices.DeleteFunc(out, func(o Event) bool { return o.AgentID == e.AgentID })
		out = append(out, e)
	}
	return out
}

// Isolated is what the events tell of one worker of an isolated state:
// the worktree its latest agent worked in, and whether its agents ran
// shell commands (nil when no Agent call of it was seen to return).
type Isolated struct {
	Worktree string
	Shell    *bool
}

// Worktrees tells, for the workers of the current state (after the last
// transition or rewind), in any session (a resumed workflow merges what
// an earlier session's agents left), where each one's latest agent
// worked and whether its agents ran shell commands.
func Worktrees(evs []Event) map[string]Isolated {
	out := map[string]Isolated{}
	for _, ev := range evs {
		if newState(ev.Event) {
			clear(out)
			continue
		}
		if ev.WorkerID == "" || ev.Event != Stop && ev.Event != usage.AgentEvent {
			continue
		}
		it := out[ev.WorkerID]
		if ev.Worktree != "" {
			it.Worktree = ev.Worktree
		}
		if ev.Event == usage.AgentEvent {
			shell := ev.Shell || it.Shell != nil && *it.Shell
			it.Shell = &shell
		}
		out[ev.WorkerID] = it
	}
	return out
}

// Bound tells in which state the agent with agentID started: found is
// false when no start of it is on record; current is true when it
// started in the workflow's current state (after the last transition or
// rewind). A sub-supervisor launched for a state must not act on a later
// one.
func Bound(evs []Event, agentID string) (found, current bool) {
	for _, ev := range evs {
		switch {
		case newState(ev.Event):
			current = false
		case ev.Event == Start && ev.AgentID == agentID:
			found, current = true, true
		}
	}
	return found, current
}

// running counts the agents of type t that are at work: started and not
// stopped, plus launches no agent was seen for yet (the moment between
// the two hooks, or a Claude Code without SubagentStart). Agents started
// before cutoff count as stuck, not running.
func (r Runs) running(t string, cutoff time.Time) int {
	if r.settled {
		return 0
	}
	seen, n := 0, 0
	for id, a := range r.started {
		if a.Type != t {
			continue
		}
		seen++
		if _, done := r.stopped[id]; !done && !a.Started.Before(cutoff) {
			n++
		}
	}
	for id, a := range r.stopped {
		if _, ok := r.started[id]; !ok && a.Type == t {
			seen++
		}
	}
	return n + max(0, r.launches[t]-seen)
}

// Status of a worker as the events tell it.
type Status int

const (
	NotLaunched Status = iota // no launch in this state and session
	Running                   // launched, no stop yet
	Stuck                     // launched longer ago than the bound, no stop
	Stopped                   // its agent stopped (whether it delivered is the artifact's business)
)

func (s Status) String() string {
	return [...]string{"not launched", "running", "stuck", "stopped"}[s]
}

// Worker returns the status of worker id at now, and the worker's latest
// launch. A worker running longer than stuckAfter is Stuck. A launch that
// no stop was attributed to (the hook could not tell whose stop it was)
// counts as stopped once no agent of its type is at work.
func (r Runs) Worker(id string, now time.Time, stuckAfter time.Duration) (Status, Worker) {
	w := r.workers[id]
	if w == nil {
		return NotLaunched, Worker{ID: id}
	}
	switch cutoff := now.Add(-stuckAfter); {
	case !w.Stopped.IsZero(), r.settled:
		return Stopped, *w
	case w.Launched.Before(cutoff):
		return Stuck, *w
	case r.running(w.AgentType, cutoff) == 0:
		return Stopped, *w
	}
	return Running, *w
}

// Outputs lists the launches of the current state that were told to
// write a file, in launch order, the latest launch for each file.
func (r Runs) Outputs() []Worker {
	var out []Worker
	for _, l := range r.launched {
		if l.Output == "" {
			continue
		}
		if i := slices.IndexFunc(out, func(w Worker) bool { return w.Output == l.Output }); i >= 0 {
			out[i] = l
			continue
		}
		out = append(out, l)
	}
	return out
}

// Empty reports that no agent event was seen in the current state.
func (r Runs) Empty() bool {
	return len(r.launches) == 0 && len(r.started) == 0 && len(r.stopped) == 0
}

// Launched reports whether an agent of type t was launched (or seen
// starting) in the current state at or after since.
func (r Runs) Launched(t string, since time.Time) bool {
	for _, l := range r.launched {
		if l.AgentType == t && !l.Launched.Before(since) {
			return true
		}
	}
	for _, m := range []map[string]agent{r.started, r.stopped} {
		for _, a := range m {
			if a.Type == t && !a.Started.Before(since) {
				return true
			}
		}
	}
	return false
}

// AnyRunning reports whether an agent of one of types is at work (not
// stuck) at now, attributed to a worker or not.
func (r Runs) AnyRunning(now time.Time, stuckAfter time.Duration, types ...string) bool {
	for _, t := range types {
		if t != "" && r.running(t, now.Add(-stuckAfter)) > 0 {
			return true
		}
	}
	return false
}

// Entry is one launch as a person would follow it.
type Entry struct {
	WorkerID  string // "" for an agent no worker is attributed to (a sub-supervisor)
	AgentType string
	Status    Status
	Launched  time.Time
	Took      time.Duration // launch to stop, once stopped
}

// Entries lists the launches of the current state, in order, with their
// status at now: a worker's latest launch once, and each unattributed
// launch (at work while an agent of its type is).
func (r Runs) Entries(now time.Time, stuckAfter time.Duration) []Entry {
	var out []Entry
	seen := map[string]bool{}
	for i := len(r.launched) - 1; i >= 0; i-- {
		l := r.launched[i]
		e := Entry{WorkerID: l.ID, AgentType: l.AgentType, Launched: l.Launched}
		switch {
		case l.ID != "" && seen[l.ID]:
			continue
		case l.ID != "":
			seen[l.ID] = true
			e.Status, _ = r.Worker(l.ID, now, stuckAfter)
			e.Took = r.Duration(l.ID)
		case l.Launched.Before(now.Add(-stuckAfter)):
			e.Status = Stuck
		case r.running(l.AgentType, now.Add(-stuckAfter)) > 0:
			e.Status = Running
		default:
			e.Status = Stopped
		}
		out = append(out, e)
	}
	slices.Reverse(out)
	return out
}

// Span is how long the workers ids took together: from the first launch
// to the last stop of their latest launches; 0 unless all of them
// stopped.
func (r Runs) Span(ids []string) time.Duration {
	var first, last time.Time
	for _, id := range ids {
		w := r.workers[id]
		if w == nil || w.Stopped.IsZero() {
			return 0
		}
		if first.IsZero() || w.Launched.Before(first) {
			first = w.Launched
		}
		if w.Stopped.After(last) {
			last = w.Stopped
		}
	}
	if first.IsZero() {
		return 0
	}
	return max(last.Sub(first), 0) // a clock stepped back: no time, never a negative one
}

// Duration is how long worker id's latest launch took, 0 while it has
// not stopped.
func (r Runs) Duration(id string) time.Duration {
	if w := r.workers[id]; w != nil && !w.Stopped.IsZero() {
		return max(w.Stopped.Sub(w.Launched), 0)
	}
	return 0
}
