package standin

import (
	"encoding/json"
	"strings"
	"testing"
)

const mainCommand = "## start\n\n```bash\nflowstate init\n```\n\n## skipped\n\n```bash\necho skipped\n```\n\n" +
	"## research\n\n```task\nTask {\n  subagent_type: flowstate:research-specialist\n  description: Research ${TOPIC_i}\n" +
	"  for_each: i in 1..${N}\n  prompt: |\n    Research the topic: ${TOPIC_i}\n    Write the report to: ${P_i}\n}\n```\n\n" +
	"```bash\nflowstate verify\n```\n\n```bash\necho never\n```\n"

func bash(result string, isError bool) toolCall {
	return toolCall{Name: "Bash", Result: result, IsError: isError, HasResult: true}
}

func agent() toolCall { return toolCall{Name: "Agent", Result: "REPORT_CREATED: x", HasResult: true} }

func mainThread(calls ...toolCall) thread {
	return thread{Conv: conversation{Program: mainCommand, Cwd: "/p", Calls: calls}}
}

func TestDecideMainThread(t *testing.T) {
	planned := bash("N=2\nTOPIC_1=Auth\nP_1=r/1.md\nTOPIC_2=Cache\nP_2=r/2.md\nNEXT=research", false)
	cases := []struct {
		name  string
		th    thread
		tools []string // tool names of the next turn
		text  string   // or its final text contains this
	}{
		{"first block", mainThread(), []string{"Bash"}, ""},
		{"NEXT jumps to the task, fanned out in one message", mainThread(planned), []string{"Agent", "Agent"}, ""},
		{"after the agents, the next block", mainThread(planned, agent(), agent()), []string{"Bash"}, ""},
		{"NEXT=done ends with the last output", mainThread(planned, agent(), agent(), bash("OK=1\nNEXT=done", false)), nil, "OK=1"},
		{"a failed block stops, quoting it", mainThread(bash("Exit code 2\nflowstate: no workflow", true)), nil, "flowstate: no workflow"},
		{"unknown section", mainThread(bash("NEXT=nowhere", false)), nil, `no section "## nowhere"`},
		{"history that does not fit", mainThread(agent()), nil, "lost its place"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(c.th)
			var names []string
			for _, u := range got.Tools {
				names = append(names, u.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.tools, ",") || !strings.Contains(got.Text, c.text) {
				t.Errorf("decide = tools %v text %q; want tools %v text containing %q", names, got.Text, c.tools, c.text)
			}
		})
	}
}

func TestDecideFanOutPrompts(t *testing.T) {
	got := decide(mainThread(bash("N=1\nTOPIC_1=Auth\nP_1=r/1.md\nNEXT=research", false)))
	inv := got.Tools[0].Input.(invocation)
	if inv.SubagentType != "flowstate:research-specialist" || inv.Prompt != "Research the topic: Auth\nWrite the report to: r/1.md" {
		t.Errorf("invocation = %+v", inv)
	}
}

const workerPrompt = "Research the topic: Auth\nWrite the report to: .claude/specs/1/reports/001.md\nReturn exactly: REPORT_CREATED: .claude/specs/1/reports/001.md"

func subagent(persona, body, prompt string, calls ...toolCall) thread {
	return thread{
		Conv:    conversation{Subagent: true, Program: body, Prompt: prompt, Cwd: "/p", Calls: calls},
		Agent:   persona,
		TestRun: func() int { return 1 },
	}
}

func TestDecideWorker(t *testing.T) {
	first := decide(subagent("research-specialist", "You research.", workerPrompt))
	if len(first.Tools) != 1 || first.Tools[0].Name != "Write" {
		t.Fatalf("first turn = %+v, want one Write", first)
	}
	w := first.Tools[0].Input.(writeInput)
	if w.FilePath != "/p/.claude/specs/1/reports/001.md" || !strings.HasPrefix(w.Content, "# Auth\n\n## Executive Summary\n") {
		t.Errorf("write = %+v", w)
	}
	done := decide(subagent("research-specialist", "You research.", workerPrompt, toolCall{Name: "Write", HasResult: true}))
	if done.Text != "REPORT_CREATED: .claude/specs/1/reports/001.md" {
		t.Errorf("final = %q", done.Text)
	}
}

func TestDecideMissingWorker(t *testing.T) {
	th := subagent("research-specialist", "You research.", workerPrompt)
	th.Knobs.MissingWorker = "Auth"
	if got := decide(th); len(got.Tools) != 0 || !strings.HasPrefix(got.Text, "REPORT_CREATED:") {
		t.Errorf("decide = %+v, want the signal with no write", got)
	}
}

func TestDecideSupervisor(t *testing.T) {
	body := "```task\nTask {\n  subagent_type: flowstate:research-specialist\n  description: R\n  for_each: i in 1..${COUNT}\n" +
		"  prompt: |\n    Research the topic: ${TOPIC_i}\n}\n```\n\n```bash\nflowstate supervisor done\n```\n"
	prompt := "COUNT=2\nTOPIC_1=A\nTOPIC_2=B\nReturn exactly: SUPERVISOR_COMPLETE: {}"
	if got := decide(subagent("research-sub-supervisor", body, prompt)); len(got.Tools) != 2 {
		t.Fatalf("first turn = %+v, want two Agent calls from the prompt's KEY=VALUE lines", got)
	}
	printed := `SUPERVISOR_COMPLETE: {"reports":["a","b"]}`
	got := decide(subagent("research-sub-supervisor", body, prompt, agent(), agent(), bash("SUMMARY=x\n"+printed, false)))
	if got.Text != printed {
		t.Errorf("final = %q, want the signal the bash block printed", got.Text)
	}
}

func TestDecideTestResults(t *testing.T) {
	prompt := "Write the results to: /p/tests/results.json"
	for run, wantFailed := range map[int]int{1: 1, 2: 0} {
		th := subagent("test-specialist", "", prompt)
		th.Knobs.FailTestRuns = 1
		th.TestRun = func() int { return run }
		var res struct {
			Failed int `json:"tests_failed"`
		}
		w := decide(th).Tools[0].Input.(writeInput)
		if err := json.Unmarshal([]byte(w.Content), &res); err != nil || res.Failed != wantFailed {
			t.Errorf("run %d: %s (%v), want tests_failed %d", run, w.Content, err, wantFailed)
		}
	}
}

func TestDecideClassifier(t *testing.T) {
	th := subagent("workflow-classifier", "Classify.", "Classify: add login")
	th.Knobs.Classification = &Classification{WorkflowType: "research-only", ResearchTopics: []string{"A", "B"}}
	var c Classification
	if err := json.Unmarshal([]byte(decide(th).Text), &c); err != nil || c.WorkflowType != "research-only" || len(c.ResearchTopics) != 2 {
		t.Errorf("classification = %+v, %v", c, err)
	}
}

func TestDecideImplementationSummary(t *testing.T) {
	prompt := "Implement phase 1.\nCreate the file: src/auth/login.go\nWrite the summary to: .claude/specs/1/summaries/phase1.md"
	th := subagent("implementation-executor", "", prompt)
	src := decide(th).Tools[0].Input.(writeInput)
	if src.FilePath != "/p/src/auth/login.go" || !strings.Contains(src.Content, "package auth") {
		t.Errorf("source = %+v", src)
	}
	sum := decide(subagent("implementation-executor", "", prompt, toolCall{Name: "Write", HasResult: true})).Tools[0].Input.(writeInput)
	if !strings.Contains(sum.Content, "## Files Modified\n\n- src/auth/login.go\n") {
		t.Errorf("summary = %s", sum.Content)
	}
}

// TestDecideSelfWrite: after the agents, a main thread with the SelfWrite
// drift writes the missing worker's report itself, and goes on to its
// next block whether the write was refused or not.
func TestDecideSelfWrite(t *testing.T) {
	planned := bash("N=2\nTOPIC_1=Auth\nP_1=r/1.md\nTOPIC_2=Cache\nP_2=r/2.md\nNEXT=research", false)
	th := func(calls ...toolCall) thread {
		x := mainThread(calls...)
		x.Knobs = Knobs{MissingWorker: "Cache", Drift: Drift{SelfWrite: true}}
		return x
	}
	got := decide(th(planned, agent(), agent()))
	if len(got.Tools) != 1 || got.Tools[0].Name != "Write" {
		t.Fatalf("after the agents: %+v, want one Write", got)
	}
	if w := got.Tools[0].Input.(writeInput); w.FilePath != "/p/r/2.md" || !strings.HasPrefix(w.Content, "# Cache\n") {
		t.Errorf("write = %+v, want Cache's report at /p/r/2.md", w)
	}
	for _, refused := range []bool{true, false} {
		write := toolCall{Name: "Write", Result: "PreToolUse:Write hook error: no", IsError: refused, HasResult: true}
		if got := decide(th(planned, agent(), agent(), write)); len(got.Tools) != 1 || got.Tools[0].Name != "Bash" {
			t.Errorf("after the write (refused %v): %+v, want the next block", refused, got)
		}
	}
	x := th(planned, agent(), agent())
	x.Knobs.MissingWorker = ""
	if got := decide(x); len(got.Tools) != 1 || got.Tools[0].Name != "Bash" {
		t.Errorf("every worker delivered: %+v, want the next block", got)
	}
}
