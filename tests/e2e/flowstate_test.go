//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
	"github.com/flowstate-dev/flowstate/tests/internal/playback"
)

// The engines a command runs on: the steps engine, the model following
// the command's blocks (here with the Workflow tool off, as a setting,
// an org policy or a plan without it leaves it); the workflow engine, a
// Claude Code workflow whose script asks flowstate for every step.
const (
	stepsEngine    = "steps"
	workflowEngine = "workflow"
)

// drifts are the protocol followed to the letter and each way real
// models deviate from it, by engine: every flowstate scenario runs under
// each. On the steps engine the model runs every phase; on the workflow
// engine it runs the start, one Workflow call and the block after it, so
// the drifts that apply are those of these three calls: a block run
// twice, a stop every second call, a compaction once the workflow was
// launched, and a launch whose args were garbled.
var drifts = map[string][]standin.Drift{
	stepsEngine: {{}, {Background: true}, {Twice: true}, {StopEvery: 3}, {CompactAfter: 4},
		// A skipped bash block (the first after agents returned: in
		// /coordinate the classified start), and agents launched as
		// general-purpose told to follow their agent file, with and
		// without run_in_background.
		{SkipBlock: standin.Skip{AfterAgents: true}}, {GeneralPurpose: true}, {GeneralPurpose: true, Background: true}},
	workflowEngine: {{}, {Twice: true}, {StopEvery: 2}, {CompactAfter: 2}, {ParaphraseArgs: true}},
}

// mode is how a scenario runs: its engine and the model's drift.
type mode struct {
	Engine string
	Drift  standin.Drift
}

// steps is a mode of the steps engine.
func steps(d standin.Drift) mode { return mode{Engine: stepsEngine, Drift: d} }

// underEachMode runs a scenario on each engine under each of its drifts,
// as subtests named after them (TestX/workflow/protocol).
func underEachMode(t *testing.T, scenario func(t *testing.T, m mode)) {
	for _, engine := range []string{stepsEngine, workflowEngine} {
		t.Run(engine, func(t *testing.T) { underEachDriftOf(t, engine, scenario) })
	}
}

// underEachDrift runs a scenario of the steps engine alone once per
// drift: what has no counterpart on the workflow engine (a command on
// the low-level API, the model's own Agent calls).
func underEachDrift(t *testing.T, scenario func(t *testing.T, m mode)) {
	underEachDriftOf(t, stepsEngine, scenario)
}

func underEachDriftOf(t *testing.T, engine string, scenario func(t *testing.T, m mode)) {
	for _, d := range drifts[engine] {
		t.Run(d.String(), func(t *testing.T) { scenario(t, mode{Engine: engine, Drift: d}) })
	}
}

// flowstateScenario is a scenario with the repository's plugin (commands,
// agents, saved workflows, hooks) and the freshly built flowstate in its
// bin/, on m's engine, whose stand-in drifts as m says (also after
// restartModel). When the test ends it checks that the drift happened
// and was handled, and logs the scenario's wall time and how many
// flowstate invocations the stand-in ran in Bash blocks.
func flowstateScenario(t *testing.T, m mode, knobs standin.Knobs) *scenario {
	t.Helper()
	start := time.Now()
	d := m.Drift
	knobs.Drift = d
	s := newScenario(t, repoRoot, map[string]string{"flowstate": flowstateBin(t)}, knobs)
	s.mode = m
	if m.Engine == stepsEngine {
		s.Env = append(s.Env, "CLAUDE_CODE_DISABLE_WORKFLOWS=1")
	}
	if d.SelfWrite {
		s.payloads = s.logPayloads("Write")
	}
	t.Cleanup(func() {
		if !t.Failed() {
			s.expectDriftHandled(d)
			s.expectNoFlowstateDenials()
		}
		t.Logf("scenario %s: wall %s, %d flowstate calls", t.Name(), time.Since(start).Round(time.Millisecond), s.bashCalls("flowstate"))
		suiteDenials.add(t.Name(), s.permissionFigures())
		if !t.Failed() {
			s.expectEngine()
		}
		if m.Drift == (standin.Drift{}) {
			c := s.context()
			t.Logf("context: %s", c)
			suiteContext.add(t.Name(), c)
			f := s.figures()
			t.Logf("cost: %s", f)
			suiteEngines.add(t.Name(), f)
		}
	})
	return s
}

// context sums what the main threads of every run of the scenario
// received, against what the agents wrote.
func (s *scenario) context() contextFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c contextFigures
	for _, m := range s.models {
		x := m.Context()
		c.Calls += x.Calls
		c.Bash += x.Bash
		c.Answers += x.Answers
		c.Frames += x.Frames
		c.Artifacts += x.Artifacts
	}
	return c
}

type contextFigures standin.Context

func (c contextFigures) String() string {
	received := standin.Context(c).Received()
	return fmt.Sprintf("%d main-thread tool calls; %d bytes of tool results (bash %d, agents' answers %d, Claude Code's hand-back frames %d) for %d bytes of artifacts: %.1f%%",
		c.Calls, received, c.Bash, c.Answers, c.Frames, c.Artifacts, 100*float64(received)/float64(max(c.Artifacts, 1)))
}

// contextSummary collects the protocol scenarios' figures; TestMain
// prints them and their sum.
type contextSummary struct {
	mu    sync.Mutex
	rows  []string
	total contextFigures
}

var suiteContext contextSummary

func (x *contextSummary) add(name string, c contextFigures) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.rows = append(x.rows, fmt.Sprintf("  %-40s %s", name, c))
	x.total.Calls += c.Calls
	x.total.Bash += c.Bash
	x.total.Answers += c.Answers
	x.total.Frames += c.Frames
	x.total.Artifacts += c.Artifacts
}

// print writes the summary, if any scenario ran.
func (x *contextSummary) print(w io.Writer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncontext of the main thread per scenario (protocol followed):\n%s\n  %-40s %s\n", strings.Join(x.rows, "\n"), "suite", x.total)
}

// expectDriftHandled checks that the drift took place and what handled
// it: agents launched without run_in_background ran in the foreground all
// the same (the PreToolUse hook), a model that ended its turn early was
// sent back with a reason naming where to continue (the Stop hook), a
// compacted one was told where its command stands (the SessionStart
// hook); that a block was skipped, and that agents were launched as
// general-purpose and followed their files.
func (s *scenario) expectDriftHandled(d standin.Drift) {
	s.t.Helper()
	s.mu.Lock()
	models := slices.Clone(s.models)
	s.mu.Unlock()
	var background int
	var reasons, contexts []string
	for _, m := range models {
		background += m.BackgroundAgents()
		r, c := m.StopFeedback()
		reasons, contexts = append(reasons, r...), append(contexts, c...)
	}
	if background > 0 && !slices.Contains(s.removed, "PreToolUse") {
		s.t.Errorf("Claude Code ran %d flowstate agents in the background", background)
	}
	// A section of the command: the phase loop's start, phase or verify,
	// or, for a command on the low-level API, a state's.
	names := func(text string) bool { return sectionRef.MatchString(text) }
	for _, text := range reasons {
		if !names(text) {
			s.t.Errorf("the Stop hook sent the model back without naming the section to continue at: %q", text)
		}
	}
	for _, text := range contexts {
		if !names(text) && !strings.Contains(text, " has finished: ") && !strings.Contains(text, " stopped because a step failed: ") && !strings.Contains(text, " is on hold: ") {
			s.t.Errorf("after a compaction the model was told neither where to continue nor that the command is over: %q", text)
		}
	}
	if d.StopEvery > 0 && len(reasons) == 0 {
		s.t.Errorf("drift %s: the model never ended its turn early, or nothing sent it back", d)
	}
	if d.CompactAfter > 0 && len(contexts) == 0 {
		s.t.Errorf("drift %s: no compaction happened, or no hook told the model where its command stands", d)
	}
	if d.SelfWrite {
		s.expectSelfWritesRefused(models)
	}
	skips := d.SkipBlock != (standin.Skip{})
	if skips {
		s.expectSkipped(models)
	}
	if d.GeneralPurpose {
		s.expectGeneralPurpose(models)
	}
	if d.ParaphraseArgs {
		s.expectArgsRefused(models)
	}
	// A model that skipped a block may end its turn before its command is
	// done, and be sent back.
	if d.StopEvery == 0 && !skips && len(reasons) > 0 {
		s.t.Errorf("a model that followed the protocol was sent back by the Stop hook: %q", reasons)
	}
}

// sectionRef is how the hooks name the section to continue at.
var sectionRef = regexp.MustCompile(`"## [a-z][a-z0-9_-]*"`)

// run runs `claude -p prompt` to the end and fails the test unless it exited 0.
func (s *scenario) run(prompt string) result {
	s.t.Helper()
	r := s.claude(prompt, "flowstate")
	if r.ExitCode != 0 {
		s.t.Fatalf("claude -p %q exited %d", prompt, r.ExitCode)
	}
	return r
}

// stateDir is the project's flowstate state directory.
func (s *scenario) stateDir() string { return s.path(".claude/state") }

// workflowIDs lists the project's workflows (directory names, sorted).
func (s *scenario) workflowIDs() []string {
	s.t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.stateDir(), "workflows"))
	if err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// onlyWorkflow is the project's one workflow; the test stops if there is
// not exactly one.
func (s *scenario) onlyWorkflow() *workflow {
	s.t.Helper()
	ids := s.workflowIDs()
	if len(ids) != 1 {
		s.t.Fatalf("want exactly one workflow in %s, have %v", s.stateDir(), ids)
	}
	return s.workflow(ids[0])
}

// sessionPointer is the workflow id the session's pointer names, "" when
// there is no pointer.
func (s *scenario) sessionPointer(session string) string {
	b, err := os.ReadFile(filepath.Join(s.stateDir(), "sessions", session))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// expectPointer checks a session pointer after its run ended: the
// SessionEnd hook removes it when the workflow is finished and keeps it
// (naming the workflow) when the workflow can still be resumed.
func (s *scenario) expectPointer(r result, w *workflow, kept bool) {
	s.t.Helper()
	got := s.sessionPointer(r.Session)
	switch {
	case kept && got != w.ID:
		s.t.Errorf("session %s points at %q after the run, want %s kept for resume", r.Session, got, w.ID)
	case !kept && got != "":
		s.t.Errorf("session %s still points at %q after the run: SessionEnd did not drop the finished workflow's pointer", r.Session, got)
	}
}

// expectHookExports checks what the SessionStart hook (`flowstate hook
// session-start`, through hooks/run-hook) left in the session's
// CLAUDE_ENV_FILE: sourced as Claude Code sources it before every Bash
// block, it puts the plugin's bin/ first on PATH and exports FLOWSTATE_BIN
// and CLAUDE_PROJECT_DIR.
func (s *scenario) expectHookExports(r result) {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Home, ".claude", "session-env", r.Session, "*.sh"))
	if len(files) == 0 {
		s.t.Errorf("session %s: no CLAUDE_ENV_FILE was written: the SessionStart hook did not run", r.Session)
		return
	}
	script := ""
	for _, f := range files {
		script += ". " + strconv.Quote(f) + "\n"
	}
	script += `printf '%s\n' "$PATH" "$FLOWSTATE_BIN" "$CLAUDE_PROJECT_DIR"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Errorf("session %s: sourcing CLAUDE_ENV_FILE %v: %v\n%s", r.Session, files, err, out)
		return
	}
	if log, err := os.ReadFile(filepath.Join(s.stateDir(), "hooks.log")); err == nil {
		s.t.Errorf("the hooks logged problems:\n%s", log)
	}
	bin := filepath.Join(s.Plugin, "bin")
	want := bin + ":/usr/bin:/bin\n" + filepath.Join(bin, "flowstate") + "\n" + s.Project + "\n"
	if string(out) != want {
		s.t.Errorf("session %s: CLAUDE_ENV_FILE %v gives PATH, FLOWSTATE_BIN, CLAUDE_PROJECT_DIR =\n%s\nwant\n%s", r.Session, files, out, want)
	}
}

// workflow is one workflow's checkpoint and event log as read from disk.
type workflow struct {
	t      *testing.T
	ID     string
	Dir    string
	cp     []byte
	events []gjson.Result
}

// workflow reads the workflow's checkpoint.json and events.jsonl.
func (s *scenario) workflow(id string) *workflow {
	s.t.Helper()
	w := &workflow{t: s.t, ID: id, Dir: filepath.Join(s.stateDir(), "workflows", id)}
	var err error
	if w.cp, err = os.ReadFile(filepath.Join(w.Dir, "checkpoint.json")); err != nil {
		s.t.Fatal(err)
	}
	if !gjson.ValidBytes(w.cp) {
		s.t.Fatalf("workflow %s: checkpoint.json is not JSON:\n%s", id, w.cp)
	}
	log, err := os.ReadFile(filepath.Join(w.Dir, "events.jsonl"))
	if err != nil {
		s.t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		if !gjson.Valid(sc.Text()) {
			s.t.Fatalf("workflow %s: events.jsonl line is not JSON: %q", id, sc.Text())
		}
		w.events = append(w.events, gjson.Parse(sc.Text()))
	}
	return w
}

// get is the checkpoint's value at a gjson path.
func (w *workflow) get(path string) gjson.Result { return gjson.GetBytes(w.cp, path) }

// expect checks checkpoint values: path → want, compared as text (numbers
// as gjson prints them, arrays and objects as their JSON); nil wants null
// or no value.
func (w *workflow) expect(want map[string]any) {
	w.t.Helper()
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		got := w.get(p)
		switch v := want[p]; {
		case v == nil && (got.Type == gjson.Null):
		case v == nil:
			w.t.Errorf("workflow %s: %s = %s, want null", w.ID, p, got.Raw)
		case got.String() != fmt.Sprint(v):
			w.t.Errorf("workflow %s: %s = %s, want %v", w.ID, p, orMissing(got), v)
		}
	}
}

func orMissing(r gjson.Result) string {
	if !r.Exists() {
		return "(missing)"
	}
	return r.Raw
}

// workers maps worker_id → status of the supervisor's worker records.
func (w *workflow) workers(supervisor string) map[string]string {
	out := map[string]string{}
	for _, r := range w.get("supervisor_state." + supervisor + ".workers").Array() {
		out[r.Get("worker_id").String()] = r.Get("status").String()
	}
	return out
}

// expectWorkers checks that the supervisor's records are exactly want
// (worker_id → status), and that every completed worker's output exists
// and is not empty.
func (w *workflow) expectWorkers(supervisor string, want map[string]string) {
	w.t.Helper()
	if got := w.workers(supervisor); fmt.Sprint(got) != fmt.Sprint(want) {
		w.t.Errorf("workflow %s: %s workers %v, want %v", w.ID, supervisor, got, want)
	}
	for _, r := range w.get("supervisor_state." + supervisor + ".workers").Array() {
		if r.Get("status").String() != "completed" {
			continue
		}
		path := r.Get("output_path").String()
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			w.t.Errorf("workflow %s: %s worker %s is recorded completed, but its output %q is missing or empty", w.ID, supervisor, r.Get("worker_id"), path)
		}
	}
}

// expectArtifacts checks phase_data.<state>.artifacts: n files, all of them
// under the workflow's spec directory <project>/.flowstate/specs/<id>/<sub>/
// and existing.
func (w *workflow) expectArtifacts(project, state, sub string, n int) []string {
	w.t.Helper()
	dir := filepath.Join(project, ".flowstate", "specs", w.ID, sub) + string(filepath.Separator)
	var paths []string
	for _, a := range w.get("phase_data." + state + ".artifacts").Array() {
		paths = append(paths, a.String())
	}
	if len(paths) != n {
		w.t.Errorf("workflow %s: phase_data.%s.artifacts = %v, want %d files", w.ID, state, paths, n)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, dir) {
			w.t.Errorf("workflow %s: %s artifact %s is not under %s", w.ID, state, p, dir)
		} else if _, err := os.Stat(p); err != nil {
			w.t.Errorf("workflow %s: %s artifact: %v", w.ID, state, err)
		}
	}
	return paths
}

// eventKinds counts the events of the log by kind.
func (w *workflow) eventKinds() map[string]int {
	out := map[string]int{}
	for _, e := range w.events {
		out[e.Get("event").String()]++
	}
	return out
}

// transitions is the route the event log records: the initial state, then
// each transition's target ("initialize research plan").
func (w *workflow) transitions() string {
	var route []string
	for _, e := range w.events {
		if e.Get("event").String() != "transition" {
			continue
		}
		if len(route) == 0 {
			route = append(route, e.Get("from").String())
		}
		route = append(route, e.Get("to").String())
	}
	return strings.Join(route, " ")
}

// expectEvents checks the event log: the route its transitions took and the
// number of events of some kinds.
func (w *workflow) expectEvents(route string, kinds map[string]int) {
	w.t.Helper()
	if got := w.transitions(); got != route {
		w.t.Errorf("workflow %s: events record the route %q, want %q", w.ID, got, route)
	}
	got := w.eventKinds()
	for k, n := range kinds {
		if got[k] != n {
			w.t.Errorf("workflow %s: %d %q events, want %d (all: %v)", w.ID, got[k], k, n, got)
		}
	}
}

// agentCall is one Agent tool call the stand-in made.
type agentCall struct {
	Caller string // persona of the thread that made it, "" for the main thread
	// Persona is the subagent_type without the plugin prefix, or the
	// agent file a general-purpose agent was told to follow; Prompt is
	// then the prompt after that line.
	Persona string
	Prompt  string
	Message int64 // the answer (request sequence number) it was part of
}

// agentCalls lists the Agent calls a stand-in made whose agents ran, in
// order: a call that failed before its agent ran (Claude Code could not
// make its worktree) launched nobody.
func agentCalls(m *standin.Server) []agentCall {
	var out []agentCall
	for _, e := range m.Exchanges() {
		for _, u := range e.Tools {
			if u.Name != "Agent" || m.Unstarted(u.ID) {
				continue
			}
			in := gjson.ParseBytes(u.Input)
			typ, prompt := in.Get("subagent_type").String(), in.Get("prompt").String()
			if file, rest, ok := standin.FollowedAgent(prompt); ok {
				// Launched as general-purpose: the agent is the file.
				typ, prompt = strings.TrimSuffix(filepath.Base(file), ".md"), rest
			}
			out = append(out, agentCall{Caller: e.Agent, Persona: typ[strings.LastIndex(typ, ":")+1:],
				Prompt: prompt, Message: e.Seq})
		}
	}
	return out
}

// brief is the file an agent call's prompt tells it to read first (the
// brief its phase's workers share), as it is now.
func (s *scenario) brief(c agentCall) string {
	s.t.Helper()
	b, err := playback.Brief(s.Project, c.Prompt)
	if err != nil {
		s.t.Fatalf("%s: %v", c.Persona, err)
	}
	return b
}

// batches are the sizes of the messages in which persona was invoked, in
// order: [4] is four parallel calls in one assistant message.
func batches(m *standin.Server, persona string) []int {
	var sizes []int
	last := int64(-1)
	for _, c := range agentCalls(m) {
		switch {
		case c.Persona != persona:
		case c.Message == last:
			sizes[len(sizes)-1]++
		default:
			sizes, last = append(sizes, 1), c.Message
		}
	}
	return sizes
}

// expectWorkerSignals checks the final answers of persona's subagents: one
// `REPORT_CREATED: <path>` per completed worker of the supervisor record,
// its path relative to the workflow's spec directory, as the agent's
// `Return exactly:` line asks.
func (w *workflow) expectWorkerSignals(m *standin.Server, persona, supervisor string) {
	w.t.Helper()
	var want []string
	for _, r := range w.get("supervisor_state." + supervisor + ".workers").Array() {
		if r.Get("status").String() == "completed" {
			out := r.Get("output_path").String()
			want = append(want, "REPORT_CREATED: "+out[strings.Index(out, w.ID+"/")+len(w.ID)+1:])
		}
	}
	got := answers(m, persona)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		w.t.Errorf("%s answered %q, want %q", persona, got, want)
	}
}

// expectSupervisorSignal checks the sub-supervisor's final answers for
// state: each is `SUPERVISOR_COMPLETE: <counts>`, the last one's counts
// those of the recorded workers and naming where their aggregate is
// recorded, not carrying it (it would only fill the orchestrating model's
// context).
func (w *workflow) expectSupervisorSignal(m *standin.Server, state, key string, runs int) {
	w.t.Helper()
	const persona = "sub-supervisor"
	var got []string
	for _, a := range answers(m, persona) {
		_, signal, _ := strings.Cut(a, ": ")
		if gjson.Get(signal, "state").String() == state {
			got = append(got, a)
		}
	}
	if len(got) != runs {
		w.t.Errorf("%s answered %d times for %s (%q), want %d", persona, len(got), state, answers(m, persona), runs)
		return
	}
	for _, a := range got {
		if !strings.HasPrefix(a, "SUPERVISOR_COMPLETE: {") {
			w.t.Errorf("%s answered %q, want its SUPERVISOR_COMPLETE line", persona, a)
			return
		}
	}
	signal := gjson.Parse(strings.TrimPrefix(got[len(got)-1], "SUPERVISOR_COMPLETE: "))
	// A test run's signal counts that run's workers (test_unit_r2, ...).
	last := ""
	for id := range w.workers(key) {
		if i := strings.LastIndex(id, "_r"); i > 0 && id[i:] > last {
			last = id[i:]
		}
	}
	counts := map[string]int64{}
	for id, s := range w.workers(key) {
		if strings.HasSuffix(id, last) {
			counts[s]++
		}
	}
	agg := signal.Get("aggregate").String()
	if signal.Get("completed").Int() != counts["completed"] || signal.Get("failed").Int() != counts["failed"] ||
		agg != "supervisor_state."+key+".aggregated_metadata" || !w.get(agg).IsObject() {
		w.t.Errorf("%s signalled %s; the records hold %v and %s is %s", persona, signal.Raw, counts, agg, orMissing(w.get(agg)))
	}
}

// gjsonFile is the value at path in a JSON file.
func gjsonFile(t *testing.T, file, path string) gjson.Result {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return gjson.GetBytes(b, path)
}

// mostToolResults is the largest number of tool results that came back in
// one user message, over the logged requests of a thread ("main",
// "sub-<persona>"): how many of its tool calls Claude Code ran as one batch.
func (s *scenario) mostToolResults(thread string) int {
	s.t.Helper()
	files, err := filepath.Glob(filepath.Join(s.LogDir, "*-"+thread+".request.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	most := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, m := range gjson.GetBytes(b, "messages").Array() {
			if m.Get("role").String() == "user" {
				most = max(most, len(m.Get(`content.#(type=="tool_result")#`).Array()))
			}
		}
	}
	return most
}
