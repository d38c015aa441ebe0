package hooktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// What a workflow spent, recorded as Claude Code 2.1.328 hands it over:
// PostToolUse of an Agent call carries the agent's id and its last
// request's usage, the agent's transcript (beside the session's) every
// request's; the session's transcript holds the main thread's. The
// transcripts are lib/usage's testdata, written by the real CLI, whose
// k-th distinct message has k input, 2k output, 100k cache-read and 10k
// cache-write tokens.

// claudeHome lays out a session's transcripts as Claude Code does:
// <dir>/<session>.jsonl and <dir>/<session>/subagents/agent-<id>.jsonl,
// the agents' copied from lib/usage/testdata; it returns the session's
// transcript path.
func claudeHome(t *testing.T, session string, agents map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-p")
	for id, name := range agents {
		copyFile(t, filepath.Join(testenv.RepoRoot(), "lib", "usage", "testdata", name), filepath.Join(dir, session, "subagents", "agent-"+id+".jsonl"), 0o600)
	}
	return filepath.Join(dir, session+".jsonl")
}

// agentReturned is PostToolUse of an Agent call whose agent id ran.
func agentReturned(session, project, transcript, agentType, agentID, prompt string) string {
	return payload(map[string]any{
		"session_id": session, "cwd": project, "transcript_path": transcript, "hook_event_name": "PostToolUse", "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": agentType, "description": "d", "prompt": prompt, "run_in_background": false},
		"tool_response": map[string]any{"status": "completed", "prompt": prompt, "agentId": agentID, "agentType": agentType,
			"resolvedModel": "claude-opus-5-5", "totalDurationMs": 4321, "totalTokens": 460, "totalToolUseCount": 3,
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 300, "cache_creation_input_tokens": 40}},
	})
}

func usageOf(e gjson.Result) string { return e.Get("usage|@ugly").String() }

func TestPostToolUseRecordsWhatEachAgentSpent(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	transcript := claudeHome(t, "s1", map[string]string{"a1": "agent-supervisor.jsonl", "a2": "agent-unfinished.jsonl"})
	prompt := "Write the research report to: " + output
	for _, p := range []string{
		agentReturned("s1", project, transcript, "flowstate:research-specialist", "a1", prompt),
		// The final answer not written yet: the last request stands in.
		agentReturned("s1", project, transcript, "flowstate:research-specialist", "a2", prompt),
		// No transcript at all: the last request is all that is known.
		agentReturned("s1", project, transcript, "flowstate:research-specialist", "a3", "no artifact named"),
		// Not the workflow's agent (a general-purpose one with a prompt the
		// workflow did not hand out), not this workflow's session, not an
		// Agent call.
		agentReturned("s1", project, transcript, "general-purpose", "x", "Look around the repository"),
		agentReturned("s2", project, transcript, "flowstate:research-specialist", "y", prompt),
		payload(map[string]any{"session_id": "s1", "cwd": project, "tool_name": "Bash", "tool_response": map[string]any{"stdout": "x"}}),
	} {
		if r := hook(t, project, "", "post-tool-use", p); r.code != 0 || r.stdout != "" {
			t.Fatalf("post-tool-use: %+v", r)
		}
	}
	got := events(t, project, id, "agent_usage")
	want := []string{
		`a1 research_1 claude-opus-5-5 3 3 transcript {"input_tokens":6,"output_tokens":12,"cache_read_tokens":600,"cache_write_tokens":60}`,
		`a2 research_1 claude-opus-5-5 2 3 transcript {"input_tokens":101,"output_tokens":22,"cache_read_tokens":400,"cache_write_tokens":50}`,
		`a3  claude-opus-5-5 1 3 last-request {"input_tokens":100,"output_tokens":20,"cache_read_tokens":300,"cache_write_tokens":40}`,
	}
	if len(got) != len(want) {
		t.Fatalf("recorded %d agent_usage events, want %d: %v", len(got), len(want), got)
	}
	for i, e := range got {
		line := strings.Join([]string{e.Get("agent_id").String(), e.Get("worker_id").String(), e.Get("model").String(),
			e.Get("requests").String(), e.Get("tool_uses").String(), e.Get("source").String(), usageOf(e)}, " ")
		if line != want[i] || e.Get("duration_ms").Int() != 4321 || e.Get("session").String() != "s1" || e.Get("agent_type").String() != "research-specialist" {
			t.Errorf("event %d: %s\n got %s\nwant %s", i, e.Raw, line, want[i])
		}
	}
}

// line is one transcript line at ts: a prompt, or an answer of n tokens
// of each kind, or the classifier's result.
func promptLine(ts time.Time) string {
	return payload(map[string]any{"type": "user", "timestamp": ts.UTC().Format(time.RFC3339Nano), "isSidechain": false,
		"message": map[string]any{"role": "user", "content": "/flowstate:workflow-resume"}})
}

func answerLine(ts time.Time, id string, n int) string {
	return payload(map[string]any{"type": "assistant", "timestamp": ts.UTC().Format(time.RFC3339Nano), "isSidechain": false,
		"message": map[string]any{"id": id, "model": "claude-opus-5-5", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "ok"}},
			"usage": map[string]any{"input_tokens": n, "output_tokens": n, "cache_read_input_tokens": n, "cache_creation_input_tokens": n}}})
}

func classifierResult(ts time.Time, agentID string) string {
	return payload(map[string]any{"type": "user", "timestamp": ts.UTC().Format(time.RFC3339Nano), "isSidechain": false,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "done"}}},
		"toolUseResult": map[string]any{"status": "completed", "agentId": agentID, "agentType": "flowstate:workflow-classifier", "prompt": "Classify",
			"resolvedModel": "claude-haiku-5-5", "totalDurationMs": 900, "totalToolUseCount": 1,
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
}

func TestStopRecordsWhatTheMainThreadSpent(t *testing.T) {
	project := newProject(t, "p")
	id, _ := started(t, project, "s1", "research-only")
	transcript := claudeHome(t, "s1", map[string]string{"c1": "agent-supervisor.jsonl"})
	// The turn that started the workflow: the real CLI's main thread, six
	// answers (k(21) in all), then the classifier's result.
	main, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "lib", "usage", "testdata", "main.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// The turn that created the workflow answered after it was created:
	// its lines get times from now on, in their order.
	var shifted []string
	for i, line := range strings.Split(strings.TrimSpace(string(main)), "\n") {
		if gjson.Get(line, "timestamp").Exists() {
			line, _ = sjson.Set(line, "timestamp", now.Add(time.Duration(i)*time.Millisecond).UTC().Format(time.RFC3339Nano))
		}
		shifted = append(shifted, line)
	}
	appendLines(t, transcript, strings.Join(shifted, "\n"), classifierResult(now.Add(100*time.Millisecond), "c1"))
	stopped := func() {
		t.Helper()
		r := hook(t, project, "", "stop", payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript, "stop_hook_active": false}))
		if r.code != 0 {
			t.Fatal(r)
		}
	}
	stopped()
	stopped() // nothing new: nothing recorded twice
	mains := events(t, project, id, "main_usage")
	if len(mains) != 1 || usageOf(mains[0]) != `{"input_tokens":21,"output_tokens":42,"cache_read_tokens":2100,"cache_write_tokens":210}` ||
		mains[0].Get("requests").Int() != 6 || mains[0].Get("state").String() != "research" || mains[0].Get("model").String() != "stand-in" {
		t.Fatalf("main_usage events: %v", mains)
	}
	agents := events(t, project, id, "agent_usage")
	if len(agents) != 1 || agents[0].Get("agent_id").String() != "c1" || agents[0].Get("agent_type").String() != "workflow-classifier" ||
		agents[0].Get("model").String() != "claude-haiku-5-5" || agents[0].Get("requests").Int() != 3 {
		t.Fatalf("the classifier, seen only in the main transcript, is not recorded once: %v", agents)
	}
	if ended := agents[0].Get("ended").Time(); !ended.Equal(now.Add(100 * time.Millisecond).UTC()) {
		t.Errorf("the classifier ended %v, when its result came (%v), not when Stop read it", ended, now.Add(100*time.Millisecond))
	}
	// The next turn, in research: only it is added.
	appendLines(t, transcript, promptLine(now.Add(time.Second)), answerLine(now.Add(2*time.Second), "m2", 7))
	stopped()
	mains = events(t, project, id, "main_usage")
	if len(mains) != 2 || mains[1].Get("state").String() != "research" || usageOf(mains[1]) != `{"input_tokens":7,"output_tokens":7,"cache_read_tokens":7,"cache_write_tokens":7}` {
		t.Fatalf("after the next turn: %v", mains)
	}
	if n := len(events(t, project, id, "agent_usage")); n != 1 {
		t.Errorf("the classifier recorded %d times", n)
	}
	// A finished workflow gets nothing of the turns after it.
	flowstate(t, project, "s1", "sm-finish")
	appendLines(t, transcript, promptLine(now.Add(time.Hour)), answerLine(now.Add(time.Hour+time.Second), "m3", 1000))
	stopped()
	if n := len(events(t, project, id, "main_usage")); n != 2 {
		t.Errorf("a turn after the finish was recorded: %d main_usage events", n)
	}
}

// A workflow resumed in another session: that session's turns count from
// its first record in the workflow, and both sessions' spend stays.
func TestMainThreadAcrossSessions(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	now := time.Now()
	transcripts := map[string]string{}
	for _, s := range []string{"s1", "s2"} {
		transcripts[s] = claudeHome(t, s, nil)
	}
	stopped := func(session string) {
		t.Helper()
		if r := hook(t, project, "", "stop", payload(map[string]any{"session_id": session, "cwd": project, "transcript_path": transcripts[session]})); r.code != 0 {
			t.Fatal(r)
		}
	}
	// The turn that created the workflow: begun before, answered after.
	appendLines(t, transcripts["s1"], promptLine(now.Add(-time.Minute)), answerLine(now.Add(time.Millisecond), "a", 3))
	stopped("s1")
	// s2 did something else first, then took the workflow over.
	appendLines(t, transcripts["s2"], promptLine(now.Add(-time.Hour)), answerLine(now.Add(-time.Hour+time.Second), "x", 1000))
	flowstate(t, project, "s2", "resume", id)
	appendLines(t, transcripts["s2"], promptLine(now.Add(time.Second)))
	if r := hook(t, project, "", "pre-tool-use", payload(map[string]any{"session_id": "s2", "cwd": project, "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "flowstate:research-specialist", "prompt": "Write the research report to: " + output}})); r.code != 0 {
		t.Fatal(r)
	}
	appendLines(t, transcripts["s2"], answerLine(now.Add(2*time.Second), "b", 5))
	stopped("s2")
	var got []string
	for _, e := range events(t, project, id, "main_usage") {
		got = append(got, e.Get("session").String()+":"+e.Get("usage.input_tokens").String())
	}
	if strings.Join(got, " ") != "s1:3 s2:5" {
		t.Errorf("main_usage %v, want s1's 3 and s2's 5 (not its turn from before it took the workflow)", got)
	}
}

// TestSessionEndRecordsInterruptedAgents: an agent whose Agent call never
// returned (Esc, the session ended under it) has no PostToolUse; as the
// session ends, what its transcript shows it spent is recorded, once. A
// Stop before that leaves it alone: a background agent may be at work.
func TestSessionEndRecordsInterruptedAgents(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	transcript := claudeHome(t, "s1", map[string]string{"a1": "agent-supervisor.jsonl", "a2": "agent-unfinished.jsonl"})
	for _, a := range []string{"a1", "a2"} {
		start := payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript,
			"agent_id": a, "agent_type": "flowstate:research-specialist"})
		if r := hook(t, project, "", "subagent-start", start); r.code != 0 {
			t.Fatalf("subagent-start %s: %+v", a, r)
		}
	}
	returned := agentReturned("s1", project, transcript, "flowstate:research-specialist", "a1", "Write the research report to: "+output)
	if r := hook(t, project, "", "post-tool-use", returned); r.code != 0 {
		t.Fatalf("post-tool-use: %+v", r)
	}
	stop := payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript, "stop_hook_active": false})
	hook(t, project, "", "stop", stop)
	if got := events(t, project, id, "agent_usage"); len(got) != 1 {
		t.Fatalf("after a Stop: %d agent_usage events, want a1's alone: %v", len(got), got)
	}
	end := payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	for range 2 {
		if r := hook(t, project, "", "session-end", end); r.code != 0 {
			t.Fatalf("session-end: %+v", r)
		}
	}
	got := events(t, project, id, "agent_usage")
	if len(got) != 2 {
		t.Fatalf("after the session ended: %d agent_usage events, want a1's and a2's: %v", len(got), got)
	}
	a2 := got[1]
	if a2.Get("agent_id").String() != "a2" || a2.Get("status").String() != "interrupted" || a2.Get("source").String() != "transcript" ||
		a2.Get("agent_type").String() != "research-specialist" || a2.Get("requests").Int() != 1 ||
		usageOf(a2) != `{"input_tokens":1,"output_tokens":2,"cache_read_tokens":100,"cache_write_tokens":10}` {
		t.Errorf("the interrupted agent: %s", a2.Raw)
	}
	// It ended with the last answer its transcript holds, not as the
	// session ended.
	if ended := a2.Get("ended").String(); ended != "2026-11-27T07:32:55.333Z" {
		t.Errorf("the interrupted agent ended %s, want its transcript's last answer, 2026-11-27T07:32:55.333Z", ended)
	}
}

// TestSessionEndMeasuresBoundedInterruptedAgents: a session that leaves
// more agents than SessionEnd may read in its budget gets the first ones
// measured, and the log says how many were not.
func TestSessionEndMeasuresBoundedInterruptedAgents(t *testing.T) {
	project := newProject(t, "p")
	id, _ := started(t, project, "s1", "research-only")
	const n = 33 // one past the hook's maxInterrupted
	agents := map[string]string{}
	for i := range n {
		agents[fmt.Sprintf("a%d", i)] = "agent-unfinished.jsonl"
	}
	transcript := claudeHome(t, "s1", agents)
	for i := range n {
		start := payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript,
			"agent_id": fmt.Sprintf("a%d", i), "agent_type": "flowstate:research-specialist"})
		if r := hook(t, project, "", "subagent-start", start); r.code != 0 {
			t.Fatalf("subagent-start: %+v", r)
		}
	}
	end := payload(map[string]any{"session_id": "s1", "cwd": project, "transcript_path": transcript, "hook_event_name": "SessionEnd", "reason": "other"})
	if r := hook(t, project, "", "session-end", end); r.code != 0 {
		t.Fatalf("session-end: %+v", r)
	}
	if got := events(t, project, id, "agent_usage"); len(got) != n-1 || got[0].Get("agent_id").String() != "a0" {
		t.Errorf("%d agent_usage events, want %d, the first a0's", len(got), n-1)
	}
	if log, _ := os.ReadFile(filepath.Join(project, ".claude", "state", "hooks.log")); !strings.Contains(string(log), "1 interrupted agents not measured") {
		t.Errorf("the log does not say an agent was left: %s", log)
	}
}

// appendLines appends lines to the transcript at path, as Claude Code
// does, creating it and its directory if need be.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}
