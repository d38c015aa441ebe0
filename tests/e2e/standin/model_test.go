package standin

import (
	"encoding/json"
	"fmt"
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

// TestDecideWorkerFollowsItsBrief: a worker whose prompt names a file to
// read first reads it, then writes what the template of its format
// section shows, each <...> filled in (in JSON, as JSON text); without
// a template, or when the Read fails, its persona's own file.
func TestDecideWorkerFollowsItsBrief(t *testing.T) {
	const prompt = "Topic: src/a \"b\".go\nRead first: .flowstate/specs/1/briefs/triage-analyst.md\nWrite your result to: .flowstate/specs/1/analyses/001.json\nReturn exactly: REPORT_CREATED: 001.json"
	const brief = "# Brief: analyse\n\n## Format\n\n```json\n{\n  \"file\": \"<file>\",\n  \"severity\": \"low\"\n}\n```\n"
	first := decide(subagent("triage-analyst", "You analyse.", prompt))
	if len(first.Tools) != 1 || first.Tools[0].Name != "Read" || first.Tools[0].Input.(readInput).FilePath != "/p/.flowstate/specs/1/briefs/triage-analyst.md" {
		t.Fatalf("first turn = %+v, want the Read of the brief", first)
	}
	got := decide(subagent("triage-analyst", "You analyse.", prompt, read(numbered(brief), false)))
	if w := got.Tools[0].Input.(writeInput); got.Tools[0].Name != "Write" || w.Content != "{\n  \"file\": \"file of src/a \\\"b\\\".go\",\n  \"severity\": \"low\"\n}\n" {
		t.Errorf("write after the brief = %+v", got.Tools[0])
	}
	for _, r := range []toolCall{read("File does not exist.", true), read(numbered("# Brief: analyse\n\n## Read first\n\n- a.md\n"), false)} {
		got := decide(subagent("triage-analyst", "You analyse.", prompt, r))
		if w := got.Tools[0].Input.(writeInput); !strings.HasPrefix(w.Content, `{"written_by": "triage-analyst"`) {
			t.Errorf("write after %q = %q, want the persona's own", r.Result, w.Content)
		}
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

// A command shaped like /coordinate: a classifier, then phases with a
// verify after each, and a sub-supervisor's section reached only by a
// jump.
const phasedCommand = "## start\n\n```bash\nflowstate start\n```\n\n" +
	"## classify\n\n```task\nTask {\n  subagent_type: flowstate:workflow-classifier\n  description: C\n  run_in_background: false\n" +
	"  prompt: |\n    Write the classification JSON to: ${CLASSIFICATION_PATH}\n}\n```\n\n" +
	"## classified\n\n```bash\nflowstate start --classified\n```\n\n" +
	"## phase\n\n```bash\nflowstate phase-plan\n```\n\n" +
	"## work\n\n```task\nTask {\n  subagent_type: flowstate:${AGENT}\n  description: W\n  for_each: i in 1..${WORKER_COUNT}\n" +
	"  run_in_background: false\n  prompt: |\n    Topic: ${TOPIC_i}\n}\n```\n\n" +
	"## verify\n\n```bash\nflowstate phase-verify\n```\n\n" +
	"## supervised\n\n```task\nTask {\n  subagent_type: flowstate:${SUPERVISOR}\n  description: S\n  run_in_background: false\n" +
	"  prompt: |\n    STATE=${STATE}\n}\n```\n\n```bash\nflowstate phase-verify --after-supervisor\n```\n"

func phased(skip Skip, calls ...toolCall) thread {
	return thread{Conv: conversation{Program: phasedCommand, Cwd: "/p", Session: "s1", Calls: calls},
		Knobs: Knobs{Drift: Drift{SkipBlock: skip}}}
}

// ran is the command of a turn that runs one bash block, else "".
func ran(t turn) string {
	if len(t.Tools) != 1 || t.Tools[0].Name != "Bash" {
		return ""
	}
	return t.Tools[0].Input.(bashInput).Command
}

// TestDecideSkipBlock: the main thread passes over the one block the
// drift aims at, once, and goes on with the next step in document order;
// a task block whose agent no block named is passed over too.
func TestDecideSkipBlock(t *testing.T) {
	start := bash("CLASSIFICATION_PATH=c.json\nNEXT=classify", false)
	planned := bash("AGENT=research-specialist\nWORKER_COUNT=1\nTOPIC_1=Auth\nNEXT=work", false)
	supervised := bash("STATE=research\nSUPERVISOR=research-sub-supervisor\nNEXT=supervised", false)
	afterAgents, verify := Skip{AfterAgents: true}, Skip{Containing: "phase-verify"}
	cases := []struct {
		name string
		th   thread
		want string // the block the next turn runs
	}{
		{"not yet aimed at", phased(afterAgents), "flowstate start"},
		{"after the classifier, the classified start is skipped", phased(afterAgents, start, agent()), "flowstate phase-plan"},
		{"only once", phased(afterAgents, start, agent(), planned, agent()), "flowstate phase-verify"},
		{"the first verify is skipped, the unnamed supervisor passed over", phased(verify, start, agent(), planned, agent()), "flowstate phase-verify --after-supervisor"},
		{"a block that does not match runs", phased(Skip{AfterAgents: true, Containing: "phase-verify"}, start, agent()), "flowstate start --classified"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := decide(c.th); ran(got) != c.want {
				t.Errorf("decide = %+v, want a Bash call of %q", got, c.want)
			}
		})
	}

	// Sent back by the Stop hook to the skipped block, the model runs it.
	th := phased(verify, start, agent(), supervised, agent())
	if got := decide(th); got.Text != "STATE=research\nSUPERVISOR=research-sub-supervisor\nNEXT=supervised" {
		t.Fatalf("after skipping the last block: %+v, want the last output as the final answer", got)
	}
	th.Conv.Feedback = []feedback{{AfterCalls: 4, Text: `flowstate: not done. Continue at its "## verify" section.`}}
	if got := decide(th); ran(got) != "flowstate phase-verify" {
		t.Errorf("sent back to verify: %+v, want the verify block run", got)
	}

	// Another session skipped its block: this one skips none.
	th = phased(afterAgents, start, agent())
	var asked []string
	th.Skip = func(session, block string) bool { asked = append(asked, session+": "+block); return false }
	if got := decide(th); ran(got) != "flowstate start --classified" || len(asked) != 1 || asked[0] != "s1: flowstate start --classified" {
		t.Errorf("skip refused: %+v (asked %q), want the classified start run", got, asked)
	}

	// A compacted conversation and a subagent skip nothing.
	th = phased(Skip{Containing: "phase-plan"})
	th.Conv.Compacted, th.Conv.Context = true, `continue at "## phase"`
	if got := decide(th); ran(got) != "flowstate phase-plan" {
		t.Errorf("compacted: %+v, want phase-plan run", got)
	}
	sub := subagent("research-sub-supervisor", "```bash\nflowstate phase-plan --supervisor\n```\n", "STATE=research")
	sub.Knobs.Drift.SkipBlock = Skip{Containing: "phase-plan"}
	if got := decide(sub); ran(got) != "flowstate phase-plan --supervisor" {
		t.Errorf("subagent: %+v, want its block run", got)
	}
}

// TestDecideGeneralPurpose: every Agent call goes out as general-purpose,
// its prompt prefixed with the agent file to follow; run_in_background
// is a switch of its own.
func TestDecideGeneralPurpose(t *testing.T) {
	start := bash("CLASSIFICATION_PATH=c.json\nNEXT=classify", false)
	for _, d := range []Drift{{GeneralPurpose: true}, {GeneralPurpose: true, Background: true}} {
		th := phased(Skip{}, start)
		th.Knobs = Knobs{Drift: d, PluginDir: "/plug"}
		got := decide(th)
		if len(got.Tools) != 1 || got.Tools[0].Name != "Agent" {
			t.Fatalf("%s: %+v, want one Agent call", d, got)
		}
		inv := got.Tools[0].Input.(invocation)
		want := "Read and follow the instructions in /plug/agents/workflow-classifier.md\n\nWrite the classification JSON to: c.json"
		if inv.SubagentType != "general-purpose" || inv.Prompt != want {
			t.Errorf("%s: invocation %+v, want general-purpose with prompt %q", d, inv, want)
		}
		if foreground := inv.Background != nil && !*inv.Background; foreground == d.Background {
			t.Errorf("%s: run_in_background %v", d, inv.Background)
		}
	}
	// A project's agent (no plugin prefix) is in .claude/agents.
	th := thread{Conv: conversation{Program: "```task\nTask {\n  subagent_type: doc-writer\n  description: D\n  prompt: Document.\n}\n```\n", Cwd: "/p"},
		Knobs: Knobs{Drift: Drift{GeneralPurpose: true}}}
	if inv := decide(th).Tools[0].Input.(invocation); inv.Prompt != "Read and follow the instructions in /p/.claude/agents/doc-writer.md\n\nDocument." {
		t.Errorf("project agent: %+v", inv)
	}
	// Without the plugin's directory no plugin agent's file can be named.
	th = phased(Skip{}, start)
	th.Knobs.Drift.GeneralPurpose = true
	if got := decide(th); !strings.Contains(got.Text, "Knobs.PluginDir") {
		t.Errorf("no PluginDir: %+v", got)
	}
}

// gpSystem stands for Claude Code's own system prompt of a general-purpose
// agent: a subagent that follows a file never runs what it says.
const gpSystem = "You are an agent for Claude Code.\n\n```bash\necho never\n```\n"

const researcherFile = "---\nname: research-specialist\ndescription: Researches\ntools: Read, Write, Bash\n---\nYou research one topic.\n\n```bash\nflowstate check\n```\n"

// numbered is a file as Claude Code's Read tool returns it.
func numbered(file string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(file, "\n"), "\n") {
		fmt.Fprintf(&b, "%d\t%s\n", i+1, l)
	}
	return b.String() + "\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n"
}

// follower is a general-purpose subagent told to follow file, with its
// calls so far; its persona is what the server would give it.
func follower(file, task string, calls ...toolCall) thread {
	c := conversation{Subagent: true, Program: gpSystem, Prompt: followPrefix + file + "\n\n" + task, Cwd: "/p", Calls: calls}
	c.follow()
	return thread{Conv: c, Agent: c.followedPersona(), TestRun: func() int { return 1 }}
}

func read(result string, isError bool) toolCall {
	return toolCall{Name: "Read", Result: result, IsError: isError, HasResult: true}
}

// TestDecideFollowsAgentFile: a general-purpose subagent reads the file
// its prompt names, then follows its prompt and that file as the agent
// the file names.
func TestDecideFollowsAgentFile(t *testing.T) {
	const file = "/plug/agents/research-specialist.md"
	first := decide(follower(file, workerPrompt))
	if len(first.Tools) != 1 || first.Tools[0].Name != "Read" || first.Tools[0].Input.(readInput).FilePath != file {
		t.Fatalf("first turn = %+v, want a Read of %s", first, file)
	}
	th := follower(file, workerPrompt, read(numbered(researcherFile), false))
	if th.Agent != "research-specialist" || th.Conv.Program != "You research one topic.\n\n```bash\nflowstate check\n```\n" {
		t.Fatalf("after the Read: persona %q, program %q", th.Agent, th.Conv.Program)
	}
	w := decide(th).Tools[0].Input.(writeInput)
	if w.FilePath != "/p/.claude/specs/1/reports/001.md" || !strings.HasPrefix(w.Content, "# Auth\n\n## Executive Summary\n") {
		t.Errorf("write = %+v, want the research report", w)
	}
	written := toolCall{Name: "Write", HasResult: true}
	if got := decide(follower(file, workerPrompt, read(numbered(researcherFile), false), written)); ran(got) != "flowstate check" {
		t.Errorf("after the write: %+v, want the file's bash block", got)
	}
	done := decide(follower(file, workerPrompt, read(numbered(researcherFile), false), written, bash("ok", false)))
	if done.Text != "REPORT_CREATED: .claude/specs/1/reports/001.md" {
		t.Errorf("final = %q", done.Text)
	}
	if got := decide(follower(file, workerPrompt, read("File does not exist.", true))); !strings.HasPrefix(got.Text, "Stopped: the Read step failed") {
		t.Errorf("unreadable file: %+v, want it to stop", got)
	}
}

// TestFollowedPersonaIsTheFiles: the persona comes from the file the
// agent read (its frontmatter name), not from the agent type or the
// file's name, so a test-specialist's file makes test results.
func TestFollowedPersonaIsTheFiles(t *testing.T) {
	const file = "/plug/agents/tester.md"
	if th := follower(file, "x"); th.Agent != "tester" {
		t.Errorf("before the Read: persona %q, want the file's name", th.Agent)
	}
	th := follower(file, "Write the results to: /p/tests/results.json", read(numbered("---\nname: test-specialist\n---\nTest.\n"), false))
	if th.Agent != "test-specialist" {
		t.Fatalf("persona %q, want test-specialist", th.Agent)
	}
	if w := decide(th).Tools[0].Input.(writeInput); !strings.Contains(w.Content, `"tests_failed": 0`) {
		t.Errorf("write = %+v, want test results", w)
	}
}

// TestDecideGeneralPurposeSupervisor: a sub-supervisor that follows its
// file launches its workers as general-purpose too.
func TestDecideGeneralPurposeSupervisor(t *testing.T) {
	supervisor := "---\nname: research-sub-supervisor\n---\n```task\nTask {\n  subagent_type: flowstate:research-specialist\n  description: R\n" +
		"  for_each: i in 1..${COUNT}\n  prompt: |\n    Topic: ${TOPIC_i}\n}\n```\n"
	th := follower("/plug/agents/research-sub-supervisor.md", "COUNT=2\nTOPIC_1=A\nTOPIC_2=B", read(numbered(supervisor), false))
	th.Knobs = Knobs{Drift: Drift{GeneralPurpose: true}, PluginDir: "/plug"}
	got := decide(th)
	if len(got.Tools) != 2 {
		t.Fatalf("%+v, want two Agent calls", got)
	}
	for i, u := range got.Tools {
		inv := u.Input.(invocation)
		want := fmt.Sprintf("Read and follow the instructions in /plug/agents/research-specialist.md\n\nTopic: %c", 'A'+i)
		if inv.SubagentType != "general-purpose" || inv.Prompt != want {
			t.Errorf("worker %d: %+v, want general-purpose with prompt %q", i+1, inv, want)
		}
	}
}

func TestFollowedAgent(t *testing.T) {
	cases := []struct{ prompt, file, rest string }{
		{"Read and follow the instructions in /a/agents/x.md\n\nTopic: A", "/a/agents/x.md", "Topic: A"},
		{"Read and follow behavioral guidelines from:\n  /a/.claude/agents/y.md\n\nTopic: B\nmore", "/a/.claude/agents/y.md", "Topic: B\nmore"},
		{"Read and follow: `.claude/agents/z.md`", ".claude/agents/z.md", ""},
		{"Topic: A\nRead and follow the instructions in /a/x.md", "", ""},
		{"Read and follow what the user says.\n\nTopic: A", "", ""},
	}
	for _, c := range cases {
		file, rest, ok := FollowedAgent(c.prompt)
		if file != c.file || rest != c.rest || ok != (c.file != "") {
			t.Errorf("FollowedAgent(%q) = %q, %q, %v; want %q, %q", c.prompt, file, rest, ok, c.file, c.rest)
		}
	}
}

func TestFileText(t *testing.T) {
	if got := fileText(numbered("---\nname: x\n\n---\nbody\twith tab\n")); got != "---\nname: x\n\n---\nbody\twith tab\n" {
		t.Errorf("fileText = %q", got)
	}
	if got := fileText("not numbered\n"); got != "not numbered\n" {
		t.Errorf("fileText = %q, want it as it is", got)
	}
}

func TestDriftString(t *testing.T) {
	cases := map[string]Drift{
		"protocol":                       {},
		"skip-after-agents":              {SkipBlock: Skip{AfterAgents: true}},
		"skip-classified":                {SkipBlock: Skip{Containing: "--classified"}},
		"skip-after-agents-phase-verify": {SkipBlock: Skip{AfterAgents: true, Containing: "phase-verify"}},
		"general-purpose":                {GeneralPurpose: true},
		"background+general-purpose":     {GeneralPurpose: true, Background: true},
	}
	for want, d := range cases {
		if got := d.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", d, got, want)
		}
	}
}

// launchCommand is a command with a workflow block between its start and
// the block after it, and the section a refused launch goes to.
const launchCommand = "## start\n\n```bash\nflowstate phase-start --launch\n```\n\n## launch\n\n```workflow\nWorkflow {\n  name: ${WORKFLOW_NAME}\n  args: ${WORKFLOW_ARGS}\n}\n```\n\n" +
	"## launched\n\n```bash\nflowstate phase-launched\n```\n\n## steps\n\n```bash\nflowstate phase-launched --steps\n```\n"

func workflowCall(result string, isError bool) toolCall {
	return toolCall{Name: "Workflow", Result: result, IsError: isError, HasResult: true}
}

// TestDecideLaunch: a workflow block is one Workflow call with the
// printed name and args (an object); the model waits for the
// notification, then runs the next block; a refusal that names a section
// goes there, one that says the tool is not available goes to ## steps.
func TestDecideLaunch(t *testing.T) {
	printed := bash("WORKFLOW_NAME=flowstate:coordinate-flow\nWORKFLOW_ARGS={\"workflow\":\"w1\",\"launch\":\"0a1b2c3d\"}\nNEXT=launch", false)
	launched := workflowCall("Workflow launched in background. Task ID: w1", false)
	th := func(notified []int, calls ...toolCall) thread {
		return thread{Conv: conversation{Program: launchCommand, Cwd: "/p", Calls: calls, Notified: notified}}
	}
	got := decide(th(nil, printed))
	if len(got.Tools) != 1 || got.Tools[0].Name != "Workflow" {
		t.Fatalf("after the launch was printed: %+v", got)
	}
	in, _ := json.Marshal(got.Tools[0].Input)
	if string(in) != `{"args":{"launch":"0a1b2c3d","workflow":"w1"},"name":"flowstate:coordinate-flow"}` {
		t.Errorf("the Workflow call = %s", in)
	}
	if got := decide(th(nil, printed, launched)); len(got.Tools) != 0 || got.Text != waiting {
		t.Errorf("launched, no notification yet: %+v, want it to wait", got)
	}
	for _, at := range []int{2, 3} {
		if got := decide(th([]int{at}, printed, launched)); len(got.Tools) != 1 || got.Tools[0].Input.(bashInput).Command != "flowstate phase-launched" {
			t.Errorf("notified after %d calls: %+v, want the block after the launch", at, got)
		}
	}
	refused := workflowCall(`PreToolUse:Workflow hook error: flowstate: the args are not the ones printed; run the "## launched" block again`, true)
	if got := decide(th(nil, printed, refused)); len(got.Tools) != 1 || got.Tools[0].Input.(bashInput).Command != "flowstate phase-launched" {
		t.Errorf("a launch refused naming ## launched: %+v", got)
	}
	off := workflowCall("<tool_use_error>Error: No such tool available: Workflow. Workflow is disabled for this session</tool_use_error>", true)
	if got := decide(th(nil, printed, off)); len(got.Tools) != 1 || got.Tools[0].Input.(bashInput).Command != "flowstate phase-launched --steps" {
		t.Errorf("the Workflow tool off: %+v, want ## steps", got)
	}
	other := workflowCall("Review dynamic workflow before running", true)
	if got := decide(th(nil, printed, other)); len(got.Tools) != 0 || !strings.Contains(got.Text, "Stopped:") {
		t.Errorf("a launch the person refused: %+v, want the command to stop", got)
	}
	garbled := thread{Conv: conversation{Program: launchCommand, Calls: []toolCall{printed}}, Knobs: Knobs{Drift: Drift{ParaphraseArgs: true}},
		Paraphrase: func() bool { return true }}
	in, _ = json.Marshal(decide(garbled).Tools[0].Input)
	if string(in) != `{"args":{"launch":"0a1b","workflow":"w1"},"name":"flowstate:coordinate-flow"}` {
		t.Errorf("the paraphrased Workflow call = %s", in)
	}
}

// TestWorkflowAgent: a subagent a workflow script started is known by
// Claude Code's frame around its task, which it follows unframed; its
// body is what comes before Claude Code's workflow note; offered
// StructuredOutput, it ends with that call.
func TestWorkflowAgent(t *testing.T) {
	body := "You are one step. Call StructuredOutput at once."
	req := request{
		System: json.RawMessage(`[{"type":"text","text":"x-anthropic-billing-header: cc_is_subagent=true;"},{"type":"text","text":"You are a Claude agent."},` +
			`{"type":"text","text":` + jsonString(body+"\n\n---\n\nNOTE: You are running inside a workflow script. Your final text response is returned verbatim.\n\nMessages from the agent that launched you — ...") + `}]`),
		Messages: []message{{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"<system-reminder>git</system-reminder>"},{"type":"text","text":` +
			jsonString("[Workflow harness — computed task] The task text below was computed at runtime by a workflow script. The computed task text follows:\n  FLOWSTATE_STEP kind=plan workflow=w1 launch=0a\n  second line") + `}]`)}},
	}
	req.Tools = append(req.Tools, struct {
		Name string `json:"name"`
	}{"StructuredOutput"})
	c := parseConversation(req)
	if !c.Workflow || c.Program != body || c.Prompt != "FLOWSTATE_STEP kind=plan workflow=w1 launch=0a\nsecond line" {
		t.Fatalf("parsed %+v", c)
	}
	got := decide(thread{Conv: c, Agent: "flowstate-step"})
	in, _ := json.Marshal(got.Tools)
	if len(got.Tools) != 1 || string(in) != `[{"Name":"StructuredOutput","Input":{"step":"FLOWSTATE_STEP kind=plan workflow=w1 launch=0a"}}]` {
		t.Errorf("the step agent answered %s %q", in, got.Text)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestImplementerEdits: an implementer with Knobs.Edits writes its
// report, reads the file to edit, and changes the first of its old texts
// the Read result holds, in its working directory (a worktree's).
func TestImplementerEdits(t *testing.T) {
	knobs := Knobs{Edits: []Edit{{Topic: "Phase 2:", Path: "routes.txt", Pairs: []string{"alpha: todo", "alpha: phase 2", "alpha: phase 1", "alpha: phase 1 and 2"}}}}
	conv := conversation{Subagent: true, Cwd: "/p/.claude/worktrees/agent-a1",
		Prompt: "Topic: Phase 2: Core\nWrite your result to: s/2.md\nReturn exactly: REPORT_CREATED: s/2.md"}
	write := toolCall{Name: "Write", Result: "ok", HasResult: true}
	read := toolCall{Name: "Read", Result: "1\talpha: phase 1\n2\tbeta: todo\n", HasResult: true}
	edit := toolCall{Name: "Edit", Result: "ok", HasResult: true}
	for _, c := range []struct {
		calls []toolCall
		want  string
	}{
		{nil, `Write {"file_path":"/p/.claude/worktrees/agent-a1/s/2.md"`},
		{[]toolCall{write}, `Read {"file_path":"/p/.claude/worktrees/agent-a1/routes.txt"}`},
		{[]toolCall{write, read}, `Edit {"file_path":"/p/.claude/worktrees/agent-a1/routes.txt","old_string":"alpha: phase 1","new_string":"alpha: phase 1 and 2"}`},
		{[]toolCall{write, read, edit}, "REPORT_CREATED: s/2.md"},
	} {
		conv.Calls = c.calls
		got := decide(thread{Conv: conv, Agent: "implementation-executor", Knobs: knobs})
		text := got.Text
		for _, u := range got.Tools {
			b, _ := json.Marshal(u.Input)
			text = u.Name + " " + string(b)
		}
		if !strings.HasPrefix(text, c.want) {
			t.Errorf("after %d calls: %s, want %s", len(c.calls), text, c.want)
		}
	}
}
