package plugin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/lint"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/internal/playback"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// flowstateBin is the binary the bash blocks find on PATH, built once
// with scripts/build (what ships).
var flowstateBin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &flowstateBin) }

// world is a scratch project in which a command runs the way Claude Code
// runs it: every bash block a new `bash -c` process, with flowstate on
// PATH and the session id in the environment, and fake agents that write
// what the prompt asks for.
type world struct {
	t       *testing.T
	Dir     string
	Env     []string
	Agents  fakeAgents
	Invoked []invocation // every agent invocation, in order
	Batches [][]invocation
	Blocks  int // bash blocks run
	// OwnKeys are keys a user's command prints itself (KEY for KEY_i),
	// which no flowstate command lists.
	OwnKeys map[string]bool
	trees   int // worktrees made for isolated agents
	// Stderr is what the bash blocks that succeeded printed for people.
	Stderr string
}

type invocation struct{ Agent, Prompt, Isolation string }

// fakeAgents steer what the fake agents write.
type fakeAgents struct {
	Classification string // the classifier's JSON
	FailTestRuns   int    // test-results files reporting a failing test, first N runs
	Missing        string // a worker whose prompt contains this (or one of its |-separated parts) writes nothing
	// During runs while a worker works, before it writes: what a person
	// does from another shell meanwhile.
	During func(inv invocation)
	// Plan is what the plan-architect writes, a diamond of four phases
	// when empty.
	Plan string
	// Work is what a worker does in its working directory (its
	// worktree, when it is isolated), besides writing its file: edit
	// the person's source.
	Work func(inv invocation, dir string)
}

func newWorld(t *testing.T, agents fakeAgents) *world {
	t.Helper()
	w := &world{t: t, Dir: t.TempDir(), Agents: agents}
	if err := os.Mkdir(filepath.Join(w.Dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A clean environment: none of the runner's CLAUDE_* or FLOWSTATE_*
	// variables reach the blocks.
	w.Env = testenv.Env(t.TempDir(),
		"PATH="+filepath.Dir(flowstateBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CLAUDE_CODE_SESSION_ID=session-"+strconv.Itoa(len(t.Name())))
	return w
}

// flowstate runs the binary directly, for assertions.
func (w *world) flowstate(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(flowstateBin, args...)
	cmd.Dir, cmd.Env = w.Dir, w.Env
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("flowstate %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// command runs commands/<name>.md with the user's arguments, as Claude
// Code expands it: $ARGUMENTS replaced by the raw text. It returns the
// last bash block's output (a command's answer) and the error that
// stopped the command, if one did.
func (w *world) command(name, arguments string) (string, error) {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "commands", name+".md"))
	if err != nil {
		w.t.Fatal(err)
	}
	d, err := parseDoc("commands/"+name+".md", strings.ReplaceAll(string(b), "$ARGUMENTS", arguments))
	if err != nil {
		w.t.Fatal(err)
	}
	return w.follow(d, map[string]string{})
}

// allPrinted is every key a flowstate command prints for the blocks
// after it (lint.Printers); KEY_i stands for KEY_1, KEY_2, ....
var allPrinted = func() map[string]bool {
	keys := map[string]bool{"NEXT": true}
	for _, p := range lint.Printers() {
		for _, k := range p.Keys {
			keys[strings.TrimSuffix(k, "_i")] = true
		}
	}
	return keys
}()

var indexedKey = regexp.MustCompile(`_[0-9]+$`)

// follow runs a document's steps per the command protocol
// (playback.Runner), values seeded with env, and returns the last bash
// block's output.
func (w *world) follow(d doc, env map[string]string) (string, error) {
	w.t.Helper()
	r := playback.NewRunner(d.Path, d.Doc, w.Dir, w.Env, w.agents)
	r.Values = env
	r.MaxSteps = 200
	r.AfterBash = func(s step, out string) {
		w.Stderr += r.Stderr
		for _, kv := range protocol.KeyValues(out) {
			if base := indexedKey.ReplaceAllString(kv[0], ""); !allPrinted[base] && !allPrinted[kv[0]] && !w.OwnKeys[base] {
				w.t.Errorf("%s:%d printed %s, which lint.Printers does not list: add it where the step's keys are listed (lib/orchestrate/prints.go)", d.Path, s.Line, kv[0])
			}
		}
	}
	err := r.Run()
	for _, tr := range r.Trace {
		if strings.HasSuffix(tr, "/bash") {
			w.Blocks++
		}
	}
	return r.Stdout, err
}

// agents plays the Agent calls of one task block: all are invoked (one
// message), then each agent runs.
func (w *world) agents(calls []protocol.Invocation) ([]string, error) {
	w.t.Helper()
	var batch []invocation
	for _, c := range calls {
		batch = append(batch, invocation{Agent: strings.TrimPrefix(c.SubagentType, "flowstate:"), Prompt: c.Prompt, Isolation: c.Isolation})
	}
	w.Invoked = append(w.Invoked, batch...)
	w.Batches = append(w.Batches, batch)
	var answers []string
	for _, inv := range batch {
		answers = append(answers, w.agent(inv))
	}
	return answers, nil
}

// agent plays one agent and returns its answer: a supervisor follows its
// own file, with the prompt's KEY=VALUE lines as its first values, and
// answers with the signal its last block printed; a worker writes the
// file its prompt names, in its format, and answers that it did.
func (w *world) agent(inv invocation) string {
	w.t.Helper()
	if strings.HasSuffix(inv.Agent, "sub-supervisor") {
		env := map[string]string{}
		for _, kv := range protocol.KeyValues(inv.Prompt) {
			env[kv[0]] = kv[1]
		}
		out, err := w.follow(loadDoc(w.t, "agents/"+inv.Agent+".md"), env)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "SUPERVISOR_") {
			w.t.Fatalf("%s did not end with its signal: %v\n%s", inv.Agent, err, out)
		}
		return strings.TrimSpace(out)
	}
	targets := protocol.WriteTargets(inv.Prompt)
	if len(targets) != 1 {
		w.t.Fatalf("%s: the prompt must name one file to write, names %q:\n%s", inv.Agent, targets, inv.Prompt)
	}
	if w.Agents.During != nil {
		w.Agents.During(inv)
	}
	dir := w.Dir // an agent starts where the session does
	if inv.Isolation == "worktree" {
		dir = w.worktree()
		defer w.keepOrRemove(dir)
	}
	if w.Agents.Work != nil {
		w.Agents.Work(inv, dir)
	}
	target := targets[0]
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		w.t.Fatal(err)
	}
	content := w.Agents.content(inv, target)
	if brief, err := playback.Brief(w.Dir, inv.Prompt); err == nil && !ownFormat[inv.Agent] {
		// Any other agent writes what its brief's template shows.
		topic, _, _ := strings.Cut(strings.TrimPrefix(inv.Prompt, "Topic: "), "\n")
		if file, ok := playback.Filled(brief, topic); ok {
			content = file
		}
	}
	answer := ""
	for _, line := range strings.Split(inv.Prompt, "\n") {
		if want, ok := protocol.ReturnLine(line); ok {
			answer = want
		}
	}
	if inv.Agent == "workflow-classifier" {
		answer = content // the classifier answers with its JSON
	}
	for _, m := range strings.Split(w.Agents.Missing, "|") {
		if m != "" && strings.Contains(inv.Prompt, m) {
			return answer // says it did, and did not
		}
	}
	if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return answer
}

// ownFormat are the agents whose files the fake agents write as
// content says, with what a template cannot say (failing tests, a
// plan's waves, the files an executor changed).
var ownFormat = map[string]bool{"workflow-classifier": true, "plan-architect": true, "test-specialist": true, "implementation-executor": true}

func (a *fakeAgents) content(inv invocation, path string) string {
	topic, _, _ := strings.Cut(strings.TrimPrefix(inv.Prompt, "Topic: "), "\n")
	switch inv.Agent {
	case "workflow-classifier":
		return a.Classification
	case "plan-architect":
		if a.Plan != "" {
			return a.Plan
		}
		return "# Plan\n\n### Phase 1: Foundation\ndependencies: []\n\n### Phase 2: Core\ndependencies: [1]\n\n" +
			"### Phase 3: Interfaces\ndependencies: [1]\n\n### Phase 4: Integration\ndependencies: [2, 3]\n"
	case "test-specialist":
		run := regexp.MustCompile(`/r([0-9]+)_`).FindStringSubmatch(path)[1]
		if n, _ := strconv.Atoi(run); n <= a.FailTestRuns {
			return `{"total_tests": 4, "tests_passed": 3, "tests_failed": 1, "failures": [{"name": "TestLogin", "message": "expected 200, got 500"}]}`
		}
		return `{"total_tests": 4, "tests_passed": 4, "tests_failed": 0, "coverage_percent": 85}`
	}
	report := fmt.Sprintf("# %s\n\n## Executive Summary\n\nThe %s looked at %s.\n\n## Key Findings\n\n- %s is handled in one place.\n", topic, inv.Agent, topic, topic)
	if inv.Agent == "implementation-executor" {
		report += "\n## Files Modified\n\n- src/" + strings.ToLower(strings.Fields(topic)[0]) + ".go\n"
	}
	return report
}

// brief is what the worker of inv reads first: the file its prompt's
// "Read first:" line names, shared by its phase's workers.
func (w *world) brief(inv invocation) string {
	w.t.Helper()
	b, err := playback.Brief(w.Dir, inv.Prompt)
	if err != nil {
		w.t.Fatalf("%s: %v", inv.Agent, err)
	}
	return b
}

// read reads a file of the project.
func (w *world) read(rel string) []byte {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Dir, rel))
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// agentsInvoked counts invocations per agent.
func (w *world) agentsInvoked() map[string]int {
	n := map[string]int{}
	for _, inv := range w.Invoked {
		n[inv.Agent]++
	}
	return n
}
