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

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// flowstateBin is the binary the bash blocks find on PATH, built once
// with scripts/build (what ships).
var flowstateBin string

func TestMain(m *testing.M) {
	var cleanup func()
	flowstateBin, cleanup = testenv.BuildOrExit()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

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
}

type invocation struct{ Agent, Prompt string }

// fakeAgents steer what the fake agents write.
type fakeAgents struct {
	Classification string // the classifier's JSON
	FailTestRuns   int    // test-results files reporting a failing test, first N runs
	Missing        string // a worker whose prompt contains this writes nothing
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
// Code expands it: $ARGUMENTS replaced by the raw text.
func (w *world) command(name, arguments string) (string, error) {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "commands", name+".md"))
	if err != nil {
		w.t.Fatal(err)
	}
	d, err := parseDoc(name, strings.ReplaceAll(string(b), "$ARGUMENTS", arguments))
	if err != nil {
		w.t.Fatal(err)
	}
	return w.follow(d, map[string]string{})
}

var allPrinted = func() map[string]bool {
	keys := map[string]bool{}
	for _, ks := range printedBy {
		for _, k := range ks {
			keys[strings.TrimSuffix(k, "_i")] = true
		}
	}
	return keys
}()

// follow runs a document's steps per the command protocol and returns the
// last bash block's output (a command's answer) or the signal it printed.
func (w *world) follow(d doc, env map[string]string) (string, error) {
	w.t.Helper()
	last := ""
	for pc, guard := 0, 0; pc < len(d.Steps); guard++ {
		if guard > 200 {
			w.t.Fatalf("%s: more than 200 steps; a NEXT loop never ends", d.Path)
		}
		s := d.Steps[pc]
		pc++
		if s.Task != nil {
			w.task(d, s, env)
			continue
		}
		out, err := w.bash(s.Bash)
		if err != nil {
			return out, err
		}
		last = out
		next := ""
		for _, kv := range keyValues(out) {
			env[kv[0]] = kv[1]
			if kv[0] == "NEXT" {
				next = kv[1]
			}
			if base := regexp.MustCompile(`_[0-9]+$`).ReplaceAllString(kv[0], ""); !allPrinted[base] && !allPrinted[kv[0]] {
				w.t.Errorf("%s:%d printed %s, which printedBy in lint_test.go does not list", d.Path, s.Line, kv[0])
			}
		}
		switch target, ok := d.Sections[next]; {
		case next == "":
		case next == "done":
			return last, nil
		case !ok:
			w.t.Fatalf("%s:%d: NEXT=%s names no section", d.Path, s.Line, next)
		default:
			pc = target
		}
	}
	return last, nil
}

// bash runs one block as its own process; stdout is what the protocol reads.
func (w *world) bash(block string) (string, error) {
	w.Blocks++
	cmd := exec.Command("bash", "-c", block)
	cmd.Dir, cmd.Env = w.Dir, w.Env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

var substituteRef = regexp.MustCompile(`\$\{([A-Za-z][A-Za-z0-9_]*)\}`)

// task expands a task block and plays each agent.
func (w *world) task(d doc, s step, env map[string]string) {
	w.t.Helper()
	n := 1
	if s.Task.ForEach != "" {
		count := strings.TrimSuffix(strings.TrimPrefix(s.Task.ForEach, "i in 1..${"), "}")
		var err error
		if n, err = strconv.Atoi(env[count]); err != nil {
			w.t.Fatalf("%s:%d: for_each count %s=%q", d.Path, s.Line, count, env[count])
		}
	}
	var batch []invocation
	for i := 1; i <= n; i++ {
		sub := func(text string) string {
			return substituteRef.ReplaceAllStringFunc(text, func(ref string) string {
				key := strings.Replace(ref[2:len(ref)-1], "_i", "_"+strconv.Itoa(i), 1)
				v, ok := env[key]
				if !ok {
					w.t.Fatalf("%s:%d: ${%s} has no value", d.Path, s.Line, key)
				}
				return v
			})
		}
		inv := invocation{Agent: strings.TrimPrefix(sub(s.Task.SubagentType), "flowstate:"), Prompt: sub(s.Task.Prompt)}
		sub(s.Task.Description)
		batch = append(batch, inv)
		w.Invoked = append(w.Invoked, inv)
	}
	w.Batches = append(w.Batches, batch)
	for _, inv := range batch {
		w.agent(inv)
	}
}

var writeTarget = regexp.MustCompile(`(?m)^Write the [^:\n]* to: (\S+)$`)

// agent plays one agent: a supervisor follows its own file, with the
// prompt's KEY=VALUE lines as its first values; a worker writes the file
// its prompt names, in its format.
func (w *world) agent(inv invocation) {
	w.t.Helper()
	if strings.HasSuffix(inv.Agent, "-sub-supervisor") {
		env := map[string]string{}
		for _, kv := range keyValues(inv.Prompt) {
			env[kv[0]] = kv[1]
		}
		out, err := w.follow(loadDoc(w.t, "agents/"+inv.Agent+".md"), env)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "SUPERVISOR_") {
			w.t.Fatalf("%s did not end with its signal: %v\n%s", inv.Agent, err, out)
		}
		return
	}
	m := writeTarget.FindStringSubmatch(inv.Prompt)
	if m == nil {
		w.t.Fatalf("%s: the prompt names no file to write:\n%s", inv.Agent, inv.Prompt)
	}
	if w.Agents.Missing != "" && strings.Contains(inv.Prompt, w.Agents.Missing) {
		return
	}
	if err := os.WriteFile(m[1], []byte(w.Agents.content(inv, m[1])), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (a *fakeAgents) content(inv invocation, path string) string {
	topic, _, _ := strings.Cut(strings.TrimPrefix(inv.Prompt, "Topic: "), "\n")
	switch inv.Agent {
	case "workflow-classifier":
		return a.Classification
	case "plan-architect":
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

// agentsInvoked counts invocations per agent.
func (w *world) agentsInvoked() map[string]int {
	n := map[string]int{}
	for _, inv := range w.Invoked {
		n[inv.Agent]++
	}
	return n
}
