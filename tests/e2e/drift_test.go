//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// TestBackgroundAgentsWithoutTheForegroundHook: with the PreToolUse hook
// taken out, agents launched without run_in_background really run in the
// background, and each next block runs while they work. phase-start
// --classified and phase-verify tell agents at work (from the
// SubagentStart and SubagentStop records) from agents that did not
// deliver: they wait, loop back (NEXT=classified, NEXT=verify) when the
// agents take longer than FLOWSTATE_WAIT, and the workflow completes with
// every worker run once.
func TestBackgroundAgentsWithoutTheForegroundHook(t *testing.T) {
	s := flowstateScenario(t, steps(standin.Drift{Background: true}), standin.Knobs{
		Classification: classification("full-implementation", "Auth patterns", "Session storage"),
		SlowAgent:      "research-specialist", SlowDelay: 3 * time.Second,
	})
	s.removeHook("PreToolUse")
	s.Env = append(s.Env, "FLOWSTATE_WAIT=1s")
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")

	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "error_state.last_error": nil})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "completed"})
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	s.expectAgents(map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1,
		"sub-supervisor": 2, "implementation-executor": 4, "test-specialist": 2, "doc-writer": 1})
	if n := s.Model.BackgroundAgents(); n < 5 {
		t.Errorf("Claude Code ran %d agents in the background, want every one the main thread launched: the race was not tested", n)
	}
	waited := 0
	for _, out := range s.Model.BashResults() {
		if strings.Contains(out, "NEXT=verify") && strings.Contains(out, "RUNNING=") {
			waited++
		}
	}
	if waited == 0 {
		t.Errorf("phase-verify never waited for the slow research workers")
	}
	expectOutput(t, r, "FINAL_STATE=complete")
}

// TestSelfWrittenArtifact: a worker writes nothing, and the main thread
// writes the worker's report itself with the Write tool before its next
// block. The PreToolUse hook refuses the write, so the worker counts as
// missing all the same: the command stops naming the file, and
// /workflow-resume runs that worker again (TestTooFewWorkersDeliver's
// assertions, under the drift).
func TestSelfWrittenArtifact(t *testing.T) {
	for _, d := range []standin.Drift{{SelfWrite: true}, {SelfWrite: true, Twice: true}} {
		t.Run(d.String(), func(t *testing.T) { testTooFewWorkersDeliver(t, steps(d)) })
	}
}

// expectSelfWritesRefused checks the SelfWrite drift: the main thread
// wrote a worker's file, and every such write was refused by flowstate's
// hook while the workers' own writes went through. It checks, too, what
// the hook tells them apart by: the PreToolUse payload of a Write in a
// subagent carries agent_id and agent_type, the main thread's neither.
func (s *scenario) expectSelfWritesRefused(models []*standin.Server) {
	s.t.Helper()
	main := map[string]standin.ToolResult{}
	for _, m := range models {
		for id, r := range m.MainWrites() {
			main[id] = r
		}
	}
	if len(main) == 0 {
		s.t.Errorf("drift self-write: the main thread never wrote a worker's file")
	}
	for id, r := range main {
		if !r.IsError || !strings.Contains(r.Text, "; do not write it yourself.") {
			s.t.Errorf("the main thread's Write %s was not refused by flowstate: %q", id, r.Text)
		}
	}
	files, err := os.ReadDir(s.payloads)
	if err != nil {
		s.t.Fatal(err)
	}
	seen := map[bool]int{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(s.payloads, f.Name()))
		if err != nil {
			s.t.Fatal(err)
		}
		pl := gjson.ParseBytes(b)
		_, byMain := main[pl.Get("tool_use_id").String()]
		seen[byMain]++
		agentID, agentType := pl.Get("agent_id").Exists(), pl.Get("agent_type").Exists()
		switch {
		case byMain && (agentID || agentType):
			s.t.Errorf("a main-thread Write's PreToolUse payload carries agent_id or agent_type: %s", b)
		case !byMain && (pl.Get("agent_id").String() == "" || pl.Get("agent_type").String() == ""):
			s.t.Errorf("a subagent's Write's PreToolUse payload lacks agent_id or agent_type: %s", b)
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		s.t.Errorf("logged %d main-thread and %d subagent Write payloads, want both", seen[true], seen[false])
	}
}

// expectSkipped checks the SkipBlock drift: a main thread passed over a
// bash block.
func (s *scenario) expectSkipped(models []*standin.Server) {
	s.t.Helper()
	var skipped []string
	for _, m := range models {
		skipped = append(skipped, m.Skipped()...)
	}
	if len(skipped) == 0 {
		s.t.Errorf("drift %s: the main thread skipped no bash block", models[0].Drift())
	}
	for _, b := range skipped {
		s.t.Logf("skipped block: %s", b)
	}
}

// expectGeneralPurpose checks the GeneralPurpose drift: every agent was
// launched as general-purpose, told to follow an agent file of the
// plugin or the project, and read that file before anything else.
func (s *scenario) expectGeneralPurpose(models []*standin.Server) {
	s.t.Helper()
	launched, read := map[string]bool{}, map[string]bool{}
	for _, m := range models {
		for _, e := range m.Exchanges() {
			for i, u := range e.Tools {
				in := gjson.ParseBytes(u.Input)
				switch {
				case u.Name == "Read" && e.Subagent && i == 0:
					read[in.Get("file_path").String()] = true
				case u.Name != "Agent":
				case in.Get("subagent_type").String() != "general-purpose":
					s.t.Errorf("an agent was launched as %s, not general-purpose: %s", in.Get("subagent_type"), u.Input)
				default:
					file, _, ok := standin.FollowedAgent(in.Get("prompt").String())
					if !ok {
						s.t.Errorf("a general-purpose agent was not told to follow an agent file: %s", u.Input)
						continue
					}
					launched[file] = true
				}
			}
		}
	}
	if len(launched) == 0 {
		s.t.Errorf("drift general-purpose: no agent was launched as general-purpose")
	}
	for file := range launched {
		if !strings.HasPrefix(file, filepath.Join(s.Plugin, "agents")+"/") && !strings.HasPrefix(file, filepath.Join(s.Project, ".claude", "agents")+"/") {
			s.t.Errorf("agents were told to follow %s, not an agent file of the plugin or the project", file)
		}
		if !read[file] {
			s.t.Errorf("no general-purpose agent read %s before it acted", file)
		}
	}
}
