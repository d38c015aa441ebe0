//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// What a person sees of a run is true: each agent is shown under the
// worker it worked for, wherever they look, when parallel workers start
// in any order; a finished run keeps its duration; the page links the
// artifacts from outside the project; a spend limit holds a run until a
// person allows more.

// delayCall adds a PreToolUse hook to the scratch plugin that holds
// every call of the tools matcher matches whose input contains text for
// d. On an Agent call it holds the agent's start: Claude Code runs an
// event's hooks side by side, so flowstate's own hook records the launch
// at once, and the agent is launched with the others and starts after
// them, as agents launched in one message do in any order. A workflow's
// agents are started by its script, where no hook sees the call: holding
// one's write makes it end after the others instead.
func (s *scenario) delayCall(matcher, text string, d time.Duration) {
	s.t.Helper()
	path := filepath.Join(s.Plugin, "hooks", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := fmt.Sprintf("if grep -qF %q; then sleep %.1f; fi; true", text, d.Seconds())
	hook := map[string]any{"matcher": matcher, "hooks": []map[string]any{{"type": "command", "command": cmd, "timeout": 30}}}
	if b, err = sjson.SetBytes(b, "hooks.PreToolUse.-1", hook); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// TestEachAgentItsOwnWorker: a full implementation whose four research
// workers run side by side under a sub-supervisor: Beta's writes nothing
// (its failure accepted, the run goes on) and Alpha's agent, launched first, starts last,
// after the others, though launched with them. Every view names each
// agent by the worker it worked for: the agent shown with a worker's id
// in history --json, status --json and the report is the one whose
// transcript was prompted with that worker's artifact and wrote it (or,
// Beta's, did not). The finished run keeps its duration, and the page,
// written outside the project, links the artifacts.
func TestEachAgentItsOwnWorker(t *testing.T) { underEachMode(t, testEachAgentItsOwnWorker) }

func testEachAgentItsOwnWorker(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("full-implementation", "Alpha", "Beta", "Gamma", "Delta"),
		MissingWorker: "Topic: Beta"})
	last := "agent_start"
	if s.onWorkflow() {
		s.delayCall("Write", "001_alpha.md", 4*time.Second)
		last = "agent_stop"
	} else {
		s.delayCall("Agent|Task", "Topic: Alpha", 4*time.Second)
	}
	r := s.run("/flowstate:coordinate build the login flow with server-side sessions")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "complete", "phase_data.research.partial_failures|@ugly": `["research_2"]`})
	w.expectWorkers("research_supervisor", map[string]string{"research_1": "completed", "research_2": "failed", "research_3": "completed", "research_4": "completed"})
	expectOutput(t, r, "FINAL_STATE=complete")

	wrote := s.agentsWrote(w)
	if id := lastOf(w, last, "research-specialist"); wrote[id].prompt == "" || !strings.Contains(wrote[id].prompt, "Topic: Alpha") {
		t.Errorf("the research agent of the last %s (%s) is not Alpha's, launched first: the scenario does not hold one back", last, id)
	}
	views := map[string][]shownAgent{"history --json": shownIn(t, s.shell("history", "--json")), "status --json": shownIn(t, s.shell("status", "--json"))}
	page := filepath.Join(t.TempDir(), "pages", "run.html")
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		t.Fatal(err)
	}
	s.shell("report", "-o", page)
	views["report"] = shownInPage(t, page)
	for view, agents := range views {
		expectOwnWorkers(t, view, w, agents, wrote)
	}

	// Its duration does not grow: it ended at its transition into
	// complete.
	before := durationOf(t, s.shell("status", "--json"))
	if m.Drift == (standin.Drift{}) {
		time.Sleep(61 * time.Second)
	} else {
		time.Sleep(2 * time.Second)
	}
	if after := durationOf(t, s.shell("status", "--json")); after != before {
		t.Errorf("duration_ms %d, then %d: a finished run's duration grows", before, after)
	}
}

// written is what one agent's transcript holds: its prompt and the files
// it wrote.
type written struct {
	prompt string
	files  []string
}

// agentsWrote reads the transcript of every agent the hooks saw start,
// by its id.
func (s *scenario) agentsWrote(w *workflow) map[string]written {
	s.t.Helper()
	out := map[string]written{}
	for _, e := range w.events {
		if e.Get("event").String() != "agent_start" {
			continue
		}
		id, path := e.Get("agent_id").String(), e.Get("transcript").String()
		b, err := os.ReadFile(path)
		if err != nil {
			s.t.Errorf("agent %s: %v", id, err)
			continue
		}
		var wr written
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for first := true; sc.Scan(); first = false {
			line := gjson.Parse(sc.Text())
			if first {
				wr.prompt = line.Get("message.content").String()
				if c := line.Get("message.content"); c.IsArray() {
					wr.prompt = c.Get("#.text").String()
				}
			}
			line.Get("message.content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").String() == "tool_use" && c.Get("name").String() == "Write" {
					wr.files = append(wr.files, c.Get("input.file_path").String())
				}
				return true
			})
		}
		out[id] = wr
	}
	return out
}

// lastOf is the id of the agent of kind whose event (agent_start,
// agent_stop) came last.
func lastOf(w *workflow, event, kind string) string {
	last := ""
	for _, e := range w.events {
		if e.Get("event").String() == event && e.Get("agent_type").String() == kind {
			last = e.Get("agent_id").String()
		}
	}
	return last
}

// shownAgent is an agent as a view shows it.
type shownAgent struct {
	ID, Worker, Status, Artifact string
}

// shownIn reads the agents of a history --json or status --json
// document.
func shownIn(t *testing.T, doc string) []shownAgent {
	t.Helper()
	var d struct {
		Agents []struct {
			AgentID  string `json:"agent_id"`
			WorkerID string `json:"worker_id"`
			Status   string `json:"status"`
			Artifact string `json:"artifact"`
			Rewound  bool   `json:"rewound"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	var out []shownAgent
	for _, a := range d.Agents {
		if !a.Rewound {
			out = append(out, shownAgent{a.AgentID, a.WorkerID, a.Status, a.Artifact})
		}
	}
	return out
}

var (
	pageRow      = regexp.MustCompile(`<tr id="agent-\d+" class="([a-z]+)">.*?</tr>`)
	pageWorker   = regexp.MustCompile(`<code>([a-z_0-9]+)</code>`)
	pageArtifact = regexp.MustCompile(`<a class="artifact" href="([^"]+)" title="([^"]*)"`)
)

// shownInPage reads the agents table of a report: each row's worker, its
// status and its artifact (the link must lead to the file); the page
// does not carry agent ids, so ID is the artifact's path.
func shownInPage(t *testing.T, page string) []shownAgent {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "ZgotmplZ") {
		t.Errorf("the page has a link the template refused")
	}
	var out []shownAgent
	for _, row := range pageRow.FindAllStringSubmatch(string(b), -1) {
		a := shownAgent{Status: row[1]}
		if m := pageWorker.FindStringSubmatch(row[0]); m != nil {
			a.Worker = m[1]
		}
		if m := pageArtifact.FindStringSubmatch(row[0]); m != nil {
			u, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil || u.Scheme != "file" {
				t.Errorf("the page, outside the project, links %s: want a file: URL", m[1])
				continue
			}
			if _, err := os.Stat(u.Path); err != nil {
				t.Errorf("the page's link %s leads nowhere: %v", m[1], err)
			}
			a.Artifact = u.Path
		}
		out = append(out, a)
	}
	return out
}

// expectOwnWorkers checks a view's agents against what their
// transcripts hold: an agent shown with a research or implementation
// worker's id was prompted with that worker's artifact, and wrote it
// unless the worker failed; each such worker is shown once (a worker is
// run once here).
func expectOwnWorkers(t *testing.T, view string, w *workflow, agents []shownAgent, wrote map[string]written) {
	t.Helper()
	artifacts, statuses := map[string]string{}, map[string]string{}
	for _, sup := range []string{"research_supervisor", "implementation_supervisor"} {
		for _, r := range w.get("supervisor_state." + sup + ".workers").Array() {
			artifacts[r.Get("worker_id").String()] = r.Get("output_path").String()
			statuses[r.Get("worker_id").String()] = r.Get("status").String()
		}
	}
	shown := map[string]int{}
	for _, a := range agents {
		want, ok := artifacts[a.Worker]
		if !ok {
			continue
		}
		shown[a.Worker]++
		failed := statuses[a.Worker] == "failed"
		if failed != (a.Status == "failed") {
			t.Errorf("%s: %s's agent is %s, its worker is recorded %s", view, a.Worker, a.Status, statuses[a.Worker])
		}
		if a.Artifact != "" && a.Artifact != want {
			t.Errorf("%s: %s's agent shows the artifact %s, not its worker's %s", view, a.Worker, a.Artifact, want)
		}
		wr, ok := wrote[a.ID]
		if !ok {
			// The page shows no agent ids: its rows are checked by their
			// artifact and status above.
			continue
		}
		rel := strings.TrimPrefix(want, filepath.Dir(filepath.Dir(want))+"/")
		if !strings.Contains(wr.prompt, want) && !strings.Contains(wr.prompt, rel) {
			t.Errorf("%s: agent %s is shown as %s, but its prompt names another artifact than %s:\n%.400s", view, a.ID, a.Worker, want, wr.prompt)
		}
		if didWrite := strings.Contains(strings.Join(wr.files, "\n"), filepath.Base(want)); didWrite == failed {
			t.Errorf("%s: agent %s is shown as %s (%s), but it wrote %v", view, a.ID, a.Worker, statuses[a.Worker], wr.files)
		}
	}
	for worker := range artifacts {
		if shown[worker] != 1 {
			t.Errorf("%s: worker %s is shown with %d agents, want 1", view, worker, shown[worker])
		}
	}
}

func durationOf(t *testing.T, doc string) int64 {
	t.Helper()
	d := gjson.Get(doc, "duration_ms")
	if !d.Exists() || d.Int() <= 0 {
		t.Fatalf("status --json has no duration_ms:\n%.300s", doc)
	}
	return d.Int()
}

// TestSpendLimit: the project caps what a workflow spends. Once what
// /coordinate recorded it spent (its researchers', or, where the model
// ends its turns early, the classifier's and the main thread's) reaches
// the limit, its next step holds it, saying what was spent; the run ends
// there. From a terminal the person allows more (approve --budget);
// /workflow-resume does the rest, no work twice; history records the hold
// and the approval.
func TestSpendLimit(t *testing.T) { underEachMode(t, testSpendLimit) }

func testSpendLimit(t *testing.T, m mode) {
	s := flowstateScenario(t, m, standin.Knobs{Classification: classification("research-and-plan", "Auth patterns", "Session storage")})
	if err := os.MkdirAll(filepath.Join(s.Project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Project, ".claude", "flowstate.json"), []byte(`{"budget": "4k"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := s.run("/flowstate:coordinate study auth and sessions, then plan the login rework")
	w := s.onlyWorkflow()
	w.expect(map[string]any{"status": "awaiting_approval", "hold.kind": "budget"})
	if msg := w.get("hold.message").String(); !strings.HasPrefix(msg, "spent ") || !strings.HasSuffix(msg, " of 4.0k tokens") {
		t.Errorf("hold.message %q does not say what was spent of the limit", msg)
	}
	expectEnded(t, r, m.Drift, "is held at its spend limit", "flowstate approve --budget AMOUNT --workflow "+w.ID)
	w.expectEvents(w.transitions(), map[string]int{"budget": 1, "approve": 0})
	first := map[string]int{}
	for _, c := range s.calls() {
		first[c.Persona]++
	}
	if status := s.shell("status"); !strings.Contains(status, "⏸ held at its spend limit: spent ") {
		t.Errorf("status does not say the run is held at its limit:\n%s", status)
	}

	out := s.shell("approve", "--budget", "1M", "--workflow", w.ID)
	expectOutput(t, result{Prompt: "flowstate approve --budget 1M", Stdout: out}, "STATUS=in_progress\n")
	s.restartModel(standin.Knobs{}, "resume")
	resumed := s.run("/flowstate:workflow-resume")
	all := map[string]int{}
	for _, c := range s.calls() {
		all[c.Persona]++
	}
	for p, n := range first {
		all[p] += n
	}
	if want := map[string]int{"workflow-classifier": 1, "research-specialist": 2, "plan-architect": 1}; fmt.Sprint(all) != fmt.Sprint(want) {
		t.Errorf("agents invoked before and after the hold: %v, want %v", all, want)
	}
	w = s.onlyWorkflow()
	w.expect(map[string]any{"status": "complete", "state_machine.current_state": "plan", "hold": nil})
	w.expectEvents("initialize research plan", map[string]int{"budget": 1, "approve": 1})
	expectOutput(t, resumed, "FINAL_STATE=plan")
	if h := s.shell("history"); !strings.Contains(h, "held at its spend limit in research") || !strings.Contains(h, "ann allowed 1.00M tokens more") {
		t.Errorf("history does not record the hold and the approval:\n%s", h)
	}
}
