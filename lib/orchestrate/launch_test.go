package orchestrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// commandTasks are the task blocks of a phase-loop command, as
// lib/scaffold writes them for the plugin.
const commandTasks = "## classify\n\n```task\nTask {\n  subagent_type: flowstate:workflow-classifier\n  description: Classify the workflow\n  run_in_background: false\n  prompt: |\n" +
	"    Description: ${DESCRIPTION}\n    Write the classification JSON to: ${CLASSIFICATION_PATH}\n}\n```\n\n" +
	"## work\n\n```task\nTask {\n  subagent_type: flowstate:${AGENT}\n  description: ${AGENT} ${i}\n  for_each: i in 1..${WORKER_COUNT}\n  run_in_background: false\n  prompt: |\n" +
	"    Topic: ${TOPIC_i}\n    Read first: ${SPEC_DIR}/briefs/${AGENT}.md\n    Write your result to: ${SPEC_DIR}/${OUTPUT_i}\n    Return exactly: REPORT_CREATED: ${OUTPUT_i}\n}\n```\n\n" +
	"```task\nTask {\n  subagent_type: flowstate:${AGENT}\n  description: ${AGENT} ${i}\n  for_each: i in 1..${ISOLATED_COUNT}\n  run_in_background: false\n  isolation: worktree\n  prompt: |\n" +
	"    Topic: ${TOPIC_i}\n    Read first: ${BRIEF}\n    Write your result to: ${SPEC_DIR}/${OUTPUT_i}\n    Return exactly: REPORT_CREATED: ${OUTPUT_i}\n}\n```\n"

func tasks(t *testing.T) Tasks {
	t.Helper()
	ts, err := TasksOf(commandTasks)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestResultOf(t *testing.T) {
	pairs := func(kvs ...string) kv.Pairs {
		var ps kv.Pairs
		for i := 0; i+1 < len(kvs); i += 2 {
			ps = append(ps, kv.Pair{Key: kvs[i], Value: kvs[i+1]})
		}
		return ps
	}
	handed := &handedOut{state: "research", agent: "research-specialist", workers: []Worker{{ID: "research_1"}, {ID: "research_2"}}}
	isolated := &handedOut{state: "implement", agent: "implementation-executor", workers: []Worker{{ID: "phase_2"}}, isolated: true}
	tests := []struct {
		name string
		out  Output
		err  error
		want string // the result as JSON
	}{
		{"a wave", Output{handed: handed, Pairs: pairs("AGENT", "research-specialist", "SPEC_DIR", ".flowstate/specs/w", "WORKER_COUNT", "2", "ISOLATED_COUNT", "0",
			"TOPIC_1", "Auth", "OUTPUT_1", "reports/001_auth.md", "TOPIC_2", "Sessions", "OUTPUT_2", "reports/002_sessions.md", "NEXT", "work")},
			nil, `{"next":"work","state":"research","workers":[` +
				`{"id":"research_1","agentType":"flowstate:research-specialist","label":"research-specialist 1","phase":"research","prompt":"Topic: Auth\nRead first: .flowstate/specs/w/briefs/research-specialist.md\nWrite your result to: .flowstate/specs/w/reports/001_auth.md\nReturn exactly: REPORT_CREATED: reports/001_auth.md"},` +
				`{"id":"research_2","agentType":"flowstate:research-specialist","label":"research-specialist 2","phase":"research","prompt":"Topic: Sessions\nRead first: .flowstate/specs/w/briefs/research-specialist.md\nWrite your result to: .flowstate/specs/w/reports/002_sessions.md\nReturn exactly: REPORT_CREATED: reports/002_sessions.md"}]}`},
		// Each worker in a worktree of its own, whatever the block says:
		// the plan isolated the batch.
		{"an isolated wave", Output{handed: isolated, Pairs: pairs("AGENT", "implementation-executor", "SPEC_DIR", ".flowstate/specs/w", "BRIEF", "/p/.flowstate/specs/w/briefs/implementation-executor.md",
			"WORKER_COUNT", "0", "ISOLATED_COUNT", "1", "TOPIC_1", "Phase 2: Core", "OUTPUT_1", "summaries/002_phase_2.md", "NEXT", "work")},
			nil, `{"next":"work","state":"implement","workers":[` +
				`{"id":"phase_2","agentType":"flowstate:implementation-executor","label":"implementation-executor 1","phase":"implement","prompt":"Topic: Phase 2: Core\nRead first: /p/.flowstate/specs/w/briefs/implementation-executor.md\nWrite your result to: .flowstate/specs/w/summaries/002_phase_2.md\nReturn exactly: REPORT_CREATED: summaries/002_phase_2.md","isolation":"worktree"}]}`},
		{"the classifier", Output{Pairs: pairs("DESCRIPTION", "add login", "CLASSIFICATION_PATH", ".flowstate/specs/w/classification.json", "NEXT", "classify")}, nil,
			`{"next":"work","state":"classify","workers":[{"id":"classify","agentType":"flowstate:workflow-classifier","label":"Classify the workflow","phase":"classify","prompt":"Description: add login\nWrite the classification JSON to: .flowstate/specs/w/classification.json"}]}`},
		{"done", Output{Pairs: pairs("WORKFLOW_ID", "w", "FINAL_STATE", "research", "ARTIFACTS_DIR", ".flowstate/specs/w", "ARTIFACT_COUNT", "2", "NEXT", "done")}, nil,
			`{"next":"done","state":"research","message":"workflow w finished in state research: 2 artifacts in .flowstate/specs/w"}`},
		{"a gate", Output{Pairs: pairs("WORKFLOW_ID", "w", "STATUS", "awaiting_approval", "MESSAGE", "Workflow w waits for your approval.", "NEXT", "stopped")}, nil,
			`{"next":"stopped","message":"Workflow w waits for your approval."}`},
		{"a failed step", Output{}, fail.Usagef("research-specialist research_2 wrote no research report"), `{"next":"failed","message":"research-specialist research_2 wrote no research report"}`},
		{"a section no script runs", Output{Pairs: pairs("NEXT", "supervised")}, nil, `{"next":"failed","message":"flowstate answered NEXT=supervised, which a workflow script does not run"}`},
		{"a value the block lacks", Output{Pairs: pairs("AGENT", "x", "WORKER_COUNT", "1", "ISOLATED_COUNT", "0", "NEXT", "work")}, nil,
			`{"next":"failed","message":"the task block of \"## work\": no value printed for ${TOPIC_1}, ${SPEC_DIR}, ${SPEC_DIR}, ${OUTPUT_1}, ${OUTPUT_1}"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(ResultOf(tt.out, tt.err, tasks(t)))
			if string(b) != tt.want {
				t.Errorf("ResultOf =\n%s\nwant\n%s", b, tt.want)
			}
		})
	}
	if got := ResultOf(Output{Pairs: pairs("NEXT", "work")}, nil, Tasks{}); got.Next != NextFailed || !strings.Contains(got.Message, `no task block in its "## work" section`) {
		t.Errorf("a command without a work block: %+v", got)
	}
}

func TestStepTask(t *testing.T) {
	task := StepTask(StepVerify, "coordinate-20260101-000000-abcdef", "0a1b2c3d4e5f")
	for _, text := range []string{task, "  " + task + "\n", task + "\nmore"} {
		if k, w, l, ok := ParseStepTask(text); !ok || k != StepVerify || w != "coordinate-20260101-000000-abcdef" || l != "0a1b2c3d4e5f" {
			t.Errorf("ParseStepTask(%q) = %s %s %s %v", text, k, w, l, ok)
		}
	}
	for _, bad := range []string{"", "FLOWSTATE_STEP kind=run workflow=w launch=0a", "FLOWSTATE_STEP kind=plan workflow=../x launch=0a",
		"FLOWSTATE_STEP kind=plan workflow=w launch=XYZ", "please FLOWSTATE_STEP kind=plan workflow=w launch=0a", task + " extra"} {
		if _, _, _, ok := ParseStepTask(bad); ok {
			t.Errorf("ParseStepTask(%q) accepted", bad)
		}
	}
}

func TestJudge(t *testing.T) {
	l := newLaunch("coordinate-20260101-000000-abcdef", "flowstate:coordinate-flow", time.Now())
	args := json.RawMessage(l.Args)
	var a launchArgs
	_ = json.Unmarshal(args, &a)
	reordered := json.RawMessage(`{"launch":"` + a.Launch + `","workflow":"` + a.Workflow + `"}`)
	quoted, _ := json.Marshal(l.Args)
	granted := *l
	granted.Granted = time.Now()
	ended := *l
	ended.Ended = time.Now()
	tests := []struct {
		name     string
		l        *Launch
		call     WorkflowCall
		ok, ours bool
		why      string
	}{
		{"as printed", l, WorkflowCall{Name: l.Name, Args: args}, true, true, ""},
		{"keys reordered", l, WorkflowCall{Name: l.Name, Args: reordered}, true, true, ""},
		{"args as a string", l, WorkflowCall{Name: l.Name, Args: quoted}, true, true, ""},
		{"another saved workflow", l, WorkflowCall{Name: "deep-research", Args: args}, false, false, ""},
		{"no launch printed", nil, WorkflowCall{Name: l.Name, Args: args}, false, false, ""},
		{"truncated", l, WorkflowCall{Name: l.Name, Args: json.RawMessage(`{"workflow":"` + a.Workflow + `"}`)}, false, true, "not the ones flowstate printed"},
		{"paraphrased", l, WorkflowCall{Name: l.Name, Args: json.RawMessage(`{"workflow":"` + a.Workflow + `","launch":"` + a.Launch + `","note":"go"}`)}, false, true, "not the ones flowstate printed"},
		{"a string that is no object", l, WorkflowCall{Name: l.Name, Args: json.RawMessage(`"run it"`)}, false, true, "not the ones flowstate printed"},
		{"none", l, WorkflowCall{Name: l.Name}, false, true, "not the ones flowstate printed"},
		{"with a script", l, WorkflowCall{Name: l.Name, Args: args, Script: "export const meta = {}"}, false, true, "not with a script"},
		{"a resume of Claude Code's cache", l, WorkflowCall{Name: l.Name, Args: args, Resume: "wf_1"}, false, true, "not with a script or a resume"},
		{"launched already", &granted, WorkflowCall{Name: l.Name, Args: args}, false, true, "launched already"},
		{"ended", &ended, WorkflowCall{Name: l.Name, Args: args}, false, true, "has ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, ours, why := tt.l.Judge(tt.call)
			if ok != tt.ok || ours != tt.ours || !strings.Contains(why, tt.why) || (!ok && ours && !strings.Contains(why, `"## launched"`)) {
				t.Errorf("Judge = %v, %v, %q; want %v, %v, %q naming the ## launched block", ok, ours, why, tt.ok, tt.ours, tt.why)
			}
		})
	}
}

func TestLaunchPhase(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		l    Launch
		want launchPhase
	}{
		{"printed", Launch{}, launchPending},
		{"let through moments ago", Launch{Granted: now.Add(-time.Second)}, launchRunning},
		{"let through, never launched", Launch{Granted: now.Add(-time.Minute)}, launchPending},
		{"launched", Launch{Granted: now.Add(-time.Minute), Task: "w1"}, launchRunning},
		{"stepping, no task on record", Launch{Stepped: now}, launchRunning},
		{"its last step answered", Launch{Task: "w1", Ended: now, End: &LaunchEnd{}}, launchEnded},
		{"ended without its last step", Launch{Task: "w1", Ended: now, Notified: "failed"}, launchLost},
	}
	for _, tt := range tests {
		if got := tt.l.phase(now); got != tt.want {
			t.Errorf("%s: phase = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// script plays a workflow script and the model around it: a launch
// granted as the hook grants it, then steps until the script would
// return, each wave's files written as good agents would.
type script struct {
	t       *testing.T
	p       *store.Project
	session string
	d       *deliverer
	waves   [][]string // the workers of each wave, by id
}

// launchOf is the launch a block printed.
func launchOf(t *testing.T, out Output) (name string, call WorkflowCall, a launchArgs) {
	t.Helper()
	if value(t, out, "NEXT") != LaunchSection {
		t.Fatalf("want a launch:\n%s", out)
	}
	name = value(t, out, "WORKFLOW_NAME")
	raw := value(t, out, "WORKFLOW_ARGS")
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatal(err)
	}
	return name, WorkflowCall{Name: name, Args: json.RawMessage(raw)}, a
}

// launch grants the call out printed and runs its script to its end.
func (s *script) launch(out Output) StepResult {
	s.t.Helper()
	_, call, a := launchOf(s.t, out)
	if ok, _, why, err := GrantLaunch(s.p, s.session, call); !ok || err != nil {
		s.t.Fatalf("the launch printed was refused: %s %v", why, err)
	}
	if ok, ours, why, _ := GrantLaunch(s.p, s.session, call); ok || !ours || !strings.Contains(why, "launched already") {
		s.t.Errorf("a second launch was let through: %v %q", ok, why)
	}
	if err := LaunchStarted(s.p, s.session, call.Name, "wtask1", "wf_run1"); err != nil {
		s.t.Fatal(err)
	}
	req := StepRequest{Session: s.session, Workflow: a.Workflow, Launch: a.Launch, Tasks: tasks(s.t), Options: Options{Cwd: s.p.Dir}}
	kind := StepPlan
	for range 40 {
		req.Kind = kind
		res := RunStep(s.p, req)
		if kind == StepPlan {
			if again := RunStep(s.p, req); again.Next != NextStopped || !strings.Contains(again.Message, "under way already") {
				s.t.Errorf("a second run of the launch planned: %+v", again)
			}
		}
		if res.Next != NextWork {
			return res
		}
		s.run(res)
		kind = StepVerify
	}
	s.t.Fatal("the script never ended")
	return StepResult{}
}

// run writes the files of a wave's workers, as its agents would, and
// records their stops as the SubagentStop hook does.
func (s *script) run(res StepResult) {
	s.t.Helper()
	var ids []string
	for _, wk := range res.Workers {
		ids = append(ids, wk.ID)
		if wk.ID == "classify" {
			path := filepath.Join(s.p.Dir, strings.TrimPrefix(lineAfter(wk.Prompt, "Write the classification JSON to: "), ""))
			cls := `{"workflow_type": "full-implementation", "confidence": 0.9, "research_complexity": 2, "research_topics": ["auth", "sessions"], "reasoning": "r"}`
			if err := os.WriteFile(path, []byte(cls), 0o644); err != nil {
				s.t.Fatal(err)
			}
			continue
		}
		if s.d == nil {
			s.d = s.deliverer()
		}
		role, _ := RoleOf(s.d.m, res.State)
		path := filepath.Join(s.p.Dir, lineAfter(wk.Prompt, "Write your result to: "))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.t.Fatal(err)
		}
		data, err := s.d.artifact(role, filepath.Join(s.p.Dir, lineAfter(wk.Prompt, "Read first: "), "..", ".."))
		if err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			s.t.Fatal(err)
		}
		if wk.Phase != res.State || !strings.HasPrefix(wk.AgentType, "flowstate:") || wk.Label == "" {
			s.t.Errorf("worker %+v of a wave in %s", wk, res.State)
		}
	}
	s.waves = append(s.waves, ids)
}

func (s *script) deliverer() *deliverer {
	run, _ := ReadRun(s.p, s.session)
	w, err := s.p.Workflow(run.Workflow)
	if err != nil {
		s.t.Fatal(err)
	}
	return &deliverer{w: w, m: machine.Default(), written: map[string]bool{}}
}

func lineAfter(text, prefix string) string {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return v
		}
	}
	return ""
}

// TestWorkflowEngineFullImplementation: /coordinate on the workflow
// engine, classified by its agent inside the script, through the whole
// route with a failing first test run: one launch, each wave planned by
// the same code as the steps engine's (no sub-supervisor: the script
// runs the waves), each worker's launch recorded, and the block after
// the launch prints what the steps engine's last block prints.
func TestWorkflowEngineFullImplementation(t *testing.T) {
	p := project(t)
	s := &script{t: t, p: p, session: "s1"}
	r := Request{Command: "coordinate", Description: "add login", Session: s.session, Flow: "flowstate:coordinate-flow", Options: Options{Cwd: p.Dir}}
	out, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	_, _, a := launchOf(t, out)
	if ids, _ := p.List(); len(ids) != 0 {
		t.Fatalf("the start created %v before the classifier answered", ids)
	}
	if again, err := Start(p, r); err != nil || again.String() != out.String() {
		t.Errorf("the start run again printed\n%s(%v), want the same launch\n%s", again, err, out)
	}
	if _, ok := OnWorkflowEngine(p, s.session); !ok {
		t.Error("phase-plan in a session on the workflow engine is not sent to ## launched")
	}
	res := s.launch(out)
	if res.Next != NextDone || res.State != "complete" {
		t.Fatalf("the script ended with %+v", res)
	}
	want := [][]string{{"classify"}, {"research_1", "research_2"}, {"plan_1"}, {"phase_1"}, {"phase_2"},
		{"test_unit_r1", "test_integration_r1"}, {"debug_1"}, {"test_unit_r2", "test_integration_r2"}, {"document_1"}}
	if !slices.EqualFunc(s.waves, want, slices.Equal) {
		t.Errorf("waves %v, want %v", s.waves, want)
	}
	w, err := p.Workflow(a.Workflow)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := w.ReadCheckpoint()
	for path, want := range map[string]string{
		checkpoint.PathStatus:                             checkpoint.Complete,
		checkpoint.PhaseData("implement", "coordination"): scripted,
		checkpoint.PhaseData("research", "coordination"):  scripted,
		"error_state.retries.test":                        "1",
	} {
		if got := gjson.GetBytes(doc, path).String(); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	events, _ := w.ReadEvents()
	launches := 0
	for _, ev := range agentrun.Parse(events) {
		if ev.Event == agentrun.Launch && ev.WorkerID != "" && ev.Session == s.session && ev.Output != "" {
			launches++
		}
	}
	if launches != 11 {
		t.Errorf("%d worker launches recorded, want the 11 workers'", launches)
	}
	end, err := Launched(p, LaunchedRequest{Sel: store.Selector{Session: s.session}})
	if err != nil || value(t, end, "NEXT") != "done" || value(t, end, "FINAL_STATE") != "complete" || value(t, end, "ARTIFACT_COUNT") != "11" {
		t.Fatalf("the block after the launch: %v\n%s", err, end)
	}
	if again, _ := Launched(p, LaunchedRequest{Sel: store.Selector{Session: s.session}}); again.String() != end.String() {
		t.Errorf("run again it printed\n%s", again)
	}
}

// TestWorkflowEngineHolds: a gate ends the launch with the workflow
// waiting, a resume after the approval launches the rest, and a cancel
// from a shell ends the script at its next step.
func TestWorkflowEngineHolds(t *testing.T) {
	p2 := project(t)
	s2 := &script{t: t, p: p2, session: "s2"}
	r2 := Request{Command: "orchestrate", Scope: "full-implementation", Description: "add login", ApprovePlan: true, Session: s2.session,
		Flow: "flowstate:orchestrate-flow", Options: Options{Cwd: p2.Dir}}
	out, err := Start(p2, r2)
	if err != nil {
		t.Fatal(err)
	}
	res := s2.launch(out)
	if res.Next != NextStopped || !strings.Contains(res.Message, "waits for your approval to enter implement") {
		t.Fatalf("at the gate the script got %+v", res)
	}
	end, err := Launched(p2, LaunchedRequest{Sel: store.Selector{Session: s2.session}})
	if err != nil || value(t, end, "NEXT") != Stopped || value(t, end, "STATUS") != checkpoint.AwaitingApproval {
		t.Fatalf("the block after a launch that reached the gate: %v\n%s", err, end)
	}
	ids, _ := p2.List()
	w, _ := p2.Workflow(ids[0].ID)
	if _, err := sm.Approve(w, sm.Actor{By: "ann", Via: "shell"}, "ok"); err != nil {
		t.Fatal(err)
	}
	out, err = Resume(p2, ResumeRequest{Flow: "flowstate:workflow-resume-flow", Actor: sm.Actor{By: "ann"}}, store.Selector{Session: "s3"}, Options{Cwd: p2.Dir})
	if err != nil {
		t.Fatal(err)
	}
	s3 := &script{t: t, p: p2, session: "s3", d: s2.d}
	_, call, a := launchOf(t, out)
	if ok, _, why, _ := GrantLaunch(p2, s3.session, call); !ok {
		t.Fatal(why)
	}
	req := StepRequest{Session: s3.session, Kind: StepPlan, Workflow: a.Workflow, Launch: a.Launch, Tasks: tasks(t), Options: Options{Cwd: p2.Dir}}
	res = RunStep(p2, req)
	if res.Next != NextWork || res.State != "implement" || res.Workers[0].ID != "phase_1" {
		t.Fatalf("after the approval the new session's launch planned %+v", res)
	}
	// The old session's script, were it still at work, ends at its next
	// step: the workflow is this session's now.
	if old := RunStep(p2, StepRequest{Session: s2.session, Kind: StepVerify, Workflow: a.Workflow, Launch: a.Launch, Tasks: tasks(t)}); old.Next != NextStopped {
		t.Errorf("another session's step: %+v", old)
	}
	s3.run(res)
	if err := sm.Cancel(w, sm.Actor{By: "ann", Via: "shell"}, "wrong approach"); err != nil {
		t.Fatal(err)
	}
	req.Kind = StepVerify
	if res = RunStep(p2, req); res.Next != NextStopped || !strings.Contains(res.Message, "cancel") {
		t.Fatalf("after a cancel the script's next step answered %+v", res)
	}
}

// TestLaunchedAfterAScriptThatFailed: a launch whose script ended
// without its last step is made again while its steps reached flowstate,
// and the workflow goes on with the steps engine when none did.
func TestLaunchedAfterAScriptThatFailed(t *testing.T) {
	p := project(t)
	r := Request{Command: "orchestrate", Scope: "research-only", Description: "auth", Session: "s1", Flow: "flowstate:orchestrate-flow", Options: Options{Cwd: p.Dir}}
	out, err := Start(p, r)
	if err != nil {
		t.Fatal(err)
	}
	_, call, a := launchOf(t, out)
	sel := store.Selector{Session: "s1"}
	if again, err := Launched(p, LaunchedRequest{Sel: sel}); err != nil || value(t, again, "WORKFLOW_ARGS") != a.args(t) {
		t.Errorf("before the Workflow call the block after it printed\n%s(%v), want the launch again", again, err)
	}
	if ok, _, _, _ := GrantLaunch(p, "s1", call); !ok {
		t.Fatal("refused")
	}
	if err := LaunchStarted(p, "s1", call.Name, "wtask1", "wf_1"); err != nil {
		t.Fatal(err)
	}
	running, err := Launched(p, LaunchedRequest{Sel: sel})
	if err != nil || value(t, running, "NEXT") != LaunchedSection {
		t.Fatalf("while the script works: %v\n%s", err, running)
	}
	if res := RunStep(p, StepRequest{Session: "s1", Kind: StepPlan, Workflow: a.Workflow, Launch: a.Launch, Tasks: tasks(t), Options: Options{Cwd: p.Dir}}); res.Next != NextWork {
		t.Fatalf("plan: %+v", res)
	}
	notification := "<task-notification>\n<task-id>wtask1</task-id>\n<status>failed</status>\n</task-notification>"
	if err := LaunchNotified(p, "s1", notification); err != nil {
		t.Fatal(err)
	}
	again, err := Launched(p, LaunchedRequest{Sel: sel})
	_, _, a2 := launchOf(t, again)
	if err != nil || a2.Launch == a.Launch || a2.Workflow != a.Workflow {
		t.Fatalf("a script that failed after its first step: %v\n%s", err, again)
	}
	// The new launch's script never reaches flowstate (the hooks do not
	// answer): the workflow goes on with the steps engine.
	_, call, _ = launchOf(t, again)
	if ok, _, _, _ := GrantLaunch(p, "s1", call); !ok {
		t.Fatal("refused")
	}
	if err := LaunchStarted(p, "s1", call.Name, "wtask2", "wf_2"); err != nil {
		t.Fatal(err)
	}
	if err := LaunchNotified(p, "s1", strings.ReplaceAll(notification, "wtask1", "wtask2")); err != nil {
		t.Fatal(err)
	}
	steps, err := Launched(p, LaunchedRequest{Sel: sel})
	if err != nil || value(t, steps, "NEXT") != "work" || len(steps.Warnings) == 0 || !strings.Contains(steps.Warnings[0].Text, "steps engine") {
		t.Fatalf("a script whose steps never reached flowstate: %v\n%s%v", err, steps, steps.Warnings)
	}
	if _, ok := OnWorkflowEngine(p, "s1"); ok {
		t.Error("after the switch, phase-plan is still sent to ## launched")
	}
}

func (a launchArgs) args(t *testing.T) string {
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
