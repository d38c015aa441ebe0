//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/usage"
	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// TestWhatItCost: a completed /coordinate (research-only, two topics: the
// classifier and two researchers) seen afterwards from a terminal. status,
// history and the HTML report show the tokens and time of every agent and
// of the main thread, as the hooks recorded them from Claude Code's own
// transcripts, and they are what the stand-in reported, answer by answer.
// On the workflow engine the orchestration's spend is the main thread's
// and its script's step agents'.
func TestWhatItCost(t *testing.T) { underEachEngine(t, testWhatItCost) }

func testWhatItCost(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage")})
	s.run("/flowstate:coordinate research how logins and sessions work")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete"})
	main, agents := s.Model.Spent()
	for k, u := range agents {
		if k[0] == stepAgent {
			main = main.Add(u)
			delete(agents, k)
		}
	}

	var hist struct {
		Agents []struct {
			AgentType  string `json:"agent_type"`
			WorkerID   string `json:"worker_id"`
			State      string `json:"state"`
			DurationMs int64  `json:"duration_ms"`
			Requests   int    `json:"requests"`
			Tokens     *struct {
				usage.Usage
				Total int64 `json:"total"`
			} `json:"tokens"`
		} `json:"agents"`
		Events []struct {
			Event  string         `json:"event"`
			Fields map[string]any `json:"fields"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(s.shell("history", "--json")), &hist); err != nil {
		t.Fatal(err)
	}
	// Per persona, the agents' tokens as flowstate recorded them and as
	// the stand-in reported them (each answer's usage differs, so equal
	// sums are the same answers, counted once each).
	recorded, reported := map[string][]string{}, map[string][]string{}
	var all usage.Usage
	for _, a := range hist.Agents {
		if a.Tokens == nil || a.DurationMs <= 0 {
			t.Errorf("%s %s: tokens %v, duration %d ms; want both", a.AgentType, a.WorkerID, a.Tokens, a.DurationMs)
			continue
		}
		recorded[a.AgentType] = append(recorded[a.AgentType], fmt.Sprint(a.Tokens.Usage))
		if want := map[string]string{"workflow-classifier": "initialize", "research-specialist": "research"}[a.AgentType]; a.State != want {
			t.Errorf("%s ran in %s, want %s", a.AgentType, a.State, want)
		}
		all = all.Add(a.Tokens.Usage)
		t.Logf("agent %s %s in %s: %d tokens (input %d, output %d, cache read %d, cache write %d), %d requests, %d ms",
			a.AgentType, a.WorkerID, a.State, a.Tokens.Total, a.Tokens.Input, a.Tokens.Output, a.Tokens.CacheRead, a.Tokens.CacheWrite, a.Requests, a.DurationMs)
	}
	for k, u := range agents {
		reported[k[0]] = append(reported[k[0]], fmt.Sprint(asUsage(u)))
	}
	for _, m := range []map[string][]string{recorded, reported} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	if fmt.Sprint(recorded) != fmt.Sprint(reported) {
		t.Errorf("agents' tokens as recorded:\n%v\nas the stand-in reported them:\n%v", recorded, reported)
	}
	if n := len(recorded["research-specialist"]) + len(recorded["workflow-classifier"]); n != 3 {
		t.Errorf("%d agents with tokens, want the classifier and two researchers: %v", n, recorded)
	}
	var mainRecorded usage.Usage
	for _, e := range hist.Events {
		if e.Event == usage.MainEvent {
			mainRecorded = mainRecorded.Add(usage.FromFields(e.Fields["usage"]))
		}
	}
	if mainRecorded != asUsage(main) {
		t.Errorf("main thread: recorded %+v, the stand-in reported %+v", mainRecorded, main)
	}
	all = all.Add(mainRecorded)
	t.Logf("main thread: %d tokens %+v; workflow: %d tokens %+v", mainRecorded.Total(), mainRecorded, all.Total(), all)

	var st struct {
		Tokens struct {
			usage.Usage
			Total int64 `json:"total"`
		} `json:"tokens"`
		Spent []struct {
			State  string `json:"state"`
			Tokens struct {
				Total int64 `json:"total"`
			} `json:"tokens"`
		} `json:"spent_per_state"`
	}
	if err := json.Unmarshal([]byte(s.shell("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Tokens.Usage != all || st.Tokens.Total != all.Total() {
		t.Errorf("status --json tokens %+v, want %+v", st.Tokens, all)
	}
	text := s.shell("status")
	if want := "spent " + usage.Tokens(all.Total()) + " tokens"; !strings.Contains(text, want) {
		t.Errorf("status lacks %q:\n%s", want, text)
	}
	for _, sp := range st.Spent {
		if sp.Tokens.Total > 0 && !strings.Contains(text, usage.Tokens(sp.Tokens.Total)+" tokens") {
			t.Errorf("status does not show %s's %d tokens:\n%s", sp.State, sp.Tokens.Total, text)
		}
	}
	if h := s.shell("history"); strings.Count(h, "agent_usage") != 3 || !strings.Contains(h, "main thread in ") {
		t.Errorf("history does not show what each agent and the main thread spent:\n%s", h)
	}
	page := filepath.Join(s.Project, "report.html")
	s.shell("report", "-o", page)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `<span id="total-tokens">`+usage.Tokens(all.Total())+`</span>`) {
		t.Errorf("the report does not show the workflow's %s tokens", usage.Tokens(all.Total()))
	}
	for _, a := range hist.Agents {
		if a.Tokens != nil && !strings.Contains(string(b), "· "+usage.Tokens(a.Tokens.Total)+"</a>") {
			t.Errorf("the report has no bar with %s %s's tokens", a.AgentType, a.WorkerID)
		}
	}
}

func asUsage(u standin.Usage) usage.Usage {
	return usage.Usage{Input: int64(u.Input), Output: int64(u.Output), CacheRead: int64(u.CacheRead), CacheWrite: int64(u.CacheWrite)}
}
