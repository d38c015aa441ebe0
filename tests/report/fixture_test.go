package reporttest

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// A workflow as a run of /coordinate leaves it, for the page to show: the
// checkpoint from the real commands (through every state of a full
// implementation, a gate approved, ended by the transition into its
// terminal state, no sm-finish), and an event log of the same states
// spread over a few minutes, with n agents: the classifier, research
// waves, a planner, implementation waves with a partial failure and a
// retry, a failing test run and its debug, a rewind, the main thread.
// The agents of a wave start in another order than they were launched
// (as Claude Code starts them), and the classifier's model has no price
// in the project's table. Times are made up so that the bars have a
// shape to look at; the hooks' own records are checked end to end in
// tests/e2e.

// flowstate runs the binary in project, failing the test on a non-zero exit
// unless allowed.
func flowstate(t *testing.T, project string, allowed int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = project
	cmd.Env = testenv.Env(t.TempDir(), "CLAUDE_PROJECT_DIR="+project, "USER=ann")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	code, err := testenv.ExitCode(err)
	if err != nil || code != 0 && code != allowed {
		t.Fatalf("flowstate %v: exit %d: %v %s%s", args, code, err, out, errb.String())
	}
	return string(out)
}

type events struct {
	t0    time.Time
	lines []string
}

func (e *events) add(at float64, kind string, fields map[string]any) {
	f := map[string]any{"ts": e.t0.Add(time.Duration(at * float64(time.Second))).Format(time.RFC3339Nano), "event": kind}
	for k, v := range fields {
		f[k] = v
	}
	b, _ := json.Marshal(f)
	e.lines = append(e.lines, string(b))
}

func tokens(in, out, read, write int) map[string]any {
	return map[string]any{"input_tokens": in, "output_tokens": out, "cache_read_tokens": read, "cache_write_tokens": write}
}

// fixture makes workflow id in project with n worker agents and returns
// the number of agents the page must show (the workers and the classifier).
func fixture(t *testing.T, project, id string, n int) int {
	t.Helper()
	flowstate(t, project, 0, "sm-init", "--workflow", id, "--description", "Add an audit log to every admin action", "--command", "coordinate",
		"--scope", "full-implementation", "--gate", "implement=Approve the plan")
	for _, s := range []string{"research", "plan", "implement"} {
		flowstate(t, project, 6, "--workflow", id, "sm-transition", s)
	}
	flowstate(t, project, 0, "--workflow", id, "approve", "--note", "looks right")
	for _, s := range []string{"test", "document", "complete"} {
		flowstate(t, project, 0, "--workflow", id, "sm-transition", s)
	}
	writeFile(t, filepath.Join(project, ".claude", "flowstate.json"),
		`{"prices": {"currency": "USD", "per_million_tokens": {"claude-opus-5-5": {"input": 15, "output": 75, "cache_read": 1.5, "cache_write": 18.75}}}}`)

	rng := rand.New(rand.NewSource(int64(n)))
	ev := &events{t0: time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)}
	spec := filepath.Join(".flowstate", "specs", id)
	var workers []map[string]any
	agents, seq := 0, 0
	// run adds one agent of kind in state, launched at start, started
	// after delay, stopped at end, recorded as its worker's status; its
	// report is written for the page to link.
	run := func(kind, worker, sub string, start, delay, end float64, status string, scale int) {
		seq++
		agents++
		agentID := fmt.Sprintf("a%04d", seq)
		ev.add(start, "agent_launch", map[string]any{"session": "s1", "agent_type": kind, "worker_id": worker})
		ev.add(start+delay, "agent_start", map[string]any{"session": "s1", "agent_id": agentID, "agent_type": kind})
		ev.add(end, "agent_stop", map[string]any{"session": "s1", "agent_id": agentID, "agent_type": kind, "worker_id": worker})
		ev.add(end+0.1, "agent_usage", map[string]any{"session": "s1", "agent_id": agentID, "agent_type": kind, "worker_id": worker,
			"model": "claude-opus-5-5", "usage": tokens(scale*(800+rng.Intn(900)), scale*(1500+rng.Intn(4000)), scale*(20000+rng.Intn(60000)), scale*(1000+rng.Intn(3000))),
			"requests": 3 + rng.Intn(12), "tool_uses": 2 + rng.Intn(14), "duration_ms": int((end - start) * 1000), "status": "completed", "source": "transcript"})
		ev.add(end+0.5, "worker", map[string]any{"state": "x", "worker_id": worker, "status": status})
		out := filepath.Join(spec, sub, worker+".md")
		rec := map[string]any{"worker_id": worker, "status": status, "output_path": out}
		if status == "failed" {
			rec["error"] = "no report at " + out
		} else {
			writeFile(t, filepath.Join(project, out), "# "+worker+"\n")
		}
		workers = append(workers, rec)
	}
	// wave runs k workers of kind side by side, launched together at
	// start and started in the reverse order, each taking about dur
	// seconds; it returns when the last one stopped.
	wave := func(kind, prefix, sub string, first, k int, start, dur float64, failed map[int]bool) float64 {
		last := start
		for i := 0; i < k; i++ {
			s := start + float64(i)*0.01
			delay := 0.3 + float64(k-1-i)*0.4
			e := s + delay + dur*(0.6+0.8*rng.Float64())
			st := "completed"
			if failed[first+i] {
				st = "failed"
			}
			run(kind, fmt.Sprintf("%s_%d", prefix, first+i), sub, s, delay, e, st, 1)
			last = max(last, e)
		}
		return last
	}
	research := max(2, n*3/10)
	implement := max(0, n-research-4)
	ev.add(0, "init", nil)
	agents++
	ev.add(9, "agent_usage", map[string]any{"session": "s1", "agent_id": "classifier", "agent_type": "workflow-classifier", "model": "claude-haiku-5-5",
		"usage": tokens(1200, 300, 8000, 900), "requests": 2, "tool_uses": 1, "duration_ms": 6500, "status": "completed", "source": "transcript"})
	ev.add(10, "transition", map[string]any{"from": "initialize", "to": "research", "reason": "classified"})
	at := 11.0
	for first := 1; first <= research; first += 10 { // waves of at most ten researchers
		at = wave("research-specialist", "research", "reports", first, min(10, research-first+1), at, 50, nil) + 2
	}
	ev.add(at, "transition", map[string]any{"from": "research", "to": "plan"})
	end := at + 40
	if n >= 3 {
		run("plan-architect", "plan_1", "plans", at+1, 0.3, end, "completed", 2)
	}
	ev.add(end+1, "gate", map[string]any{"state": "implement", "from": "plan", "message": "Approve the plan"})
	ev.add(end+150, "approve", map[string]any{"state": "implement", "from": "plan", "note": "looks right", "by": "ann"})
	ev.add(end+150, "transition", map[string]any{"from": "plan", "to": "implement", "reason": "approved by ann"})
	at = end + 151
	if implement > 0 {
		failed := map[int]bool{3: true}
		for first := 1; first <= implement; first += 12 {
			at = wave("implementation-executor", "implement", "summaries", first, min(12, implement-first+1), at, 70, failed) + 2
		}
		// The failed one is run again and delivers.
		run("implementation-executor", "implement_3", "summaries", at, 0.3, at+45, "completed", 1)
		at += 47
	}
	ev.add(at, "transition", map[string]any{"from": "implement", "to": "test"})
	if n >= 3 {
		run("test-specialist", "test_1", "tests", at+1, 0.3, at+30, "completed", 1)
	}
	ev.add(at+31, "error", map[string]any{"state": "test", "error": "2 tests failed: TestAuditLog, TestAdminDelete"})
	ev.add(at+32, "retry", map[string]any{"state": "test", "retry": 1, "max": 2})
	ev.add(at+33, "transition", map[string]any{"from": "test", "to": "debug"})
	ev.add(at+70, "rewind", map[string]any{"from": "debug", "to": "test", "states": []string{"test", "debug"}, "reason": "debug found a wrong fixture", "by": "ann"})
	at += 71
	if n >= 3 {
		run("test-specialist", "test_1", "tests", at, 0.3, at+35, "completed", 1)
	}
	ev.add(at+36, "transition", map[string]any{"from": "test", "to": "document"})
	if n >= 3 {
		run("doc-writer", "document_1", "docs", at+37, 0.3, at+60, "completed", 1)
	}
	// The transition into complete ends the run; the main thread's usage
	// is recorded after it, at its turn's end.
	ev.add(at+61, "transition", map[string]any{"from": "document", "to": "complete"})
	for _, s := range []string{"research", "plan", "implement", "test", "document"} {
		ev.add(at+63.5, "main_usage", map[string]any{"session": "s1", "state": s, "model": "claude-opus-5-5", "usage": tokens(400, 2500, 60000, 3000), "requests": 8})
	}

	b, _ := json.Marshal(map[string]any{"workers": workers})
	flowstate(t, project, 0, "--workflow", id, "checkpoint-set", "supervisor_state.coordinator", string(b))
	if implement > 0 {
		flowstate(t, project, 0, "--workflow", id, "checkpoint-set", "phase_data.implement.partial_failures", `["implement_3"]`)
	}
	writeFile(t, filepath.Join(project, ".claude", "state", "workflows", id, "events.jsonl"), strings.Join(ev.lines, "\n")+"\n")
	return agents
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
