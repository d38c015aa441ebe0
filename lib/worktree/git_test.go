package worktree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The git side, through real git processes in scratch repositories.

// repo is a scratch repository on branch main with one commit holding
// routes.txt.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "config", "user.email", "person@example.com")
	gitIn(t, dir, "config", "user.name", "person")
	write(t, dir, "routes.txt", "alpha: todo\nbeta: todo\ngamma: todo\n")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// agentWorktree makes the worktree Claude Code makes for an isolated
// agent: .claude/worktrees/agent-<id> on branch worktree-agent-<id>,
// from HEAD.
func agentWorktree(t *testing.T, dir, id string) string {
	t.Helper()
	wt := filepath.Join(dir, Dir, "agent-"+id)
	gitIn(t, dir, "worktree", "add", "-q", "-b", "worktree-agent-"+id, wt, "HEAD")
	return wt
}

// edit replaces old with new in rel of dir.
func edit(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	s := read(t, filepath.Join(dir, rel))
	if !strings.Contains(s, old) {
		t.Fatalf("%s has no %q", rel, old)
	}
	write(t, dir, rel, strings.Replace(s, old, new, 1))
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var wave = Wave{Workflow: "wf-1", State: "implement"}

// recorded collects what MergeWave records, in order.
type recorded []Merge

func (rs *recorded) rec(m Merge) error { *rs = append(*rs, m); return nil }

func (rs recorded) statuses() string {
	var s []string
	for _, m := range rs {
		s = append(s, m.Worker+":"+m.Status)
	}
	return strings.Join(s, " ")
}

func TestOpenRefuses(t *testing.T) {
	dir := repo(t)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	gitIn(t, empty, "init", "-q", "-b", "main")
	detached := repo(t)
	gitIn(t, detached, "checkout", "-q", "--detach")
	for _, tc := range []struct{ dir, want string }{
		{t.TempDir(), "not a git repository"},
		{sub, "a directory inside the git repository at " + dir},
		{empty, "no commit yet"},
		{detached, "HEAD is detached"},
	} {
		_, err := Open(tc.dir)
		var ref *Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tc.want) {
			t.Errorf("Open(%s) = %v, want a refusal saying %q", tc.dir, err, tc.want)
		}
	}
	if r := open(t, dir); r.Branch != "main" {
		t.Errorf("branch %q, want main", r.Branch)
	}
}

func TestDirty(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	if cs, err := r.Dirty(); err != nil || len(cs) != 0 {
		t.Fatalf("a clean tree: %v, %v", cs, err)
	}
	// What flowstate and Claude Code keep is not the person's.
	write(t, dir, ".flowstate/specs/wf-1/summaries/001.md", "# x\n")
	write(t, dir, ".claude/state/x", "x")
	agentWorktree(t, dir, "a1")
	if cs, err := r.Dirty(); err != nil || len(cs) != 0 {
		t.Fatalf("only flowstate's and Claude Code's files: %v, %v", cs, err)
	}
	edit(t, dir, "routes.txt", "alpha: todo", "alpha: mine")
	write(t, dir, "notes/idea.txt", "x")
	cs, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.String())
	}
	if want := []string{"routes.txt", "notes/ (untracked)"}; !slices.Equal(got, want) {
		t.Errorf("Dirty = %q, want %q", got, want)
	}
}

// TestMergeWaveBothLand: two workers edit one file in different places,
// one commits, the other leaves its change uncommitted; both land, in
// order, each with a merge commit, and nothing of theirs is left.
func TestMergeWaveBothLand(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	a, b := agentWorktree(t, dir, "a1"), agentWorktree(t, dir, "b2")
	edit(t, a, "routes.txt", "alpha: todo", "alpha: phase 2")
	gitIn(t, a, "commit", "-q", "-am", "phase 2")
	edit(t, b, "routes.txt", "gamma: todo", "gamma: phase 3")
	write(t, b, "src/three.go", "package src\n")
	// What flowstate keeps is no worker's code, ignored by the person
	// or not.
	write(t, b, ".flowstate/specs/wf-1/summaries/003.md", "# not the worker's code\n")
	write(t, dir, ".gitignore", ".flowstate/\n")
	gitIn(t, dir, "add", ".gitignore")
	gitIn(t, dir, "commit", "-q", "-m", "ignore the specs")
	write(t, b, ".gitignore", ".flowstate/\n")
	var rs recorded
	conflict, err := r.MergeWave(wave, []Branch{{Worker: "phase_2", Worktree: a}, {Worker: "phase_3", Label: "Phase 3: Gamma", Worktree: b}}, nil, rs.rec)
	if err != nil || conflict != nil {
		t.Fatalf("MergeWave: %v, %v", conflict, err)
	}
	if got := rs.statuses(); got != "phase_2:merged phase_3:merged" {
		t.Errorf("recorded %s", got)
	}
	if got := read(t, filepath.Join(dir, "routes.txt")); got != "alpha: phase 2\nbeta: todo\ngamma: phase 3\n" {
		t.Errorf("routes.txt = %q", got)
	}
	if !slices.Equal(rs[1].Files, []string{"routes.txt", "src/three.go"}) {
		t.Errorf("phase_3 changed %v, want routes.txt and src/three.go (not its artifact)", rs[1].Files)
	}
	if log := gitIn(t, dir, "log", "--format=%an %s", "-n", "4"); !strings.Contains(log, "flowstate flowstate: merge phase_3 of workflow wf-1 (implement)") ||
		!strings.Contains(log, "flowstate flowstate: merge phase_2 of workflow wf-1 (implement)") {
		t.Errorf("log:\n%s", log)
	}
	if trees := gitIn(t, dir, "worktree", "list"); strings.Contains(trees, "agent-") {
		t.Errorf("worktrees left: %s", trees)
	}
	if branches := gitIn(t, dir, "branch", "--list", "worktree-*"); branches != "" {
		t.Errorf("branches left: %s", branches)
	}
}

// TestMergeWaveConflict: the second branch edits the lines the first
// changed: its merge is aborted, nothing is half-merged, the conflict
// names the file and the worker it met, and its branch stays.
func TestMergeWaveConflict(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	a, b, c := agentWorktree(t, dir, "a1"), agentWorktree(t, dir, "b2"), agentWorktree(t, dir, "c3")
	edit(t, a, "routes.txt", "alpha: todo", "alpha: phase 2")
	edit(t, b, "routes.txt", "alpha: todo", "alpha: phase 3")
	write(t, c, "c.txt", "c\n")
	var rs recorded
	bs := []Branch{{Worker: "phase_2", Worktree: a}, {Worker: "phase_3", Worktree: b}, {Worker: "phase_4", Worktree: c}}
	conflict, err := r.MergeWave(wave, bs, nil, rs.rec)
	if err != nil || conflict == nil {
		t.Fatalf("MergeWave: %v, %v; want a conflict", conflict, err)
	}
	if conflict.Worker != "phase_3" || !slices.Equal(conflict.Files, []string{"routes.txt"}) || !slices.Equal(conflict.With, []string{"phase_2"}) {
		t.Errorf("conflict %+v", *conflict)
	}
	if got := rs.statuses(); got != "phase_2:merged phase_3:conflict" {
		t.Errorf("recorded %s", got)
	}
	if status := gitIn(t, dir, "status", "--porcelain", "--untracked-files=no"); status != "" || r.MergeHead() != "" {
		t.Errorf("a merge is left in progress: %q", status)
	}
	if got := read(t, filepath.Join(dir, "routes.txt")); got != "alpha: phase 2\nbeta: todo\ngamma: todo\n" {
		t.Errorf("routes.txt = %q", got)
	}
	if gitIn(t, dir, "branch", "--list", "worktree-agent-b2") == "" || gitIn(t, dir, "branch", "--list", "worktree-agent-c3") == "" {
		t.Errorf("the conflicting branch or the one after it is gone")
	}
	// A person merges the branch by hand; the next run records it and
	// goes on with the rest, merging nothing twice.
	if out, err := exec.Command("git", "-C", dir, "merge", "-q", "--no-edit", "worktree-agent-b2").CombinedOutput(); err == nil {
		t.Fatalf("the hand merge did not conflict: %s", out)
	}
	write(t, dir, "routes.txt", "alpha: phase 2 and 3\nbeta: todo\ngamma: todo\n")
	gitIn(t, dir, "commit", "-q", "-am", "both")
	rs = nil
	if conflict, err := r.MergeWave(wave, bs[1:], nil, rs.rec); err != nil || conflict != nil {
		t.Fatalf("after the hand merge: %v, %v", conflict, err)
	}
	if got := rs.statuses(); got != "phase_3:merged phase_4:merged" {
		t.Errorf("recorded %s", got)
	}
	if n := gitIn(t, dir, "rev-list", "--count", "--merges", "HEAD"); n != "3" {
		t.Errorf("%s merge commits, want 3 (phase 2, the hand merge, phase 4)", n)
	}
}

// TestMergeWaveOnce: a run killed after its merge and before recording
// it is followed by one that records the merge without merging again.
func TestMergeWaveOnce(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	a, b := agentWorktree(t, dir, "a1"), agentWorktree(t, dir, "b2")
	edit(t, a, "routes.txt", "alpha: todo", "alpha: phase 2")
	edit(t, b, "routes.txt", "gamma: todo", "gamma: phase 3")
	bs := []Branch{{Worker: "phase_2", Worktree: a}, {Worker: "phase_3", Worktree: b}}
	killed := errors.New("killed")
	_, err := r.MergeWave(wave, bs, nil, func(m Merge) error { return killed })
	if !errors.Is(err, killed) {
		t.Fatalf("got %v", err)
	}
	var rs recorded
	if conflict, err := r.MergeWave(wave, bs, nil, rs.rec); err != nil || conflict != nil {
		t.Fatalf("the second run: %v, %v", conflict, err)
	}
	if got := rs.statuses(); got != "phase_2:merged phase_3:merged" {
		t.Errorf("recorded %s", got)
	}
	if rs[0].Merge == "" {
		t.Errorf("the merge the killed run made is not named: %+v", rs[0])
	}
	if n := gitIn(t, dir, "rev-list", "--count", "--merges", "HEAD"); n != "2" {
		t.Errorf("%s merge commits, want 2: one per branch", n)
	}
}

// TestMergeWaveInProgress: a merge left in progress by an interrupted
// run of flowstate's is aborted and made again; anybody else's stops
// the wave.
func TestMergeWaveInProgress(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	a, b := agentWorktree(t, dir, "a1"), agentWorktree(t, dir, "b2")
	edit(t, a, "routes.txt", "alpha: todo", "alpha: phase 2")
	gitIn(t, a, "commit", "-q", "-am", "phase 2")
	edit(t, dir, "routes.txt", "alpha: todo", "alpha: main")
	gitIn(t, dir, "commit", "-q", "-am", "main moved")
	other := agentWorktree(t, dir, "zz")
	edit(t, other, "routes.txt", "alpha: main", "alpha: someone")
	gitIn(t, other, "commit", "-q", "-am", "someone")
	edit(t, dir, "routes.txt", "alpha: main", "alpha: mine")
	gitIn(t, dir, "commit", "-q", "-am", "mine")
	_ = exec.Command("git", "-C", dir, "merge", "-q", "--no-edit", "worktree-agent-zz").Run()
	if r.MergeHead() == "" {
		t.Fatal("no merge in progress to test with")
	}
	_, err := r.MergeWave(wave, []Branch{{Worker: "phase_2", Worktree: a}}, nil, (&recorded{}).rec)
	if err == nil || !strings.Contains(err.Error(), "a merge is in progress in "+dir) {
		t.Fatalf("someone's merge in progress: %v", err)
	}
	gitIn(t, dir, "merge", "--abort")
	// Ours: phase 2's branch, its merge cut short.
	_ = exec.Command("git", "-C", dir, "merge", "-q", "--no-edit", "worktree-agent-a1").Run()
	var rs recorded
	conflict, err := r.MergeWave(wave, []Branch{{Worker: "phase_2", Worktree: a}, {Worker: "phase_3", Worktree: b}}, nil, rs.rec)
	if err != nil || conflict == nil || conflict.Worker != "phase_2" {
		t.Fatalf("ours in progress: %v, %v; want it aborted and merged again, conflicting", conflict, err)
	}
	if r.MergeHead() != "" {
		t.Errorf("a merge is left in progress")
	}
}

// TestMergeWaveEmpty: a worker whose agent changed nothing (Claude Code
// removed its worktree) is recorded empty; a failed one's work is kept
// as a patch and its worktree and branch removed.
func TestMergeWaveEmpty(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	gone := filepath.Join(dir, Dir, "agent-gone")
	failed := agentWorktree(t, dir, "f1")
	write(t, failed, "half.txt", "half done\n")
	var rs recorded
	if conflict, err := r.MergeWave(wave, []Branch{{Worker: "phase_2", Worktree: gone}, {Worker: "phase_5"}}, nil, rs.rec); err != nil || conflict != nil {
		t.Fatalf("MergeWave: %v, %v", conflict, err)
	}
	if got := rs.statuses(); got != "phase_2:empty phase_5:empty" {
		t.Errorf("recorded %s", got)
	}
	b := Branch{Worker: "phase_3", Worktree: failed}
	patch, branch, err := r.Patch(wave, b)
	if err != nil || branch != "worktree-agent-f1" || !strings.Contains(string(patch), "+half done") {
		t.Fatalf("Patch: %q, %q, %v", patch, branch, err)
	}
	if err := r.Remove(b, branch); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(failed); !os.IsNotExist(err) || gitIn(t, dir, "branch", "--list", "worktree-agent-f1") != "" {
		t.Errorf("the failed attempt's worktree or branch is left")
	}
	if err := r.Remove(b, branch); err != nil {
		t.Errorf("removing it again: %v", err)
	}
}

// TestDropUnmade: the branch git made for a worktree it then failed to
// make goes when it holds nothing and no worktree holds it; a branch
// with work on it, or one a worktree holds, stays.
func TestDropUnmade(t *testing.T) {
	dir := repo(t)
	r := open(t, dir)
	gitIn(t, dir, "branch", "worktree-agent-a1")
	held := agentWorktree(t, dir, "b2")
	worked := agentWorktree(t, dir, "c3")
	write(t, worked, "w.txt", "work\n")
	gitIn(t, worked, "add", "w.txt")
	gitIn(t, worked, "commit", "-q", "-m", "work")
	gitIn(t, dir, "worktree", "remove", "--force", worked)
	for _, wt := range []string{filepath.Join(dir, Dir, "agent-a1"), held, worked, filepath.Join(dir, Dir, "agent-none")} {
		if err := r.DropUnmade(wt); err != nil {
			t.Errorf("DropUnmade(%s): %v", wt, err)
		}
	}
	if got := gitIn(t, dir, "branch", "--list", "worktree-agent-*", "--format=%(refname:short)"); got != "worktree-agent-b2\nworktree-agent-c3" {
		t.Errorf("branches left: %q, want the held one and the one with work", got)
	}
}
