package robust

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"
)

// TestHooksStayFastOnHugeCheckpoints: a checkpoint that is valid but
// lists 200,000 research topics (so 200,000 workers) and an agent prompt
// near the hook payload's 1 MiB bound: the agent hooks, which look for
// the worker the prompt is for, finish in bounded time and memory. The
// search once compared every line of the prompt with every worker's
// path, which took minutes.
func TestHooksStayFastOnHugeCheckpoints(t *testing.T) {
	p := newProject(t)
	p.setenv("CLAUDE_CODE_SESSION_ID=s1")
	p.ok("sm-init", "--workflow", "w1", "--description", "d", "--command", "coordinate", "--scope", "research-only")
	p.ok("--workflow", "w1", "sm-transition", "research")
	path := filepath.Join(p.wfDir("w1"), "checkpoint.json")
	topics := make([]string, 200_000)
	for i := range topics {
		topics[i] = fmt.Sprintf("topic %d", i)
	}
	doc, err := sjson.SetBytes(p.readFile(path), "state_machine.classification.research_topics", topics)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	prompt := strings.Repeat("Read .flowstate/specs/w1/reports/ first\n", 10_000)
	payload, err := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": p.Dir, "tool_name": "Agent", "agent_id": "a1",
		"agent_type": "flowstate:research-specialist", "last_assistant_message": prompt,
		"tool_input": map[string]any{"subagent_type": "flowstate:research-specialist", "prompt": prompt},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"pre-tool-use", "subagent-stop", "stop"} {
		r := hook(p, event, string(payload))
		if r.Code != 0 || r.MaxRSSKB > 256<<10 {
			t.Errorf("hook %s: %s, peak RSS %d MB", event, r, r.MaxRSSKB>>10)
		}
		t.Logf("hook %s: %v, peak RSS %d MB", event, r.Elapsed.Round(1e6), r.MaxRSSKB>>10)
	}
}

// TestSessionStartSweepIsBounded: a cloned project (an archive keeps
// mtimes) can carry thousands of old session pointers, all naming one
// active workflow whose checkpoint is megabytes. Session start judges
// each pointer, but reads that workflow once: it once read it per
// pointer, for minutes, past Claude Code's hook timeout.
func TestSessionStartSweepIsBounded(t *testing.T) {
	p := newProject(t)
	p.ok("sm-init", "--workflow", "w1", "--description", "d", "--command", "coordinate", "--scope", "research-only")
	path := filepath.Join(p.wfDir("w1"), "checkpoint.json")
	big := map[string]any{}
	for i := range 100_000 {
		big[fmt.Sprintf("k%d", i)] = map[string]any{"a": []int{1, 2, 3}, "s": strings.Repeat("x", 50)}
	}
	doc, err := sjson.SetBytes(p.readFile(path), "phase_data.research", big)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-7 * 24 * time.Hour)
	for i := range 5000 {
		for _, dir := range []string{"sessions", "runs"} {
			f := filepath.Join(p.stateDir(), dir, fmt.Sprintf("s%d", i))
			content := "w1\n"
			if dir == "runs" {
				content = `{"command":"coordinate","workflow":"w1"}` + "\n"
			}
			if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(content), 0o600); err != nil || os.Chtimes(f, old, old) != nil {
				t.Fatal(err)
			}
		}
	}
	r := hook(p, "session-start", `{"session_id":"new","cwd":"`+p.Dir+`"}`)
	if r.Code != 0 {
		t.Fatalf("hook session-start: %s", r)
	}
	t.Logf("session start over 5,000 old pointers and records to a %d MB checkpoint: %v", len(doc)>>20, r.Elapsed.Round(time.Millisecond))
	// The workflow is active: its pointers stay, for resume.
	if entries, _ := os.ReadDir(filepath.Join(p.stateDir(), "sessions")); len(entries) != 5000 {
		t.Errorf("%d pointers left, want all 5000", len(entries))
	}
}
