package hook

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// What a workflow spent is recorded by two hooks. PostToolUse, after each
// of flowstate's Agent calls returns, records the agent's tokens, model,
// requests, tool calls and duration (agent_usage), summed from its
// transcript. Stop, at the end of each turn, records the main thread's
// tokens since the last Stop of its session (main_usage, per state), and
// any of flowstate's agents the main transcript shows but no PostToolUse
// recorded: the classifier, which runs before its workflow exists.
// Claude Code may write a turn's last answer after the Stop hook ran; the
// next Stop, or SessionEnd, reads it from where Stop stopped.

// agentIDs are the ids Claude Code gives agents; anything else is not
// made into a path, nor into a shell line (permitAgentBash). Compiled on
// first use: every flowstate process would otherwise compile it at
// start-up.
var agentIDs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })

// postToolUse records the usage of one of flowstate's agents whose Agent
// call returned.
func (h handler) postToolUse() {
	if h.pl.ToolName == workflowTool {
		h.workflowLaunched()
		return
	}
	if h.pl.ToolName != "Agent" && h.pl.ToolName != "Task" || !h.recordable() {
		return
	}
	k, ours := orchestrate.Recognize(h.p, h.session, gjson.GetBytes(h.pl.ToolInput, "subagent_type").String(),
		gjson.GetBytes(h.pl.ToolInput, "prompt").String(), h.pl.Cwd)
	if !ours || k.Workflow == nil {
		return // the classifier before its workflow: Stop finds it in the main transcript
	}
	res, ok := usage.ParseAgentResult(h.pl.ToolResponse, h.env.Now)
	if !ok {
		return
	}
	f := h.measure(k.Worker, k.Name, res, h.agentUsage(res.ID, usage.MaxTranscript))
	h.isolation(f)
	if err := k.Workflow.Update(func(tx *store.Tx) error { tx.Event(usage.AgentEvent, f); return nil }); err != nil {
		h.l.printf("post-tool-use: %v", err)
	}
}

// agentFailed records an Agent call of one of the workflow's workers
// that failed before its agent ran (agentrun.Failed): nothing else will
// say its launch ended, and a verify would wait for it.
func (h handler) agentFailed() {
	if h.pl.ToolName != "Agent" && h.pl.ToolName != "Task" || !h.recordable() {
		return
	}
	k, ours := orchestrate.Recognize(h.p, h.session, gjson.GetBytes(h.pl.ToolInput, "subagent_type").String(),
		gjson.GetBytes(h.pl.ToolInput, "prompt").String(), h.pl.Cwd)
	if !ours || k.Workflow == nil || k.Worker == "" {
		return
	}
	f := agentrun.Event{Session: h.session, AgentType: k.Name, WorkerID: k.Worker, Worktree: worktree.Unmade(h.p.Dir, h.pl.Error)}.Fields()
	f["error"] = kv.OneLine(h.pl.Error)
	if err := k.Workflow.Update(func(tx *store.Tx) error { tx.Event(agentrun.Failed, f); return nil }); err != nil {
		h.l.printf("post-tool-use-failure: %v", err)
	}
}

// isolation adds to an agent's usage record where Claude Code kept the
// worktree it worked in (absent when it changed nothing, and Claude Code
// removed it) with its branch, and whether it ran shell commands: a
// shell command of an isolated worker can write outside its worktree,
// which its Write and Edit cannot.
func (h handler) isolation(f map[string]any) {
	resp := gjson.ParseBytes(h.pl.ToolResponse)
	if wt := resp.Get("worktreePath").String(); wt != "" && worktree.Of(h.p.Dir, wt) != "" {
		f["worktree"] = wt
		f["branch"] = resp.Get("worktreeBranch").String()
	}
	for _, t := range resp.Get("toolsUsed").Array() {
		if t.String() == "Bash" {
			f["shell"] = true
		}
	}
}

// recordable reports a hook that knows its project and a well-formed
// session.
func (h handler) recordable() bool {
	return h.p != nil && h.session != "" && store.ValidID(h.session) == nil
}

// scanned is what an agent's transcript says it spent: the agent's
// usage, and whether the transcript was read and holds a request.
type scanned struct {
	usage.Agent
	ok   bool
	read int64 // bytes of the transcript read
}

// agentUsage reads at most limit bytes of the transcript of the agent
// with id.
func (h handler) agentUsage(id string, limit int64) scanned {
	return h.scanAgent(agentTranscript(h.pl.SessionTranscript, id), limit)
}

// scanAgent reads at most limit bytes of the agent transcript at path.
func (h handler) scanAgent(path string, limit int64) scanned {
	if path == "" {
		return scanned{}
	}
	a, read, err := scanFile(path, limit, usage.ScanAgent)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.l.printf("agent transcript %s: %v", path, err)
	}
	return scanned{Agent: a, ok: err == nil && a.Requests > 0, read: read}
}

// transcriptOf is the transcript of the agent whose start is st: where
// its start said, else where an Agent call's agent keeps it.
func (h handler) transcriptOf(st agentrun.Event) string {
	base, _ := strings.CutSuffix(h.pl.SessionTranscript, ".jsonl")
	if st.Transcript != "" && base != "" && strings.HasPrefix(st.Transcript, filepath.Join(base, "subagents")+string(filepath.Separator)) {
		return st.Transcript // only ever one of the session's own
	}
	return agentTranscript(h.pl.SessionTranscript, st.AgentID)
}

// measure makes the agent_usage fields of agent's result res, from what
// its transcript says it spent (sc), else from the last request res
// reports; worker is the worker it was for ("" if none), as
// orchestrate.Recognize or AgentOf found it.
func (h handler) measure(worker, agent string, res usage.AgentResult, sc scanned) map[string]any {
	a, source := usage.Agent{}, "last-request"
	if sc.ok {
		a, source = sc.Agent, "transcript"
	}
	a = a.WithFinal(res.Last)
	if res.Model != "" {
		a.Model = res.Model
	}
	if res.ToolUses > 0 {
		a.ToolUses = res.ToolUses
	}
	f := map[string]any{
		"session": h.session, "agent_id": res.ID, "agent_type": agent, "model": a.Model,
		"usage": a.Usage, "requests": a.Requests, "tool_uses": a.ToolUses,
		"duration_ms": res.DurationMs, "status": res.Status, "source": source,
		"ended": res.At.UTC().Format(time.RFC3339Nano), // read at Stop, it ended earlier
	}
	if worker != "" {
		f["worker_id"] = worker
	}
	if a.Shell {
		f["shell"] = true // a worker in a worktree may have written outside it
	}
	return f
}

// agentTranscript is where Claude Code 2.1.328 keeps an agent's
// transcript: beside the session's, <session>/subagents/agent-<id>.jsonl
// (nested agents too). "" when either is unknown.
func agentTranscript(session, agentID string) string {
	base, ok := strings.CutSuffix(session, ".jsonl")
	if !ok || !agentIDs().MatchString(agentID) {
		return ""
	}
	return filepath.Join(base, "subagents", "agent-"+agentID+".jsonl")
}

// scanFile runs scan over at most limit bytes of the file at path, from
// its start, and says how many it read; the file is Claude Code's,
// opened like any file flowstate reads but does not own (never a FIFO or
// device).
func scanFile[T any](path string, limit int64, scan func(io.Reader) (T, error)) (T, int64, error) {
	var zero T
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return zero, 0, err
	}
	defer f.Close()
	r := &io.LimitedReader{R: f, N: limit}
	v, err := scan(r)
	return v, limit - r.N, err
}

// mainUsage records what the main thread spent for the session's
// workflow since the session's last record, and the agents only the main
// transcript shows; as the session ends, also the agents it interrupted.
func (h handler) mainUsage(ending bool) {
	if !h.recordable() || h.pl.SessionTranscript == "" {
		return
	}
	h.measureEarly() // a workflow script's last step agent
	id, err := h.p.SessionWorkflow(h.session)
	if err != nil || id == "" {
		return
	}
	w, err := h.p.Workflow(id)
	if err != nil {
		return
	}
	events, err := w.ReadEvents()
	if err != nil {
		h.l.printf("stop: %v", err)
		return
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		h.l.printf("stop: %v", err)
		return
	}
	v := checkpoint.ViewOf(doc)
	past := h.pastMain(events, v)
	m, err := h.scanMain(past)
	if err != nil {
		h.l.printf("stop: %v", err) // the agents it interrupted are still measured
	}
	var fields []map[string]any
	for _, res := range m.Agents {
		k, ours := orchestrate.AgentOf(w, res.Type, res.Prompt)
		if ours && !past.Measured[res.ID] {
			fields = append(fields, h.measure(k.Worker, k.Name, res, h.agentUsage(res.ID, usage.MaxTranscript)))
			past.Measured[res.ID] = true
		}
	}
	if ending {
		fields = append(fields, h.interrupted(events, past)...)
	}
	for _, s := range m.Spent {
		fields = append(fields, map[string]any{
			"session": h.session, "state": s.State, "model": s.Model, "usage": s.Usage,
			"requests": s.Requests, "cursor": m.Next,
		})
	}
	if len(fields) == 0 {
		return
	}
	err = w.Update(func(tx *store.Tx) error {
		for _, f := range fields {
			kind := usage.MainEvent
			if _, ok := f["agent_id"]; ok {
				kind = usage.AgentEvent
			}
			tx.Event(kind, f)
		}
		return nil
	})
	if err != nil {
		h.l.printf("stop: %v", err)
	}
}

// pastMain is what w's events (of view v) say the Stop hook needs to go
// on measuring the session's main thread: its turns from the workflow's
// creation, or from when the user typed the command that created it (a
// workflow engine's command launches it in a turn that ends before its
// script's first step creates it), to the workflow's finish, or the turn
// after it in which a workflow engine's command reported how it ended.
func (h handler) pastMain(events []byte, v checkpoint.View) usage.Past {
	past := usage.PastMain(events, h.session, v.Session, v.CurrentState)
	if at := orchestrate.PromptedAt(h.p, h.session); v.Session == h.session && !at.IsZero() && at.Before(past.Window.From) {
		past.Window.From = at
	}
	if !checkpoint.Active(v.Status) {
		past.Window.Until = past.Finished
		if run, ok := orchestrate.ReadRun(h.p, h.session); ok && run.ReportedAt().After(past.Window.Until) {
			past.Window.Until = run.ReportedAt()
		}
	}
	return past
}

// What SessionEnd reads of the transcripts of the agents the session
// interrupted: at most maxInterrupted agents and interruptedBudget bytes
// in all (about a third of a second), within Claude Code's 1.5 s for
// SessionEnd hooks. A session rarely leaves more than a few; the one
// read when the budget runs out counts what was read of it, as a
// transcript past usage.MaxTranscript does.
const (
	maxInterrupted    = 32
	interruptedBudget = 64 << 20
)

// interrupted measures the agents of the session that started and never
// handed back to the main thread (Esc, a session killed or ended while
// they worked): no PostToolUse recorded them, and what they spent until
// then is in their transcripts; one that ends before its first request
// spent nothing to record. Each ended with the last answer its transcript
// holds. Only as the session ends: at a Stop, a background agent may
// still be at work.
func (h handler) interrupted(events []byte, past usage.Past) []map[string]any {
	var out []map[string]any
	budget, left := int64(interruptedBudget), 0
	for _, st := range agentrun.StartsOf(agentrun.Parse(events), h.session) {
		if past.Measured[st.AgentID] || h.transcriptOf(st) == "" {
			continue
		}
		if len(out) == maxInterrupted || budget <= 0 {
			left++
			continue
		}
		if f, ok := h.measureStarted(st, h.transcriptOf(st), st.WorkerID, "interrupted", &budget); ok {
			out = append(out, f)
		}
	}
	if left > 0 {
		h.l.printf("session %s: %d interrupted agents not measured: past %d agents or %d MiB of transcripts", h.session, left, maxInterrupted, interruptedBudget>>20)
	}
	return out
}

// measureStarted is what the agent of start st spent, read from its
// transcript at path within *budget bytes (what it read is taken off),
// ended with the last answer the transcript holds (else now), as a
// usage record of worker with status; ok is false when the transcript
// cannot be read.
func (h handler) measureStarted(st agentrun.Event, path, worker, status string, budget *int64) (map[string]any, bool) {
	sc := h.scanAgent(path, min(*budget, usage.MaxTranscript))
	*budget -= sc.read
	if !sc.ok {
		return nil, false
	}
	end := h.env.Now
	if !sc.Ended.IsZero() {
		end = sc.Ended
	}
	res := usage.AgentResult{ID: st.AgentID, Status: status, At: end, DurationMs: max(end.Sub(st.TS), 0).Milliseconds()}
	return h.measure(worker, st.AgentType, res, sc), true
}

// scanMain reads the session transcript from where the last record left
// it. A transcript shorter than that was rewritten: it is read again from
// its start, counting the turns that ended after the last record (the
// one open then counts again; Claude Code 2.1.328 only appends).
func (h handler) scanMain(past usage.Past) (usage.Main, error) {
	f, err := fsx.OpenRegular(h.pl.SessionTranscript)
	if err != nil {
		return usage.Main{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return usage.Main{}, err
	}
	cur := past.Cursor
	if st.Size() < cur.Offset {
		past.Window.From, cur = maxTime(past.Window.From, past.Last), usage.Cursor{}
	}
	if _, err := f.Seek(cur.Offset, io.SeekStart); err != nil {
		return usage.Main{}, err
	}
	return usage.ScanMain(io.LimitReader(f, usage.MaxTranscript), cur, past.Window, past.StateAt)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
