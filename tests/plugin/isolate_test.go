package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// Workers of one wave that each run in a git worktree of their own
// (isolation "worktree"), merged in plan order: played against a real
// git repository, the fake agents doing what Claude Code does with an
// Agent call that asks for a worktree. These runs have no hooks, so the
// verify finds each worker's worktree by the file it wrote there.

// routes is the project's shared file: the workers of one wave edit it.
const routes = "alpha: todo\nbeta: todo\ngamma: todo\n"

// twoPhases is a plan of one wave of two phases: they run side by side,
// flat (fewer than the implement state's three for a sub-supervisor).
const twoPhases = "# Plan\n\n### Phase 1: Alpha\ndependencies: []\n\n### Phase 2: Gamma\ndependencies: []\n"

// newGitWorld is a world whose project is a git repository on main,
// with routes.txt committed.
func newGitWorld(t *testing.T, agents fakeAgents) *world {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	w := newWorld(t, agents)
	if err := os.Remove(filepath.Join(w.Dir, ".git")); err != nil {
		t.Fatal(err)
	}
	w.git("init", "-q", "-b", "main")
	w.git("config", "user.email", "person@example.com")
	w.git("config", "user.name", "person")
	w.write("routes.txt", routes)
	w.git("add", ".")
	w.git("commit", "-q", "-m", "initial")
	return w
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return w.gitIn(w.Dir, args...)
}

func (w *world) gitIn(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (w *world) write(rel, content string) {
	w.t.Helper()
	path := filepath.Join(w.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// worktree makes what Claude Code 2.1.328 makes for an Agent call with
// isolation "worktree": .claude/worktrees/agent-<id> on branch
// worktree-agent-<id>, from HEAD.
func (w *world) worktree() string {
	w.t.Helper()
	w.trees++
	id := "a" + strconv.Itoa(w.trees)
	dir := filepath.Join(w.Dir, ".claude", "worktrees", "agent-"+id)
	w.git("worktree", "add", "-q", "-b", "worktree-agent-"+id, dir, "HEAD")
	return dir
}

// keepOrRemove does what Claude Code does as an isolated agent ends: a
// worktree in which the agent changed nothing goes, with its branch.
func (w *world) keepOrRemove(dir string) {
	w.t.Helper()
	if w.gitIn(dir, "status", "--porcelain") != "" || w.gitIn(dir, "rev-list", "--count", "main..HEAD") != "0" {
		return
	}
	branch := w.gitIn(dir, "branch", "--show-current")
	w.git("worktree", "remove", "--force", dir)
	w.git("branch", "-D", branch)
}

// edit replaces the first of each pair's old text found in rel of dir
// with its new text, as an implementer that reads the file and changes
// what it finds does.
func edit(t *testing.T, dir, rel string, pairs ...string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.Contains(string(b), pairs[i]) {
			if err := os.WriteFile(path, []byte(strings.Replace(string(b), pairs[i], pairs[i+1], 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s holds none of %q", path, pairs)
}

// phaseEdits has the implementer of each phase edit routes.txt: the
// phase's number picks the pairs.
func phaseEdits(t *testing.T, edits map[string][]string) func(inv invocation, dir string) {
	return func(inv invocation, dir string) {
		if inv.Agent != "implementation-executor" {
			return
		}
		for phase, pairs := range edits {
			if strings.HasPrefix(inv.Prompt, "Topic: "+phase+":") {
				edit(t, dir, "routes.txt", pairs...)
			}
		}
	}
}

// expectNothingLeft checks that the waves left no worktree and no
// branch of theirs behind.
func (w *world) expectNothingLeft() {
	w.t.Helper()
	for _, left := range testenv.WaveLeftovers(w.t, w.Dir) {
		w.t.Errorf("left behind: %s", left)
	}
}

// merges are the recorded merges of the implement state, by worker.
func (w *world) merges() map[string]string {
	out := map[string]string{}
	gjson.Get(w.flowstate("checkpoint-get", "phase_data"), "implement.merges").ForEach(func(id, m gjson.Result) bool {
		out[id.String()] = m.Get("status").String()
		return true
	})
	return out
}

// TestIsolatedDiamond: the built-in full implementation with the plan's
// diamond, four phases in three waves through the sub-supervisor; the
// two phases of the middle wave edit one file in different places. Every
// phase's edits end in the working branch, each merged once, in plan
// order, and no worktree or branch is left.
func TestIsolatedDiamond(t *testing.T) {
	w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth")})
	w.Agents.Work = phaseEdits(t, map[string][]string{
		"Phase 1": {"beta: todo", "beta: phase 1"},
		"Phase 2": {"alpha: todo", "alpha: phase 2"},
		"Phase 3": {"gamma: todo", "gamma: phase 3"},
		"Phase 4": {"beta: phase 1", "beta: phase 1 and 4"},
	})
	out, err := w.command("coordinate", "build login with sessions")
	if err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	if got := string(w.read("routes.txt")); got != "alpha: phase 2\nbeta: phase 1 and 4\ngamma: phase 3\n" {
		t.Errorf("routes.txt = %q", got)
	}
	for id, st := range map[string]string{"phase_1": "merged", "phase_2": "merged", "phase_3": "merged", "phase_4": "merged"} {
		if got := w.merges()[id]; got != st {
			t.Errorf("%s: merge %q, want %s (all: %v)", id, got, st, w.merges())
		}
	}
	log := w.git("log", "--merges", "--format=%an %s")
	if want := "flowstate flowstate: merge phase_4 of workflow"; !strings.HasPrefix(log, want) || strings.Count(log, "\n") != 3 {
		t.Errorf("merge commits, newest first:\n%s", log)
	}
	if i2, i3 := strings.Index(log, "merge phase_2 "), strings.Index(log, "merge phase_3 "); i3 > i2 {
		t.Errorf("phase 3 was merged before phase 2, not in plan order:\n%s", log)
	}
	for _, b := range w.Batches {
		if b[0].Agent == "implementation-executor" && b[0].Isolation != "worktree" {
			t.Errorf("an implementation batch ran in the project's tree: %v", b)
		}
	}
	// The implementers work in worktrees, which hold none of the spec
	// directory: their brief names the plan where it is in the project.
	plan := w.flowstate("checkpoint-get", "phase_data.plan.artifacts.0")
	for _, inv := range w.Invoked {
		if inv.Agent == "implementation-executor" && !strings.Contains(w.brief(inv), "- "+filepath.Join(w.Dir, testenv.FromProject(t, w.Dir, plan))+"\n") {
			t.Errorf("the implementers' brief does not name the plan where it is in the project:\n%s", w.brief(inv))
			break
		}
	}
	if got := w.flowstate("checkpoint-get", "phase_data.implement.isolation.branch"); got != "main" {
		t.Errorf("isolation branch %q", got)
	}
	// status shows each worker's branch and its merge, history each merge.
	if status := w.flowstate("status"); strings.Count(status, "; branch worktree-agent-") != 4 || strings.Count(status, " merged") != 4 {
		t.Errorf("status does not show the four workers' branches merged:\n%s", status)
	}
	if history := w.flowstate("history"); strings.Count(history, "implement worker phase_") < 4 || !strings.Contains(history, "the workers of implement run each in a git worktree of its own, merged into main") {
		t.Errorf("history does not show the isolation and the merges:\n%s", history)
	}
	w.expectNothingLeft()
}

// TestIsolatedConflictRedone: both phases of a wave change the same
// line. The second's merge conflicts and is aborted; its attempt is kept
// (its changes as a patch, its summary beside it), and with the built-in
// on_conflict redo its implementer runs again, alone, on the merged tree,
// its brief naming the conflict and both summaries; its second attempt
// merges.
func TestIsolatedConflictRedone(t *testing.T) {
	w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth"), Plan: twoPhases})
	w.Agents.Work = phaseEdits(t, map[string][]string{
		"Phase 1": {"alpha: todo", "alpha: phase 1"},
		"Phase 2": {"alpha: todo", "alpha: phase 2", "alpha: phase 1", "alpha: phase 1 and 2"},
	})
	out, err := w.command("coordinate", "build login with sessions")
	if err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	if got := string(w.read("routes.txt")); got != "alpha: phase 1 and 2\nbeta: todo\ngamma: todo\n" {
		t.Errorf("routes.txt = %q", got)
	}
	var runs []invocation
	for _, inv := range w.Invoked {
		if strings.HasPrefix(inv.Prompt, "Topic: Phase 2:") {
			runs = append(runs, inv)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("phase 2 ran %d times, want twice", len(runs))
	}
	id := w.flowstate("checkpoint-get", "workflow_id")
	spec := filepath.Join(".flowstate", "specs", id)
	patch := filepath.Join(spec, "attempts", "phase_2.1.patch")
	if got := string(w.read(patch)); !strings.Contains(got, "+alpha: phase 2") {
		t.Errorf("the first attempt's changes are not kept in %s: %q", patch, got)
	}
	if got := string(w.read(filepath.Join(spec, "attempts", "phase_2.1.md"))); !strings.Contains(got, "## Executive Summary") {
		t.Errorf("the first attempt's summary is not kept: %q", got)
	}
	brief := w.brief(runs[1])
	for _, want := range []string{"## Merge conflicts", "phase_2 (Phase 2: Gamma): its earlier attempt changed routes.txt as phase_1 did",
		"summaries/001_phase_1.md", "attempts/phase_2.1.md", "attempts/phase_2.1.patch"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the second attempt's brief does not say %q:\n%s", want, brief)
		}
	}
	if got := w.merges(); got["phase_1"] != "merged" || got["phase_2"] != "merged" {
		t.Errorf("merges %v", got)
	}
	if got := w.flowstate("checkpoint-get", "error_state.retries.implement"); got != "1" {
		t.Errorf("implement retries %s, want 1", got)
	}
	history := w.flowstate("history")
	for _, want := range []string{"implement worker phase_2: branch worktree-agent-a2 conflicts with phase_1 in routes.txt, merge aborted; its work is kept in " + patch,
		"implement worker phase_2: branch worktree-agent-a3 merged"} {
		if !strings.Contains(history, want) {
			t.Errorf("history does not show %q:\n%s", want, history)
		}
	}
	if status := w.flowstate("status"); !strings.Contains(status, "attempts not merged, their work kept: phase_2 conflict: "+patch) {
		t.Errorf("status does not name the attempt kept:\n%s", status)
	}
	w.expectNothingLeft()
}

// TestIsolatedRefusesYourChanges: an isolated state merges into the
// working branch, so it starts only on a tree with nothing of the
// person's uncommitted: a changed file, or an untracked one, refuses the
// start of the state, naming it, and hands nothing out; once committed,
// the resume runs it.
func TestIsolatedRefusesYourChanges(t *testing.T) {
	for _, tc := range []struct{ name, file, content, shown string }{
		{"changed", "routes.txt", "alpha: mine\nbeta: todo\ngamma: todo\n", "routes.txt"},
		{"untracked", "notes/idea.txt", "an idea\n", "notes/ (untracked)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth"), Plan: twoPhases})
			w.Agents.Work = phaseEdits(t, map[string][]string{"Phase 1": {"beta: todo", "beta: phase 1"}, "Phase 2": {"gamma: todo", "gamma: phase 2"}})
			w.write(tc.file, tc.content)
			out, err := w.command("coordinate", "build login with sessions")
			if err == nil || !strings.Contains(err.Error(), "must hold no uncommitted change of yours") || !strings.Contains(err.Error(), tc.shown) {
				t.Fatalf("want the state refused naming %s, got %v\n%s", tc.shown, err, out)
			}
			if n := w.agentsInvoked()["implementation-executor"]; n != 0 {
				t.Errorf("%d implementers ran on a tree with the person's changes", n)
			}
			if got := string(w.read(tc.file)); got != tc.content {
				t.Errorf("the person's %s changed: %q", tc.file, got)
			}
			w.git("add", ".")
			w.git("commit", "-q", "-m", "mine")
			if out, err := w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if got := string(w.read(tc.file)); !strings.HasPrefix(got, strings.SplitN(tc.content, "\n", 2)[0]) {
				t.Errorf("the person's %s lost their change: %q", tc.file, got)
			}
			w.expectNothingLeft()
		})
	}
}

// TestIsolatedKilledBetweenMerges: flowstate is killed right after git
// made the first merge of a wave, before it recorded it; or in the
// middle of that merge, left in progress. The resume records a merge
// made without making it again, makes again one cut short (aborting
// what was left of it), and merges the rest: each branch once.
func TestIsolatedKilledBetweenMerges(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{{"after the merge", ""}, {"in the merge", " --no-commit"}} {
		t.Run(tc.name, func(t *testing.T) { testIsolatedKilledBetweenMerges(t, tc.extra) })
	}
}

func testIsolatedKilledBetweenMerges(t *testing.T, extra string) {
	w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth"), Plan: twoPhases})
	w.Agents.Work = phaseEdits(t, map[string][]string{"Phase 1": {"alpha: todo", "alpha: phase 1"}, "Phase 2": {"gamma: todo", "gamma: phase 2"}})
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	// A git that, at the first merge flowstate makes, kills its caller:
	// once the merge is made, or (extra --no-commit) left in progress.
	bin := t.TempDir()
	mark := filepath.Join(t.TempDir(), "killed")
	script := "#!/bin/sh\ncase \" $* \" in *\" merge --no-ff \"*) [ -e " + mark + " ] || { " + real + " \"$@\"" + extra + "; touch " + mark + "; kill -9 $PPID; exit 1; } ;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := w.Env
	w.Env = nil
	for _, kv := range plain {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + bin + string(os.PathListSeparator) + path
		}
		w.Env = append(w.Env, kv)
	}
	_, err = w.command("coordinate", "build login with sessions")
	if err == nil {
		t.Fatal("the killed step did not stop the command")
	}
	if _, serr := os.Stat(mark); serr != nil {
		t.Fatalf("no merge was made; the command stopped on %v", err)
	}
	if got := w.merges(); len(got) != 0 {
		t.Fatalf("merges recorded before the kill: %v", got)
	}
	w.Env = plain
	if out, err := w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if got := w.merges(); got["phase_1"] != "merged" || got["phase_2"] != "merged" {
		t.Errorf("merges %v", got)
	}
	for _, phase := range []string{"phase_1", "phase_2"} {
		if n := strings.Count(w.git("log", "--merges", "--format=%s"), "merge "+phase+" "); n != 1 {
			t.Errorf("%s merged %d times, want once", phase, n)
		}
	}
	if got := string(w.read("routes.txt")); got != "alpha: phase 1\nbeta: todo\ngamma: phase 2\n" {
		t.Errorf("routes.txt = %q", got)
	}
	w.expectNothingLeft()
}

// TestIsolatedStrayWrite: a worker that writes into the project's tree
// outside its worktree (a shell command, which Claude Code does not hold
// to the worktree) stops the wave: nothing is merged over the change,
// which the message names, and the workers that may have written it
// count as failed (here: no hook recorded which ran shell commands, so
// both). Once the person undoes it, the resume runs them again and
// merges them.
func TestIsolatedStrayWrite(t *testing.T) {
	w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth"), Plan: twoPhases})
	strayed := false
	edits := phaseEdits(t, map[string][]string{"Phase 1": {"alpha: todo", "alpha: phase 1"}, "Phase 2": {"gamma: todo", "gamma: phase 2"}})
	w.Agents.Work = func(inv invocation, dir string) {
		edits(inv, dir)
		if strings.HasPrefix(inv.Prompt, "Topic: Phase 2:") && !strayed {
			strayed = true
			w.write("stray.txt", "written outside the worktree\n")
		}
	}
	_, err := w.command("coordinate", "build login with sessions")
	if err == nil || !strings.Contains(err.Error(), "files of the project's tree changed while the workers of implement ran in their worktrees: stray.txt (untracked)") {
		t.Fatalf("want the wave stopped naming stray.txt, got %v", err)
	}
	if got := string(w.read("routes.txt")); got != routes {
		t.Errorf("something was merged over the stray change: %q", got)
	}
	if got := w.merges(); got["phase_1"] != "discarded" || got["phase_2"] != "discarded" {
		t.Errorf("merges %v, want both attempts discarded", got)
	}
	if err := os.Remove(filepath.Join(w.Dir, "stray.txt")); err != nil {
		t.Fatal(err)
	}
	if out, err := w.command("workflow-resume", ""); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if got := string(w.read("routes.txt")); got != "alpha: phase 1\nbeta: todo\ngamma: phase 2\n" {
		t.Errorf("routes.txt = %q", got)
	}
	w.expectNothingLeft()
}

// TestIsolatedConflictWaitsForAPerson: a definition of one's own whose
// isolated state leaves a conflict to a person (on_conflict wait): the
// step stops (exit 6) naming the branch and the file; the person merges
// it by hand; the resume records that merge, merges what is left, and
// completes.
func TestIsolatedConflictWaitsForAPerson(t *testing.T) {
	w := newGitWorld(t, fakeAgents{})
	d := w.ownCommand("the login handler")
	def := filepath.Join(w.Dir, ".claude", "flows", "audit.json")
	b, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"min_delivered": 2`, `"min_delivered": 2, "isolation": "worktree", "on_conflict": "wait"`, 1))
	if err := os.WriteFile(def, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("add", ".")
	w.git("commit", "-q", "-m", "the audit command")
	w.Agents.Work = func(inv invocation, dir string) {
		if inv.Agent == "audit-reviewer" && !strings.Contains(inv.Prompt, "Topic: readability") {
			lens := strings.TrimPrefix(strings.SplitN(inv.Prompt, "\n", 2)[0], "Topic: ")
			edit(t, dir, "routes.txt", "alpha: todo", "alpha: "+lens)
		}
	}
	_, err = w.follow(d, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "exit status 6") || !strings.Contains(err.Error(), "changes routes.txt as review_1 did") {
		t.Fatalf("want the step to wait for a person, naming the conflict; got %v", err)
	}
	branch := gjson.Get(w.flowstate("checkpoint-get", "phase_data.review.merges.review_2"), "branch").String()
	if branch == "" {
		t.Fatal("the conflict names no branch")
	}
	if err := exec.Command("git", "-C", w.Dir, "merge", "-q", "--no-edit", branch).Run(); err == nil {
		t.Fatal("the hand merge did not conflict")
	}
	w.write("routes.txt", "alpha: correctness and security\nbeta: todo\ngamma: todo\n")
	w.git("commit", "-q", "-am", "both reviews")
	if out, err := w.follow(w.projectCommand("audit", "--resume"), map[string]string{}); err != nil || !strings.Contains(out, "NEXT=done") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if got := w.flowstate("checkpoint-get", "phase_data.review.merges.review_2.status"); got != "merged" {
		t.Errorf("the hand merge is recorded %q", got)
	}
	if got := string(w.read("routes.txt")); got != "alpha: correctness and security\nbeta: todo\ngamma: todo\n" {
		t.Errorf("routes.txt = %q", got)
	}
	w.expectNothingLeft()
}

// TestIsolatedWithoutGit: a project that is no git repository runs the
// built-in implement state's workers in its tree, as without isolation,
// and says so once: on the stderr of the step that planned the state
// first, and in the record (status's notes, history).
func TestIsolatedWithoutGit(t *testing.T) {
	w := newWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth")})
	out, err := w.command("coordinate", "build login with sessions")
	if err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	said := "state implement: its workers share the project's tree rather than a git worktree each, as its definition asks: " + w.Dir + ": not a git repository"
	if n := strings.Count(w.Stderr, said); n != 1 {
		t.Errorf("the steps said %d times that the workers share the tree, want once:\n%s", n, w.Stderr)
	}
	for _, b := range w.Batches {
		if b[0].Isolation != "" {
			t.Errorf("a batch was launched in worktrees: %v", b)
		}
	}
	if status := w.flowstate("status"); !strings.Contains(status, "the workers of implement shared the project's tree, not a git worktree each as its definition asks: not a git repository") {
		t.Errorf("status does not note it:\n%s", status)
	}
	if history := w.flowstate("history"); !strings.Contains(history, "the workers of implement share the project's tree: not a git repository") {
		t.Errorf("history does not record it:\n%s", history)
	}
}

// TestIsolatedOneWorker: a plan of one phase gives the implement state
// one worker, which shares the project's tree with no other: it runs
// there, with no worktree and nothing to merge.
func TestIsolatedOneWorker(t *testing.T) {
	w := newGitWorld(t, fakeAgents{Classification: classification("full-implementation", "Auth"),
		Plan: "# Plan\n\n### Phase 1: Alpha\ndependencies: []\n"})
	w.Agents.Work = phaseEdits(t, map[string][]string{"Phase 1": {"alpha: todo", "alpha: phase 1"}})
	if out, err := w.command("coordinate", "build login with sessions"); err != nil || !strings.Contains(out, "FINAL_STATE=complete") {
		t.Fatalf("coordinate: %v\n%s", err, out)
	}
	for _, b := range w.Batches {
		if b[0].Isolation != "" {
			t.Errorf("a batch was launched in worktrees: %v", b)
		}
	}
	if got := string(w.read("routes.txt")); got != "alpha: phase 1\nbeta: todo\ngamma: todo\n" {
		t.Errorf("routes.txt = %q", got)
	}
	if got := gjson.Get(w.flowstate("checkpoint-get", "phase_data"), "implement.isolation"); got.Exists() {
		t.Errorf("a state of one worker recorded an isolation: %s", got.Raw)
	}
}
