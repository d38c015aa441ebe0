//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// What a scenario sees of its engine. The steps engine's agents are the
// model's Agent calls, launched by the command's task blocks (through a
// sub-supervisor for a large phase); the workflow engine's are started by
// the workflow's script, each wave between two of its step agents, and
// no sub-supervisor runs: the script runs the waves itself.

// stepAgent is the workflow engine's step agent: it does no work.
const stepAgent = "flowstate-step"

// underEachEngine runs a scenario once on each engine, the protocol
// followed.
func underEachEngine(t *testing.T, scenario func(t *testing.T, m mode)) {
	for _, engine := range []string{stepsEngine, workflowEngine} {
		t.Run(engine, func(t *testing.T) { scenario(t, mode{Engine: engine}) })
	}
}

// onWorkflow reports whether the scenario runs on the workflow engine.
func (s *scenario) onWorkflow() bool { return s.mode.Engine == workflowEngine }

// calls lists the agents the scenario's current stand-in played, in the
// order they were started: the Agent calls of the main thread and of
// sub-supervisors, or the agents a workflow's script started (its step
// agents left out).
func (s *scenario) calls() []agentCall {
	out := agentCalls(s.Model)
	for _, a := range s.Model.WorkflowAgents() {
		if a.Persona != stepAgent {
			out = append(out, agentCall{Caller: "workflow", Persona: a.Persona, Prompt: a.Prompt, Message: a.Seq})
		}
	}
	return out
}

// workersOf is calls without the sub-supervisors: the workers.
func workersOf(calls []agentCall) []agentCall {
	var out []agentCall
	for _, c := range calls {
		if c.Persona != "sub-supervisor" {
			out = append(out, c)
		}
	}
	return out
}

// expectAgents checks how often each persona was started (exactly the
// personas in want, no others); on the workflow engine no sub-supervisor
// is, whatever want says.
func (s *scenario) expectAgents(want map[string]int) {
	s.t.Helper()
	if s.onWorkflow() {
		delete(want, "sub-supervisor")
	}
	got := map[string]int{}
	for _, c := range s.calls() {
		got[c.Persona]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		s.t.Errorf("agents started %v, want %v", got, want)
	}
}

// batches are the sizes of the waves persona's agents were started in:
// on the steps engine the assistant messages of their Agent calls, on
// the workflow engine the waves between two steps of the script.
func (s *scenario) batches(persona string) []int {
	if !s.onWorkflow() {
		return batches(s.Model, persona)
	}
	var sizes []int
	open := false
	for _, a := range s.Model.WorkflowAgents() {
		switch {
		case a.Persona == stepAgent:
			open = false
		case a.Persona != persona:
		case open:
			sizes[len(sizes)-1]++
		default:
			sizes, open = append(sizes, 1), true
		}
	}
	return sizes
}

// coordination is how flowstate records a phase coordinated as want on
// the steps engine (flat, hierarchical): on the workflow engine its
// script runs every phase.
func (s *scenario) coordination(want string) string {
	if s.onWorkflow() {
		return "workflow"
	}
	return want
}

// expectCalls checks, when the model follows the protocol, how many tool
// calls its main thread has made so far, on each engine: on the steps
// engine a bash block and a task block per phase is the budget (the task
// block's calls are one per worker it starts); on the workflow engine the
// start, one Workflow call per launch and the block after it.
func (s *scenario) expectCalls(onSteps, onWorkflow int) {
	s.t.Helper()
	if s.mode.Drift != (standin.Drift{}) {
		return
	}
	want := onSteps
	if s.onWorkflow() {
		want = onWorkflow
	}
	if got := s.Model.Context().Calls; got != want {
		s.t.Errorf("the main thread made %d tool calls, want %d", got, want)
	}
}

// expectEngine checks that the scenario's commands ran on its engine:
// on the workflow engine, every command session that ran a phase did it
// through Workflow calls and no Agent call; on the steps engine, no
// Workflow call launched anything (a model that skips a block and reads
// on reaches the launch section, whose call Claude Code refuses: the
// tool is off).
func (s *scenario) expectEngine() {
	s.t.Helper()
	s.mu.Lock()
	models := append([]*standin.Server(nil), s.models...)
	s.mu.Unlock()
	launches, agents := 0, 0
	for _, m := range models {
		for _, r := range m.MainResults("Workflow") {
			if !r.IsError {
				launches++
			}
		}
		agents += len(m.WorkflowAgents())
	}
	switch {
	case s.onWorkflow() && agents > 0 && launches == 0:
		s.t.Errorf("workflow agents ran, and no Workflow call was made")
	case !s.onWorkflow() && (launches > 0 || agents > 0):
		s.t.Errorf("the Workflow tool is off, yet the main thread made %d Workflow calls and %d workflow agents ran", launches, agents)
	}
}

// expectArgsRefused checks the ParaphraseArgs drift: the garbled launch
// was refused by flowstate's hook, naming the block to run again.
func (s *scenario) expectArgsRefused(models []*standin.Server) {
	s.t.Helper()
	refused := 0
	for _, m := range models {
		for _, r := range m.MainResults("Workflow") {
			if r.IsError && strings.Contains(r.Text, "not the ones flowstate printed") && strings.Contains(r.Text, `"## launched"`) {
				refused++
			}
		}
	}
	if refused == 0 {
		s.t.Errorf("drift paraphrased-args: no Workflow call was refused for its args")
	}
}

// expectStepUsage checks that what the workflow's step agents spent is
// recorded, as the orchestration's spend of their states.
func (w *workflow) expectStepUsage() {
	w.t.Helper()
	n := 0
	for _, e := range w.eventsOf("main_usage") {
		if e.Get("source").String() == "workflow-step" && e.Get("requests").Int() > 0 {
			n++
		}
	}
	if n == 0 {
		w.t.Errorf("workflow %s: no step agent's spend recorded", w.ID)
	}
}

// engineFigures are what a scenario's commands cost, as the stand-in saw
// them: the main thread's tool calls and turns (its requests), what it
// read over its turns, the time the CLI runs took, and the tokens the
// stand-in reported (made up per request: they count requests) for the
// main thread and for the agents.
type engineFigures struct {
	Calls, Turns, Input  int
	Context              float64 // the main thread's tool results as a share of the artifacts' bytes, in %
	Wall                 time.Duration
	MainTokens, Agents   int
	AgentRequests, Steps int // the agents' requests, and those of them a workflow's step agents made
}

func (f engineFigures) String() string {
	return fmt.Sprintf("%d calls, %d turns, %.1f%% context, %d KB read by the main thread, wall %s, tokens main %d + agents %d (%d agent requests, %d of them steps)",
		f.Calls, f.Turns, f.Context, f.Input/1024, f.Wall.Round(100*time.Millisecond), f.MainTokens, f.Agents, f.AgentRequests, f.Steps)
}

// figures sums the scenario's engineFigures over its runs and stand-ins.
func (s *scenario) figures() engineFigures {
	c := s.context()
	f := engineFigures{Calls: c.Calls, Context: 100 * float64(standin.Context(c).Received()) / float64(max(c.Artifacts, 1))}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		f.Wall += r.Wall
	}
	for _, m := range s.models {
		f.Input += m.MainInput()
		for _, e := range m.Exchanges() {
			switch {
			case !e.Subagent:
				f.Turns++
				f.MainTokens += e.Usage.Total()
			default:
				f.AgentRequests++
				f.Agents += e.Usage.Total()
				if e.Agent == stepAgent {
					f.Steps++
				}
			}
		}
	}
	return f
}

// engineSummary collects the protocol scenarios' figures; TestMain
// prints them, each scenario's engines side by side.
type engineSummary struct {
	mu   sync.Mutex
	rows map[string]map[string]engineFigures // scenario -> engine -> figures
}

var suiteEngines = engineSummary{rows: map[string]map[string]engineFigures{}}

func (x *engineSummary) add(name string, f engineFigures) {
	parts := strings.Split(name, "/")
	if len(parts) < 2 || parts[1] != stepsEngine && parts[1] != workflowEngine {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rows[parts[0]] == nil {
		x.rows[parts[0]] = map[string]engineFigures{}
	}
	x.rows[parts[0]][parts[1]] = f
}

// print writes the summary, if any scenario ran on an engine.
func (x *engineSummary) print(w io.Writer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthe engines side by side (protocol followed):\n")
	for _, name := range slices.Sorted(maps.Keys(x.rows)) {
		for _, engine := range []string{stepsEngine, workflowEngine} {
			if f, ok := x.rows[name][engine]; ok {
				fmt.Fprintf(w, "  %-40s %-8s %s\n", name, engine, f)
			}
		}
	}
}
