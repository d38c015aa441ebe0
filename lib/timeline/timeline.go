// Package timeline owns what a workflow did over time, as people look at
// it afterwards: the spans of its states, every agent it ran as a bar on
// the same clock (parallel ones side by side, in waves), the waits for a
// person, the failures, retries and rewinds, and the tokens each agent and
// the main thread spent, phase by phase. `flowstate status`, `history` and
// `report` show it.
//
// It is pure: Build folds a workflow's events.jsonl and checkpoint, which
// the caller reads. Nothing spent is ever dropped: work a rewind threw
// away is marked, and still counted.
package timeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Input is what Build reads.
type Input struct {
	ID         string
	Checkpoint []byte
	Events     []byte
	Initial    string // the machine's initial state
	Now        time.Time
	StuckAfter time.Duration
	// Workers names the worker of agents (by agent id) that no event of
	// theirs names yet: an agent at work, whose prompt (in its
	// transcript, which the caller reads) gives its worker's artifact.
	Workers map[string]string
}

// Timeline is a workflow's run.
type Timeline struct {
	ID          string
	Command     string
	Description string
	Status      string
	Start, End  time.Time // End is when it ended (its last lifecycle event), else now
	Active      bool
	States      []State
	Agents      []Agent
	Waits       []Wait
	Marks       []Mark
	Main        []Spend // the main thread's tokens, per state and model
	Lanes       int     // the most agents at work at once
}

// State is one stay in a state.
type State struct {
	Name       string
	Start, End time.Time
	Current    bool // the workflow is in it now
	Rewound    bool // a later rewind took its work back
	Failed     bool // an error was recorded in it
	Partial    bool // some of its workers failed and the workflow went on without them
	Epoch      int  // rewinds before it
}

// Agent is one agent's run.
type Agent struct {
	ID, Type, Worker, State string
	Session                 string
	Start, End              time.Time // End is zero while it runs
	Status                  string    // Running, Stuck, Done, Failed, Stopped, Lost
	Attempt                 int       // 1, then 2... for a worker run again
	Rewound                 bool      // its state's work was taken back by a rewind
	Epoch                   int
	Lane, Wave              int // its row among the agents at work at once; its wave in its state (1-based)
	Usage                   usage.Usage
	Model                   string
	Requests, ToolUses      int
	Measured                bool   // Usage is known (its Agent call returned)
	Transcript              string // where its transcript is, while it runs
	Artifact                string // the file its worker record names
	Error                   string
	// Worktree is the git worktree an isolated agent worked in, Branch
	// its branch, Merge what became of it once its wave was merged
	// (Merged, ... of lib/worktree, with MergeNote saying more).
	Worktree, Branch, Merge string
	MergeNote               string
	takenBack               int  // the rewind that took it back (its index), when Rewound
	launch                  bool // a launch's entry: a bar of its own until the agent it started is known
	started                 bool // its start was recorded
}

// Statuses of an agent.
const (
	Running = "running"
	Stuck   = "stuck"
	Done    = "done"
	Failed  = "failed"
	Stopped = "stopped" // stopped, its worker not checked (or not a worker)
	Lost    = "lost"    // never seen stopping, and the workflow is over
)

// Wait is a time the workflow waited for a person.
type Wait struct {
	Kind       string // gate, budget (held at its spend limit), pause
	State      string
	Start, End time.Time // End is zero while it waits
	Message    string
	Outcome    string // approve, reject, unpause, cancel
	By         string
}

// Mark is a moment worth marking: an error, a retry, a rewind, a cancel.
type Mark struct {
	Kind  string
	At    time.Time
	State string
	Text  string
}

// Spend is tokens spent in a state with a model.
type Spend struct {
	State    string
	Model    string
	Usage    usage.Usage
	Requests int
}

// event is one line of events.jsonl with the fields read here.
type event struct {
	TS         time.Time       `json:"ts"`
	Event      string          `json:"event"`
	From       string          `json:"from"`
	To         string          `json:"to"`
	State      string          `json:"state"`
	States     []string        `json:"states"`
	Kind       string          `json:"kind"` // rewind: "retry" for a retry of accepted failures (sm.RetakeIn)
	Status     string          `json:"status"`
	Session    string          `json:"session"`
	AgentID    string          `json:"agent_id"`
	AgentType  string          `json:"agent_type"`
	WorkerID   string          `json:"worker_id"`
	Model      string          `json:"model"`
	Usage      json.RawMessage `json:"usage"`
	Requests   int             `json:"requests"`
	ToolUses   int             `json:"tool_uses"`
	DurationMs int64           `json:"duration_ms"`
	Transcript string          `json:"transcript"`
	Ended      time.Time       `json:"ended"` // agent_usage: when its Agent call returned
	Message    string          `json:"message"`
	Reason     string          `json:"reason"`
	Error      string          `json:"error"`
	By         string          `json:"by"`
	Spent      string          `json:"spent"` // budget: what was spent, of limit
	Limit      string          `json:"limit"`
	Retry      int             `json:"retry"`
	Max        int             `json:"max"`
	// An isolated agent's start and stop, a merge: its worktree; a
	// merge: its branch, the files it changed or that conflicted, whom
	// with, and where a discarded attempt's work is kept.
	Worktree string   `json:"worktree"`
	Branch   string   `json:"branch"`
	Files    []string `json:"files"`
	With     []string `json:"with"`
	Patch    string   `json:"patch"`
}

func (e event) usage() usage.Usage {
	var u usage.Usage
	_ = json.Unmarshal(e.Usage, &u)
	return u
}

func parse(data []byte) []event {
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event != "" && !ev.TS.IsZero() {
			out = append(out, ev)
		}
	}
	return out
}

// Build folds a workflow's events and checkpoint into its timeline.
func Build(in Input) Timeline {
	doc := gjson.ParseBytes(in.Checkpoint)
	v := checkpoint.HeadOf(in.Checkpoint)
	t := Timeline{ID: in.ID, Command: v.Command, Description: v.Description, Status: v.Status}
	t.Active = checkpoint.Active(t.Status)
	b := builder{t: &t, in: in, doc: doc, byID: map[string]int{}}
	for _, ev := range parse(in.Events) {
		b.fold(ev)
	}
	b.finish()
	return t
}

type builder struct {
	t       *Timeline
	in      Input
	doc     gjson.Result
	epoch   int
	byID    map[string]int // agent id -> index in t.Agents
	records []record       // the workers' records, applied once the agents are paired
	merges  []event        // what became of isolated workers' branches, applied once the agents are paired
	ended   time.Time      // the last event of the workflow's own lifecycle
	last    time.Time      // the last event of any kind
}

// record is a worker's record: done or failed.
type record struct {
	worker, status string
	at             time.Time
}

func (b *builder) state() string {
	if len(b.t.States) == 0 {
		return b.in.Initial
	}
	return b.t.States[len(b.t.States)-1].Name
}

// stateAt is the state the workflow was in at t, and the rewinds before
// it; the initial state before it was created.
func (b *builder) stateAt(t time.Time) (string, int) {
	for i := len(b.t.States) - 1; i >= 0; i-- {
		if s := b.t.States[i]; !s.Start.After(t) {
			return s.Name, s.Epoch
		}
	}
	return b.in.Initial, 0
}

func (b *builder) enter(name string, at time.Time) {
	if n := len(b.t.States); n > 0 && b.t.States[n-1].End.IsZero() {
		b.t.States[n-1].End = at
	}
	b.t.States = append(b.t.States, State{Name: name, Start: at, Epoch: b.epoch})
}

// fold applies one event to the timeline.
func (b *builder) fold(ev event) {
	t := b.t
	if t.Start.IsZero() || ev.TS.Before(t.Start) {
		t.Start = ev.TS
	}
	b.last = later(b.last, ev.TS)
	switch ev.Event {
	case "init", "transition", "rewind", "finish", "reopen":
		b.ended = later(b.ended, ev.TS)
		b.move(ev)
	case "error", "retry", "cancel":
		b.ended = later(b.ended, ev.TS)
		b.mark(ev)
	case "gate", "budget", "approve", "reject", "pause", "unpause":
		b.ended = later(b.ended, ev.TS)
		b.wait(ev)
	case agentrun.Launch, agentrun.Start, agentrun.Stop, usage.AgentEvent, "worker", "supervisor-record":
		b.agentEvent(ev)
	case usage.MainEvent:
		b.spent(ev)
	}
}

// move follows the workflow from state to state.
func (b *builder) move(ev event) {
	t := b.t
	switch ev.Event {
	case "init":
		b.enter(b.in.Initial, ev.TS)
	case "transition":
		b.enter(ev.To, ev.TS)
	case "rewind":
		b.rewind(ev)
		b.epoch++
		b.enter(ev.To, ev.TS)
		t.Marks = append(t.Marks, Mark{Kind: "rewind", At: ev.TS, State: ev.To, Text: ev.From + " → " + ev.To + note(ev.Reason)})
	case "finish":
		if n := len(t.States); n > 0 {
			t.States[n-1].End = ev.TS
		}
	case "reopen":
		b.enter(b.state(), ev.TS)
	}
}

// mark records an error, a retry or a cancel; a cancel ends a pause.
func (b *builder) mark(ev event) {
	t := b.t
	switch ev.Event {
	case "error":
		if n := len(t.States); n > 0 {
			t.States[n-1].Failed = true
		}
		t.Marks = append(t.Marks, Mark{Kind: "error", At: ev.TS, State: ev.State, Text: ev.Error})
	case "retry":
		t.Marks = append(t.Marks, Mark{Kind: "retry", At: ev.TS, State: ev.State, Text: retryText(ev)})
	case "cancel":
		t.Marks = append(t.Marks, Mark{Kind: "cancel", At: ev.TS, State: ev.State, Text: ev.By + note(ev.Reason)})
		b.endWait("pause", ev)
		b.endWait("budget", ev)
	}
}

// wait begins or ends a wait for a person: at a gate, or paused.
func (b *builder) wait(ev event) {
	t := b.t
	switch ev.Event {
	case "gate":
		t.Waits = append(t.Waits, Wait{Kind: "gate", State: ev.State, Start: ev.TS, Message: ev.Message})
	case "budget":
		t.Waits = append(t.Waits, Wait{Kind: "budget", State: ev.State, Start: ev.TS, Message: "spent " + ev.Spent + " of " + ev.Limit})
	case "approve", "reject":
		b.endWait(map[bool]string{true: "budget", false: "gate"}[ev.Kind == "budget"], ev)
	case "pause":
		t.Waits = append(t.Waits, Wait{Kind: "pause", State: ev.State, Start: ev.TS, Message: ev.Reason, By: ev.By})
	case "unpause":
		b.endWait("pause", ev)
	}
}

// agentEvent follows an agent: launched, started, stopped, measured, and
// its worker's record.
func (b *builder) agentEvent(ev event) {
	switch ev.Event {
	case agentrun.Launch:
		b.t.Agents[b.agent("", ev)].launch = true
	case agentrun.Start:
		b.started(ev)
	case agentrun.Stop:
		b.stopped(ev)
	case usage.AgentEvent:
		b.measured(ev)
	case "worker", "supervisor-record":
		if ev.WorkerID != "" {
			b.records = append(b.records, record{worker: ev.WorkerID, status: ev.Status, at: ev.TS})
		}
	case "merge":
		b.merges = append(b.merges, ev)
	}
}

func note(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

func retryText(ev event) string {
	return "retry " + strconv.Itoa(ev.Retry) + " of " + strconv.Itoa(ev.Max)
}

// rewind marks what the rewind took back: the stays in its states and
// their agents, from before it. A retry of accepted failures
// (sm.RetakeIn) keeps what the state it goes back to recorded: that
// state's stay and agents are not taken back, and their records stay in
// the checkpoint.
func (b *builder) rewind(ev event) {
	back := map[string]bool{}
	for _, s := range ev.States {
		back[s] = true
	}
	if ev.Kind == checkpoint.RetryRewind {
		delete(back, ev.To)
	}
	for i := range b.t.States {
		if back[b.t.States[i].Name] && b.t.States[i].Epoch == b.epoch {
			b.t.States[i].Rewound = true
		}
	}
	for i := range b.t.Agents {
		if a := &b.t.Agents[i]; back[a.State] && !a.Rewound {
			a.Rewound, a.takenBack = true, b.epoch
		}
	}
}

func (b *builder) endWait(kind string, ev event) {
	for i := len(b.t.Waits) - 1; i >= 0; i-- {
		if w := &b.t.Waits[i]; w.Kind == kind && w.End.IsZero() {
			w.End, w.Outcome = ev.TS, ev.Event
			if ev.By != "" {
				w.By = ev.By
			}
			return
		}
	}
}

// agent adds an agent seen first in ev (or, without an id, a launch).
func (b *builder) agent(id string, ev event) int {
	a := Agent{ID: id, Type: ev.AgentType, Worker: ev.WorkerID, State: b.state(), Session: ev.Session, Start: ev.TS, Epoch: b.epoch}
	b.t.Agents = append(b.t.Agents, a)
	i := len(b.t.Agents) - 1
	if id != "" {
		b.byID[id] = i
	}
	return i
}

// started adds the agent that started; which launch it answers is
// known only from the worker its later events name (pair): agents
// launched together start in any order.
func (b *builder) started(ev event) {
	if _, ok := b.byID[ev.AgentID]; ok || ev.AgentID == "" {
		return
	}
	a := &b.t.Agents[b.agent(ev.AgentID, ev)]
	a.Transcript, a.started = ev.Transcript, true
	a.worked(ev.Worktree)
}

// worked notes the worktree an isolated agent worked in, and its branch
// as Claude Code names it.
func (a *Agent) worked(wt string) {
	if wt != "" {
		a.Worktree, a.Branch = wt, "worktree-"+filepath.Base(wt)
	}
}

// merged puts what became of each isolated worker's branch on the agent
// whose work it was: the worker's latest agent of the merge's state that
// worked in the merge's worktree (any of its agents, for a merge that
// names none).
func (b *builder) merged() {
	for _, ev := range b.merges {
		for i := len(b.t.Agents) - 1; i >= 0; i-- {
			a := &b.t.Agents[i]
			if a.Worker != ev.WorkerID || a.State != ev.State || ev.Worktree != "" && a.Worktree != "" && a.Worktree != ev.Worktree {
				continue
			}
			a.Merge, a.MergeNote = ev.Status, mergeNote(ev)
			if ev.Branch != "" {
				a.Branch = ev.Branch
			}
			break
		}
	}
}

// mergeNote says more of a merge, in one line: what a conflict met, where
// a discarded attempt is kept.
func mergeNote(ev event) string {
	switch {
	case ev.Status == "conflict" && len(ev.With) > 0:
		return "with " + strings.Join(ev.With, ", ") + " in " + strings.Join(ev.Files, ", ")
	case ev.Status == "conflict":
		return "in " + strings.Join(ev.Files, ", ")
	case ev.Patch != "":
		return "kept in " + ev.Patch
	}
	return ""
}

// identify takes what ev says of its agent's identity: the worker its
// prompt names, and the type the hooks recognised it as (a general-purpose
// agent's, known for sure only from its prompt).
func identify(a *Agent, ev event) {
	if ev.WorkerID != "" {
		a.Worker = ev.WorkerID
	}
	if ev.AgentType != "" {
		a.Type = ev.AgentType
	}
}

// byAgentID is the agent of ev's id, added when it was not seen starting.
func (b *builder) byAgentID(ev event) int {
	if i, ok := b.byID[ev.AgentID]; ok && ev.AgentID != "" {
		return i
	}
	return b.agent(ev.AgentID, ev)
}

// stopped ends an agent's run, the first time it is seen stopping.
func (b *builder) stopped(ev event) {
	a := &b.t.Agents[b.byAgentID(ev)]
	if a.End.IsZero() {
		a.End = ev.TS
	}
	identify(a, ev)
	a.worked(ev.Worktree)
}

// measured records an agent's usage; an agent seen only here (the
// classifier, before its workflow existed) gets its run from it.
func (b *builder) measured(ev event) {
	_, seen := b.byID[ev.AgentID]
	i := b.byAgentID(ev)
	a := &b.t.Agents[i]
	ended := ev.Ended
	if ended.IsZero() {
		ended = ev.TS
	}
	if !seen {
		// Its run is known from the usage alone: it belongs to the state
		// it started in (the classifier's: before the workflow existed).
		a.Start = ended.Add(-time.Duration(ev.DurationMs) * time.Millisecond)
		a.End = ended
		a.State, a.Epoch = b.stateAt(a.Start)
	}
	if a.End.IsZero() {
		a.End = ended
	}
	identify(a, ev)
	a.Usage, a.Model, a.Requests, a.ToolUses, a.Measured = ev.usage(), ev.Model, ev.Requests, ev.ToolUses, true
	if ev.Status != "" && ev.Status != "completed" {
		a.Status, a.Error = Failed, "its Agent call ended "+ev.Status
	}
}

func (b *builder) spent(ev event) {
	u := ev.usage()
	for i := range b.t.Main {
		if s := &b.t.Main[i]; s.State == ev.State && s.Model == ev.Model {
			s.Usage = s.Usage.Add(u)
			s.Requests += ev.Requests
			return
		}
	}
	b.t.Main = append(b.t.Main, Spend{State: ev.State, Model: ev.Model, Usage: u, Requests: ev.Requests})
}

// recorded applies the workers' records (done or failed), each to its
// worker's latest run started before it (the agents are in the order they
// started).
func (b *builder) recorded() {
	runs := map[string][]int{} // worker -> its runs
	for i, a := range b.t.Agents {
		if a.Worker != "" {
			runs[a.Worker] = append(runs[a.Worker], i)
		}
	}
	for _, r := range b.records {
		of := runs[r.worker]
		if len(of) == 0 {
			continue
		}
		latest := of[0]
		for _, i := range of[1:] {
			if !b.t.Agents[i].Start.After(r.at) {
				latest = i
			}
		}
		switch r.status {
		case checkpoint.WorkerCompleted:
			b.t.Agents[latest].Status = Done
		case checkpoint.WorkerFailed:
			b.t.Agents[latest].Status = Failed
		}
	}
}

// finish closes what the events left open: a finished run ends at its
// last lifecycle event (its sm-finish, the transition into its terminal
// state, a cancel), never at the time it is looked at; an active one
// now. The last stay and the waits end there; the agents are paired with
// their launches, and each gets its worker's record and a status.
func (b *builder) finish() {
	t := b.t
	switch {
	case t.Active:
		t.End = b.in.Now
	case !b.ended.IsZero():
		t.End = b.ended
	case !b.last.IsZero():
		t.End = b.last
	default:
		t.End = b.in.Now
	}
	if t.Start.IsZero() {
		t.Start = b.created()
	}
	b.closeStates()
	for i := range t.Waits {
		if t.Waits[i].End.IsZero() && !t.Active {
			t.Waits[i].End = t.End
		}
	}
	for _, a := range t.Agents {
		if a.Start.Before(t.Start) {
			t.Start = a.Start // the classifier ran before the workflow existed
		}
	}
	b.pair()
	b.merged()
	b.recorded()
	recs := b.workerRecords()
	latest := map[string]int{} // worker -> its latest run
	for i, a := range t.Agents {
		latest[a.Worker] = i
	}
	for i := range t.Agents {
		a := &t.Agents[i]
		if a.Worker != "" {
			withRecord(a, recs, latest[a.Worker] == i)
		}
		b.settle(a)
	}
	t.Lanes = lanes(t.Agents, t.End)
	waves(t.Agents)
}

// created is when a run without a dated event (its log lost, or a
// checkpoint older than the log) began: when its checkpoint was created,
// else at its end, so that its span is never the centuries back to the
// zero time.
func (b *builder) created() time.Time {
	at, err := time.Parse(time.RFC3339Nano, b.doc.Get("created_at").String())
	if err != nil || at.After(b.t.End) {
		return b.t.End
	}
	return at
}

// closeStates ends the last stay (at the end, or now while the workflow
// is active) and marks the stays whose workers partly failed, as the
// checkpoint says.
func (b *builder) closeStates() {
	t := b.t
	if n := len(t.States); n > 0 {
		last := &t.States[n-1]
		if last.End.IsZero() || t.Active {
			last.End = t.End
		}
		last.Current = t.Active
	}
	for i := range t.States {
		s := &t.States[i]
		if !s.Rewound && len(b.doc.Get(checkpoint.PhaseData(s.Name, checkpoint.PhasePartialFailures)).Array()) > 0 {
			s.Partial = true
		}
	}
}

// withRecord gives a worker's agent the artifact and error of its record:
// the checkpoint's, or for a rewound one, the record its rewind kept. The
// worker's latest run, stopped with no record event of its own (a record
// written straight into the checkpoint), takes the record's status.
func withRecord(a *Agent, recs map[[2]any]workerRec, latest bool) {
	key := [2]any{a.Worker, -1}
	if a.Rewound {
		key[1] = a.takenBack
	}
	r := recs[key]
	if a.Status == "" && latest && !a.Rewound && !a.End.IsZero() {
		switch r.status {
		case checkpoint.WorkerCompleted:
			a.Status = Done
		case checkpoint.WorkerFailed:
			a.Status = Failed
		}
	}
	if a.Artifact == "" {
		a.Artifact = r.artifact
	}
	if a.Error == "" && a.Status == Failed {
		a.Error = r.err
	}
}

// settle gives an agent without a recorded outcome its status: stopped,
// lost when the workflow is over, stuck when it has run too long, or
// running.
func (b *builder) settle(a *Agent) {
	t := b.t
	switch {
	case a.Status != "":
	case !a.End.IsZero():
		a.Status = Stopped
	case !t.Active:
		a.Status, a.End = Lost, t.End
	case b.in.StuckAfter > 0 && b.in.Now.Sub(a.Start) > b.in.StuckAfter:
		a.Status = Stuck
	default:
		a.Status = Running
	}
}

// workerRec is what a worker's record says of it.
type workerRec struct{ artifact, err, status string }

// workerRecords are the workers' records: the rewinds keep what they took
// back (keyed by the rewind's index), the checkpoint the current ones
// (-1).
func (b *builder) workerRecords() map[[2]any]workerRec {
	recs := map[[2]any]workerRec{}
	add := func(epoch int, sups gjson.Result) {
		sups.ForEach(func(_, sup gjson.Result) bool {
			for _, w := range sup.Get("workers").Array() {
				recs[[2]any{w.Get("worker_id").String(), epoch}] = workerRec{
					artifact: w.Get("output_path").String(), err: w.Get("error").String(), status: w.Get("status").String()}
			}
			return true
		})
	}
	// A rewind keeps the records it took back under the field's own name.
	for i, r := range b.doc.Get(checkpoint.PathRewinds).Array() {
		add(i, r.Get(checkpoint.PathSupervisorState))
	}
	add(-1, b.doc.Get(checkpoint.PathSupervisorState))
	return recs
}

// lanes gives every agent the lowest row free when it starts, so agents
// at work at once sit side by side, and returns the rows used.
func lanes(agents []Agent, end time.Time) int {
	order := make([]int, len(agents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return agents[order[i]].Start.Before(agents[order[j]].Start) })
	var free []time.Time // per lane: when it is free again
	for _, i := range order {
		a := &agents[i]
		stop := a.End
		if stop.IsZero() {
			stop = end
		}
		lane := slices.IndexFunc(free, func(t time.Time) bool { return !t.After(a.Start) })
		if lane < 0 {
			lane = len(free)
			free = append(free, time.Time{})
		}
		free[lane] = stop
		a.Lane = lane
	}
	return len(free)
}

// waveGap is how far apart the starts of agents launched together can
// be: Claude Code starts the Agent calls of one message at once.
const waveGap = 3 * time.Second

// waves numbers, per state and epoch, the batches of agents launched
// together: the first workers of a phase, then the ones after them.
func waves(agents []Agent) {
	type key struct {
		state string
		epoch int
	}
	order := make([]int, len(agents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return agents[order[i]].Start.Before(agents[order[j]].Start) })
	wave := map[key]int{}
	first := map[key]time.Time{}
	for _, i := range order {
		a := &agents[i]
		k := key{a.State, a.Epoch}
		if wave[k] == 0 || a.Start.Sub(first[k]) > waveGap {
			wave[k]++
			first[k] = a.Start
		}
		a.Wave = wave[k]
	}
}

// Spent sums what the agents and the main thread spent, per state, in
// the order the states were first entered.
func (t Timeline) Spent() []Spend {
	var out []Spend
	at := map[string]int{}
	add := func(state string, u usage.Usage, n int) {
		i, ok := at[state]
		if !ok {
			i = len(out)
			at[state] = i
			out = append(out, Spend{State: state})
		}
		out[i].Usage = out[i].Usage.Add(u)
		out[i].Requests += n
	}
	for _, s := range t.States {
		add(s.Name, usage.Usage{}, 0)
	}
	for _, a := range t.Agents {
		add(a.State, a.Usage, a.Requests)
	}
	for _, m := range t.Main {
		add(m.State, m.Usage, m.Requests)
	}
	return out
}

// Total is every token the workflow spent.
func (t Timeline) Total() usage.Usage {
	var u usage.Usage
	for _, s := range t.Spent() {
		u = u.Add(s.Usage)
	}
	return u
}

// Cost is what the workflow cost at prices: per state, and in all; ok is
// false when a model that spent tokens has no price (the sums then leave
// it out).
func (t Timeline) Cost(p *usage.Prices) (perState map[string]float64, total float64, ok bool) {
	perState, ok = map[string]float64{}, true
	add := func(state, model string, u usage.Usage) {
		if u.Zero() {
			return
		}
		c, priced := p.Cost(model, u)
		ok = ok && priced
		perState[state] += c
		total += c
	}
	for _, a := range t.Agents {
		add(a.State, a.Model, a.Usage)
	}
	for _, m := range t.Main {
		add(m.State, m.Model, m.Usage)
	}
	return perState, total, ok
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Unpriced is what the models without a price at p spent, in tokens per
// model, and the states they spent them in: the money leaves them out.
// Nothing without prices.
func (t Timeline) Unpriced(p *usage.Prices) (models map[string]int64, states map[string]bool) {
	models, states = map[string]int64{}, map[string]bool{}
	if p == nil {
		return models, states
	}
	add := func(state, model string, u usage.Usage) {
		if _, priced := p.Cost(model, u); !priced && !u.Zero() {
			models[model] += u.Total()
			states[state] = true
		}
	}
	for _, a := range t.Agents {
		add(a.State, a.Model, a.Usage)
	}
	for _, m := range t.Main {
		add(m.State, m.Model, m.Usage)
	}
	return models, states
}
