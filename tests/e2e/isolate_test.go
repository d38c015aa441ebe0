//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// The built-in implement state runs each phase's implementer in a git
// worktree of its own (isolation "worktree"), and merges the branches of
// each wave into the working branch in plan order: in the real CLI, whose
// Agent tool makes the worktrees, with the stand-in's diamond plan
// (phase 1, then phases 2 and 3 side by side, then phase 4) through the
// implement state's sub-supervisor. The implementers edit routes.txt, a
// file of the person's project, with the Edit tool; the person accepts
// edits, as they do for implementers.

// routes is the project's shared file, committed before the run.
const routes = "alpha: todo\nbeta: todo\ngamma: todo\n"

// Which drifts each scenario runs under: those that change what its
// isolated waves meet. The implement state's waves run in its
// sub-supervisor, which drifts only as twice (its blocks run twice: each
// merge made once) and general-purpose (its workers launched as
// general-purpose agents, recognised by their prompts, reading their
// file from a worktree); the main thread's drifts act on the steps
// around the state, and count where the command stops and resumes in it
// (a failed worker, a kill). The main thread's own isolated batch,
// where a model that drops the block's isolation matters (background:
// the hook puts it back), runs under every drift (TestIsolatedYourOwnCommand).
// On the workflow engine the script runs every wave itself, isolated
// by the step's answer, and a scenario runs as the protocol says.
var (
	waveModes   = []mode{steps(standin.Drift{}), steps(standin.Drift{Twice: true}), steps(standin.Drift{GeneralPurpose: true}), {Engine: workflowEngine}}
	resumeModes = []mode{steps(standin.Drift{}), steps(standin.Drift{Twice: true}), steps(standin.Drift{GeneralPurpose: true}), steps(standin.Drift{Background: true}),
		steps(standin.Drift{StopEvery: 3}), steps(standin.Drift{SkipBlock: standin.Skip{AfterAgents: true}}), {Engine: workflowEngine}}
)

func underModes(t *testing.T, modes []mode, scenario func(t *testing.T, m mode)) {
	for _, m := range modes {
		t.Run(m.Engine+"/"+m.Drift.String(), func(t *testing.T) { scenario(t, m) })
	}
}

// isolatedScenario is a flowstate scenario whose project holds routes.txt
// committed, whose runs accept edits.
func isolatedScenario(t *testing.T, m mode, knobs standin.Knobs) *scenario {
	t.Helper()
	s := flowstateScenario(t, m, knobs)
	if err := os.WriteFile(s.path("routes.txt"), []byte(routes), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git("add", "routes.txt")
	s.git("commit", "-q", "-m", "routes")
	s.Permissions = acceptEdits
	return s
}

// edits has the implementer of each phase ("Phase 2:") change routes.txt:
// the first of its old texts the file holds.
func edits(pairs map[string][]string) []standin.Edit {
	var out []standin.Edit
	for _, phase := range slices.Sorted(func(yield func(string) bool) {
		for p := range pairs {
			if !yield(p) {
				return
			}
		}
	}) {
		out = append(out, standin.Edit{Topic: phase + ":", Path: "routes.txt", Pairs: pairs[phase]})
	}
	return out
}

// diamond are the edits of the diamond's phases: the middle wave's two
// phases edit routes.txt in different places, phase 4 after them.
var diamond = map[string][]string{
	"Phase 1": {"beta: todo", "beta: phase 1"},
	"Phase 2": {"alpha: todo", "alpha: phase 2"},
	"Phase 3": {"gamma: todo", "gamma: phase 3"},
	"Phase 4": {"beta: phase 1", "beta: phase 1 and 4"},
}

const allLand = "alpha: phase 2\nbeta: phase 1 and 4\ngamma: phase 3\n"

const orchestrateFull = "/flowstate:orchestrate --scope full-implementation add an audit log to the admin API"

// output runs git in the project and returns what it printed.
func (s *scenario) output(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.Project
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// expectNothingLeft checks that the waves left no worktree, no branch of
// theirs and no merge in progress behind, and a clean tree.
func (s *scenario) expectNothingLeft() {
	s.t.Helper()
	for _, left := range testenv.WaveLeftovers(s.t, s.Project) {
		s.t.Errorf("left behind: %s", left)
	}
}

// stoppedOn runs the full implementation, which must stop on a failed
// step whose message says each of want (the model reports it and ends:
// exit 0), and returns its workflow.
func (s *scenario) stoppedOn(want ...string) *workflow {
	s.t.Helper()
	r := s.claude(orchestrateFull, "flowstate")
	for _, w := range want {
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, w) {
			s.t.Fatalf("want the command stopped saying %q, got exit %d:\n%s", w, r.ExitCode, r.Stdout)
		}
	}
	return s.onlyWorkflow()
}

// resumeCompletes runs /workflow-resume with a fresh stand-in of knobs
// and checks that it completes with every phase's edit of the diamond in
// routes.txt and nothing left behind.
func (s *scenario) resumeCompletes(knobs standin.Knobs) {
	s.t.Helper()
	s.restartModel(knobs, "resume")
	r := s.run("/flowstate:workflow-resume")
	s.expectNoDenials()
	expectOutput(s.t, r, "FINAL_STATE=complete")
	if got := s.read("routes.txt"); got != allLand {
		s.t.Errorf("routes.txt = %q, want %q", got, allLand)
	}
	s.expectNothingLeft()
}

// wrappedGit is env with a git first in its PATH whose script runs the
// real git (its path given to script) and misbehaves as the script says.
func wrappedGit(t *testing.T, env []string, script func(real string) string) []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script(real)), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(env), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// raced is want, or, when Claude Code failed to make the worktree of one
// of the stand-in's Agent calls, whenRaced: git (2.39) can fail one of
// a batch's worktrees made at once, as TestIsolatedWorktreeNotMade
// forces, and the worker is launched again alone.
func raced(t *testing.T, m *standin.Server, want, whenRaced string) string {
	for _, e := range m.Exchanges() {
		for _, u := range e.Tools {
			if u.Name == "Agent" && m.Unstarted(u.ID) {
				t.Logf("Claude Code failed to make a worktree (tool call %s): want %s", u.ID, whenRaced)
				return whenRaced
			}
		}
	}
	return want
}

// merges counts the implement state's merge events by worker and status
// ("phase_2 merged": 1).
func (w *workflow) merges() map[string]int {
	out := map[string]int{}
	for _, e := range w.eventsOf("merge") {
		if e.Get("state").String() == "implement" {
			out[e.Get("worker_id").String()+" "+e.Get("status").String()]++
		}
	}
	return out
}

// expectIsolatedAgents checks that every implementation-executor worked
// in a worktree of the project's and no other agent did: the hooks
// recorded each one's start and stop there.
func (w *workflow) expectIsolatedAgents(project string) {
	w.t.Helper()
	dir := filepath.Join(project, ".claude", "worktrees") + "/"
	for _, e := range append(w.eventsOf("agent_start"), w.eventsOf("agent_stop")...) {
		wt, worker := e.Get("worktree").String(), e.Get("agent_type").String() == "implementation-executor"
		switch {
		case worker && !strings.HasPrefix(wt, dir):
			w.t.Errorf("an implementer worked in the project's tree: %s", e.Raw)
		case !worker && wt != "":
			w.t.Errorf("an agent other than an implementer worked in a worktree: %s", e.Raw)
		}
	}
}

// TestIsolatedDiamond: the full implementation with the diamond plan. The
// two phases of the middle wave edit one file in different places: both
// edits land. Every phase's edits end in the working branch, each
// branch merged once in plan order, and no worktree or branch is left.
func TestIsolatedDiamond(t *testing.T) { underModes(t, waveModes, testIsolatedDiamond) }

func testIsolatedDiamond(t *testing.T, m mode) {
	s := isolatedScenario(t, m, standin.Knobs{Edits: edits(diamond)})
	r := s.run(orchestrateFull)
	s.expectNoDenials()
	expectOutput(t, r, "FINAL_STATE=complete")
	if got := s.read("routes.txt"); got != allLand {
		t.Errorf("routes.txt = %q, want every phase's edit: %q", got, allLand)
	}
	w := s.onlyWorkflow()
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	if got, want := w.merges(), map[string]int{"phase_1 merged": 1, "phase_2 merged": 1, "phase_3 merged": 1, "phase_4 merged": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merges %v, want %v", got, want)
	}
	log := s.output("log", "--merges", "--format=%an %s")
	if !strings.Contains(log, "flowstate flowstate: merge phase_2 ") || strings.Index(log, "merge phase_3 ") > strings.Index(log, "merge phase_2 ") {
		t.Errorf("merge commits, newest first, want phase 2 merged before phase 3:\n%s", log)
	}
	w.expectIsolatedAgents(s.Project)
	if got, want := s.batches("implementation-executor"), raced(t, s.Model, "[1 2 1]", "[1 1 1 1]"); fmt.Sprint(got) != want {
		t.Errorf("implementation-executor waves %v, want the plan's diamond %s", got, want)
	}
	status := s.shell("status")
	if n := strings.Count(status, "; branch worktree-"); n != 4 {
		t.Errorf("status shows %d workers' branches, want 4:\n%s", n, status)
	}
	s.expectNothingLeft()
}

// TestIsolatedConflict: the two phases of the middle wave change the same
// line. Phase 2's branch merges; phase 3's conflicts: its merge is
// aborted (nothing half-merged), the conflict recorded and shown, its
// attempt kept (its change as a patch, its summary beside it), and the
// built-in implement state runs its implementer again, alone, on the
// merged tree, its brief naming the conflict and both summaries: it
// keeps phase 2's change, and the workflow completes.
func TestIsolatedConflict(t *testing.T) { underModes(t, waveModes, testIsolatedConflict) }

func testIsolatedConflict(t *testing.T, m mode) {
	same := map[string][]string{
		"Phase 2": {"alpha: todo", "alpha: phase 2"},
		"Phase 3": {"alpha: todo", "alpha: phase 3", "alpha: phase 2", "alpha: phase 2 and 3"},
	}
	s := isolatedScenario(t, m, standin.Knobs{Edits: edits(same)})
	r := s.run(orchestrateFull)
	s.expectNoDenials()
	expectOutput(t, r, "FINAL_STATE=complete")
	if got := s.read("routes.txt"); got != "alpha: phase 2 and 3\nbeta: todo\ngamma: todo\n" {
		t.Errorf("routes.txt = %q, want both phases' changes", got)
	}
	w := s.onlyWorkflow()
	if got, want := w.merges(), map[string]int{"phase_1 empty": 1, "phase_2 merged": 1, "phase_3 conflict": 2, "phase_3 merged": 1, "phase_4 empty": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merges %v, want %v", got, want)
	}
	patch := filepath.Join(".flowstate", "specs", w.ID, "attempts", "phase_3.1.patch")
	if got := s.read(patch); !strings.Contains(got, "+alpha: phase 3") {
		t.Errorf("phase 3's first attempt is not kept in %s: %q", patch, got)
	}
	if !s.exists(strings.TrimSuffix(patch, ".patch") + ".md") {
		t.Errorf("phase 3's first summary is not kept")
	}
	runs := 0
	for _, c := range s.calls() {
		if c.Persona == "implementation-executor" && strings.Contains(c.Prompt, "Topic: Phase 3:") {
			runs++
		}
	}
	if runs != 2 {
		t.Errorf("phase 3's implementer ran %d times, want twice", runs)
	}
	// What its brief said is tests/plugin's TestIsolatedConflictRedone:
	// the brief a wave after it reads is the state's next.
	if history := s.shell("history"); !strings.Contains(history, "implement worker phase_3: branch worktree-") || !strings.Contains(history, "conflicts with phase_2 in routes.txt, merge aborted") {
		t.Errorf("history does not report the conflict:\n%s", history)
	}
	if status := s.shell("status"); !strings.Contains(status, "phase_3 conflict: "+patch) {
		t.Errorf("status does not show the conflict's attempt kept:\n%s", status)
	}
	s.expectNothingLeft()
}

// TestIsolatedWorkerFails: phase 3's implementer changes routes.txt in
// its worktree and writes no summary. Phase 2's branch merges; phase 3's
// half work is kept as a patch, its worktree and branch removed; the
// command stops on the missing summary. The resume runs phase 3 alone, in
// a fresh worktree from the merged tree, and completes.
func TestIsolatedWorkerFails(t *testing.T) { underModes(t, resumeModes, testIsolatedWorkerFails) }

func testIsolatedWorkerFails(t *testing.T, m mode) {
	s := isolatedScenario(t, m, standin.Knobs{Edits: edits(diamond), MissingWorker: "Topic: Phase 3:"})
	w := s.stoppedOn("wrote no implementation summary")
	if got := w.merges(); got["phase_2 merged"] != 1 || got["phase_3 discarded"] != 1 {
		t.Errorf("merges %v, want phase 2 merged and phase 3's attempt discarded", got)
	}
	if got := s.read("routes.txt"); got != "alpha: phase 2\nbeta: phase 1\ngamma: todo\n" {
		t.Errorf("routes.txt = %q, want phases 1 and 2 merged, nothing of phase 3's", got)
	}
	first := s.read(filepath.Join(".flowstate", "specs", w.ID, "attempts", "phase_3.1.patch"))
	if !strings.Contains(first, "+gamma: phase 3") {
		t.Errorf("phase 3's half work is not kept: %q", first)
	}
	if trees := s.output("worktree", "list"); strings.Count(trees, "\n") != 0 {
		t.Errorf("the failed attempt's worktree is left:\n%s", trees)
	}
	s.resumeCompletes(standin.Knobs{Edits: edits(diamond)})
	if got := s.batches("implementation-executor"); fmt.Sprint(got) != "[1 1]" {
		t.Errorf("the resume's implementation waves %v, want phase 3 alone, then phase 4", got)
	}
}

// TestIsolatedKilledBetweenMerges: the CLI is killed, flowstate with it,
// after git made the first merge of the middle wave and before flowstate
// recorded it. A new session's resume records that merge without making
// it again, merges the other branch, and completes: each branch merged
// exactly once.
func TestIsolatedKilledBetweenMerges(t *testing.T) {
	underModes(t, resumeModes, testIsolatedKilledBetweenMerges)
}

func testIsolatedKilledBetweenMerges(t *testing.T, m mode) {
	s := isolatedScenario(t, m, standin.Knobs{Edits: edits(diamond)})
	// A git that, after the second merge flowstate makes (phase 1's, then
	// the first of phases 2 and 3), says so and waits to be killed.
	marks := t.TempDir()
	paused := filepath.Join(marks, "paused")
	plain := s.Env
	s.Env = wrappedGit(t, plain, func(real string) string {
		return "#!/bin/sh\n" + real + " \"$@\"\nrc=$?\ncase \" $* \" in *\" merge --no-ff \"*)\n" +
			"  echo >> " + filepath.Join(marks, "merges") + "\n" +
			"  [ \"$(wc -l < " + filepath.Join(marks, "merges") + ")\" -eq 2 ] && { touch " + paused + "; sleep 600; } ;;\nesac\nexit $rc\n"
	})
	p := s.start(orchestrateFull)
	s.waitUntil("flowstate made the middle wave's first merge", 2*time.Minute, func() bool { return s.exists(paused) }, p)
	p.kill()
	killed := p.wait()
	if killed.ExitCode == 0 {
		t.Errorf("the killed CLI exited 0")
	}
	w := s.onlyWorkflow()
	if got := w.merges(); got["phase_1 merged"] != 1 || len(got) != 1 {
		t.Errorf("merges recorded before the kill %v, want phase 1's alone", got)
	}
	s.Env = plain
	want := raced(t, s.Model, "[1]", "[1 1]")
	s.resumeCompletes(standin.Knobs{Edits: edits(diamond)})
	w = s.onlyWorkflow()
	if got, want := w.merges(), map[string]int{"phase_1 merged": 1, "phase_2 merged": 1, "phase_3 merged": 1, "phase_4 merged": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merges %v, want %v", got, want)
	}
	log := s.output("log", "--merges", "--format=%s")
	for _, phase := range []string{"phase_1", "phase_2", "phase_3", "phase_4"} {
		if n := strings.Count(log, "merge "+phase+" "); n != 1 {
			t.Errorf("%s merged %d times, want once:\n%s", phase, n, log)
		}
	}
	if got := s.batches("implementation-executor"); fmt.Sprint(got) != want {
		t.Errorf("the resume's implementation waves %v, want %s: phase 4 alone (and a middle-wave worker whose worktree Claude Code failed to make): the middle wave is not run again", got, want)
	}
}

// TestIsolatedYourOwnCommand: /audit, written by `flowstate new command`,
// its reviewers given the Edit tool to apply what they find and its
// review state told "isolation": "worktree" in its definition:
// the command's own task block launches the three reviewers, each in a
// worktree of its own, from the main thread (no sub-supervisor for
// three). Two of them change routes.txt in different places; both land,
// and nothing is left, under every drift of the main thread.
func TestIsolatedYourOwnCommand(t *testing.T) {
	modes := []mode{{Engine: workflowEngine}}
	for _, d := range drifts[stepsEngine] {
		modes = append(modes, steps(d))
	}
	underModes(t, modes, testIsolatedYourOwnCommand)
}

func testIsolatedYourOwnCommand(t *testing.T, m mode) {
	s := isolatedScenario(t, m, standin.Knobs{Edits: []standin.Edit{
		{Topic: "correctness", Path: "routes.txt", Pairs: []string{"alpha: todo", "alpha: correct"}},
		{Topic: "security", Path: "routes.txt", Pairs: []string{"gamma: todo", "gamma: secure"}},
	}})
	s.shell("new", "command", "audit")
	// The person's reviewers apply the fixes they find: they edit, each
	// in a worktree of its own.
	for file, change := range map[string][2]string{
		".claude/flows/audit.json":         {`"min_delivered": 2`, `"min_delivered": 2, "isolation": "worktree"`},
		".claude/agents/audit-reviewer.md": {"tools: Read, Write, Bash", "tools: Read, Write, Edit, Bash"},
	} {
		if err := os.WriteFile(s.path(file), []byte(strings.Replace(s.read(file), change[0], change[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.git("add", ".claude")
	s.git("commit", "-q", "-m", "the audit command")
	r := s.run("/audit the login handler")
	s.expectNoDenials()
	expectOutput(t, r, "FINAL_STATE=complete")
	if got := s.read("routes.txt"); got != "alpha: correct\nbeta: todo\ngamma: secure\n" {
		t.Errorf("routes.txt = %q, want both reviewers' changes", got)
	}
	w := s.onlyWorkflow()
	n := 0
	for _, e := range w.eventsOf("merge") {
		if e.Get("status").String() == "merged" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d branches merged, want the two reviewers' that changed something", n)
	}
	if got := s.batches("audit-reviewer"); len(got) != 1 || got[0] != 3 {
		t.Errorf("the reviewers were launched in messages of %v, want all three in one", got)
	}
	for _, e := range w.eventsOf("agent_start") {
		if e.Get("agent_type").String() == "audit-reviewer" && e.Get("worktree").String() == "" {
			t.Errorf("a reviewer worked in the project's tree: %s", e.Raw)
		}
	}
	s.expectNothingLeft()
}

// TestIsolatedStrayWrite: phase 2's implementer also writes a file of the
// project's tree with a shell command, outside its worktree. The wave
// stops before any merge goes over it, naming the file; phase 2, which
// ran shell commands, counts as failed, its attempt kept; phase 3, which
// did not, waits. Once the person takes the file away, the resume merges
// phase 3, runs phase 2 again alone, and completes. On the workflow
// engine, what shell commands a worker ran is read from its transcript.
func TestIsolatedStrayWrite(t *testing.T) { underEachEngine(t, testIsolatedStrayWrite) }

func testIsolatedStrayWrite(t *testing.T, m mode) {
	s := isolatedScenario(t, m, standin.Knobs{})
	// The stray write's path is the scratch project's.
	stray := s.path("stray.txt")
	s.restartModel(standin.Knobs{Edits: edits(diamond), Stray: standin.Stray{Topic: "Phase 2:", Path: stray}}, "stray")
	w := s.stoppedOn("stray.txt (untracked)", "phase_2 ran shell commands and may have written them: it counts as failed")
	if got := w.merges(); got["phase_2 discarded"] != 1 || got["phase_3 merged"] != 0 {
		t.Errorf("merges %v, want phase 2's attempt discarded and phase 3 not merged over the stray file", got)
	}
	if got := s.read("routes.txt"); got != "alpha: todo\nbeta: phase 1\ngamma: todo\n" {
		t.Errorf("routes.txt = %q, want phase 1's change only", got)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	s.resumeCompletes(standin.Knobs{Edits: edits(diamond)})
}

// TestIsolatedIgnoredArtifacts: the person's .gitignore ignores
// .flowstate/. An implementer that changes nothing but writes its summary
// leaves a worktree git sees as unchanged, which Claude Code removes as
// the agent ends, ignored files and all: the SubagentStop hook, which
// runs before that, has brought the summary into the project.
func TestIsolatedIgnoredArtifacts(t *testing.T) {
	s := isolatedScenario(t, steps(standin.Drift{}), standin.Knobs{Edits: edits(map[string][]string{"Phase 2": diamond["Phase 2"], "Phase 3": diamond["Phase 3"]})})
	if err := os.WriteFile(s.path(".gitignore"), []byte(".flowstate/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git("add", ".gitignore")
	s.git("commit", "-q", "-m", "ignore the specs")
	r := s.run(orchestrateFull)
	s.expectNoDenials()
	expectOutput(t, r, "FINAL_STATE=complete")
	w := s.onlyWorkflow()
	w.expectWorkers("implementation_supervisor", map[string]string{"phase_1": "completed", "phase_2": "completed", "phase_3": "completed", "phase_4": "completed"})
	if got, want := w.merges(), map[string]int{"phase_1 empty": 1, "phase_2 merged": 1, "phase_3 merged": 1, "phase_4 empty": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merges %v, want %v", got, want)
	}
	if got := s.read("routes.txt"); got != "alpha: phase 2\nbeta: todo\ngamma: phase 3\n" {
		t.Errorf("routes.txt = %q", got)
	}
	s.expectNothingLeft()
}

// TestIsolatedWorktreeNotMade: Claude Code cannot make the worktree of
// one worker of the middle wave (git fails, as it can when a batch's
// worktrees are made at once), and its Agent call fails before the
// agent runs. The model goes on; the verify takes the worker as never
// started, not failed, and the next plan launches it again: the workflow
// completes in the one run.
func TestIsolatedWorktreeNotMade(t *testing.T) {
	s := isolatedScenario(t, steps(standin.Drift{}), standin.Knobs{Edits: edits(diamond)})
	// A git whose second worktree add fails, as git 2.39 does when it
	// reads another worktree's half-written entry. The middle wave's two
	// adds run at once: each takes its number under a lock (a directory
	// made atomically), so that exactly one of them is the second.
	marks := t.TempDir()
	count, lock := filepath.Join(marks, "adds"), filepath.Join(marks, "lock")
	s.Env = wrappedGit(t, s.Env, func(real string) string {
		return "#!/bin/sh\ncase \" $* \" in *\" worktree add \"*)\n" +
			"  until mkdir " + lock + " 2>/dev/null; do sleep 0.01; done\n" +
			"  echo >> " + count + "; n=$(wc -l < " + count + "); rmdir " + lock + "\n" +
			"  [ \"$n\" -eq 2 ] && { echo 'fatal: failed to read commondir: Success' >&2; exit 128; } ;;\nesac\nexec " + real + " \"$@\"\n"
	})
	r := s.run(orchestrateFull)
	s.expectNoDenials()
	expectOutput(t, r, "FINAL_STATE=complete")
	// The middle wave's second call launched nobody: each wave's agents
	// that ran, the one launched again alone.
	if got := s.batches("implementation-executor"); fmt.Sprint(got) != "[1 1 1 1]" {
		t.Errorf("implementation-executor waves %v, want phase 1, phase 2 (phase 3's call failed), phase 3 again, phase 4: [1 1 1 1]", got)
	}
	var said bool
	for _, out := range s.Model.BashResults() {
		said = said || strings.Contains(out, "never started (its Agent call failed, as when Claude Code cannot make a worktree); launched again")
	}
	if !said {
		t.Errorf("no step said the worker was launched again")
	}
	if got := s.read("routes.txt"); got != allLand {
		t.Errorf("routes.txt = %q, want %q", got, allLand)
	}
	s.expectNothingLeft()
}
