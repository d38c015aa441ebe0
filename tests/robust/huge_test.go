package robust

import (
	"bufio"
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
	plantJSON(t, filepath.Join(p.wfDir("w1"), "checkpoint.json"), "state_machine.classification.research_topics", func(w *bufio.Writer) {
		w.WriteString("[")
		for i := range 200_000 {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"topic %d"`, i)
		}
		w.WriteString("]")
	})
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
	size := plantJSON(t, filepath.Join(p.wfDir("w1"), "checkpoint.json"), "phase_data.research", func(w *bufio.Writer) {
		w.WriteString("{")
		for i := range 100_000 {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"k%d":{"a":[1,2,3],"s":"%s"}`, i, strings.Repeat("x", 50))
		}
		w.WriteString("}")
	})
	old := time.Now().Add(-7 * 24 * time.Hour)
	for i := range 3000 {
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
	t.Logf("session start over 3,000 old pointers and records to a %d MB checkpoint: %v", size>>20, r.Elapsed.Round(time.Millisecond))
	// The workflow is active: its pointers stay, for resume.
	if entries, _ := os.ReadDir(filepath.Join(p.stateDir(), "sessions")); len(entries) != 3000 {
		t.Errorf("%d pointers left, want all 3000", len(entries))
	}
}

// plantJSON sets the value at path (sjson syntax) of the JSON file file
// to what write streams, without holding it in memory: the children's
// peak RSS, which other tests bound, counts the test process's own peak
// (Go starts them with vfork), so the test must stay small. It returns
// the file's new size.
func plantJSON(t *testing.T, file, path string, write func(w *bufio.Writer)) int64 {
	t.Helper()
	const mark = "\x00planted\x00"
	doc, err := os.ReadFile(file)
	if err == nil {
		doc, err = sjson.SetBytes(doc, path, mark)
	}
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(mark)
	before, after, ok := strings.Cut(string(doc), string(quoted))
	if !ok {
		t.Fatalf("no mark in %s", doc)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(before)
	write(w)
	w.WriteString(after)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestHugeMachineCostsLinearTime: a workflow's machine and checkpoint
// can name 100,000 states (a custom machine a repository carries, a
// transition table and completed states to match). Writing and reading
// it costs time in proportion: checking every state against the table
// with slices.Contains, in the checkpoint's validation, the machine's
// state list, status and the compat functions, took minutes per command.
func TestHugeMachineCostsLinearTime(t *testing.T) {
	const n = 100_000
	p := newProject(t)
	p.setenv("FLOWSTATE_WORKFLOW=w1")
	machine := filepath.Join(p.Root, "tmp", "machine.json")
	f, err := os.Create(machine)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"name":"big","initial":"s0","transitions":{"s0":["s1"`)
	for i := 2; i < n; i++ { // the initial state may go anywhere
		fmt.Fprintf(w, `,"s%d"`, i)
	}
	w.WriteString("]")
	for i := 1; i < n; i++ {
		next := ""
		if i+1 < n {
			next = fmt.Sprintf(`"s%d"`, i+1)
		}
		fmt.Fprintf(w, `,"s%d":[%s]`, i, next)
	}
	fmt.Fprintf(w, `},"scopes":{"all":{"terminal":"s%d","route":["s0"`, n-1)
	for i := 1; i < n; i++ {
		fmt.Fprintf(w, `,"s%d"`, i)
	}
	w.WriteString("]}}}")
	if err := w.Flush(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	r := p.runWithin(args("sm-init", "--workflow", "w1", "--description", "d", "--command", "c", "--scope", "all", "--machine", machine))
	if r.Code != 0 {
		t.Fatalf("sm-init: %s", r)
	}
	plantJSON(t, filepath.Join(p.wfDir("w1"), "checkpoint.json"), "state_machine.completed_states", func(w *bufio.Writer) {
		w.WriteString(`["s0"`)
		for i := 2; i < n-1; i++ {
			fmt.Fprintf(w, `,"s%d"`, i)
		}
		w.WriteString("]")
	})
	for _, c := range [][]string{{"sm-transition", "s1"}, {"checkpoint-set", "phase_data.x.n", "1"}, {"status"}, {"sm-status"}, {"state-load"}, {"sm-transition", "nowhere"}} {
		r := p.runWithin(args(c...))
		if r.Code != 0 && r.Code != 3 {
			t.Errorf("%s: %s", c[0], r)
		}
		t.Logf("%s: exit %d in %v", c[0], r.Code, r.Elapsed.Round(time.Millisecond))
	}
	r = bashProject(p).run(call{Args: []string{"-c", `eval "$("$FS" compat)" && load_workflow_state w1 && echo "$COMPLETED_STATES_COUNT"`}, Env: []string{"FS=" + bin, "FLOWSTATE_BIN=" + bin}})
	if r.Code != 0 || r.Elapsed > hangLimit {
		t.Errorf("compat load_workflow_state: %s after %v", r, r.Elapsed)
	}
}
