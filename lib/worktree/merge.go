package worktree

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Statuses of a worker's merge.
const (
	Merged    = "merged"    // its branch is in the working branch
	Empty     = "empty"     // it changed nothing: no branch, or one that adds nothing
	Conflict  = "conflict"  // its merge conflicted and was aborted; its branch is kept
	Discarded = "discarded" // it failed: its work is kept as a patch, its worktree and branch removed
)

// Merge is the record of what became of one worker's branch, as the
// caller keeps it.
type Merge struct {
	Worker   string    `json:"worker"`
	Label    string    `json:"label,omitempty"`
	Worktree string    `json:"worktree,omitempty"`
	Branch   string    `json:"branch,omitempty"`
	Status   string    `json:"status"`
	Commit   string    `json:"commit,omitempty"` // the branch's tip
	Merge    string    `json:"merge,omitempty"`  // the merge commit on the working branch
	Files    []string  `json:"files,omitempty"`  // merged: the files it changed; conflict: those that conflicted
	With     []string  `json:"with,omitempty"`   // conflict: the workers merged before whose changes meet Files
	Patch    string    `json:"patch,omitempty"`  // discarded: where its work is kept
	Reason   string    `json:"reason,omitempty"` // discarded: why, as the caller says it
	At       time.Time `json:"at"`
}

// Done reports whether the merge settled the worker's branch for good.
func (m Merge) Done() bool { return m.Status == Merged || m.Status == Empty || m.Status == Discarded }

// Branch is one worker's work to merge: the worktree its agent worked in
// ("" when none is known, as for a worker that shared the tree).
type Branch struct {
	Worker   string
	Label    string
	Worktree string
}

// Wave names the workflow and state a wave's merges are of, for their
// commit messages.
type Wave struct {
	Workflow string
	State    string
}

// Recorder keeps one merge durably; MergeWave calls it before it goes on
// to the next branch, so that a process killed between two merges is
// followed by a run that knows every merge made before it.
type Recorder func(Merge) error

// MergeWave merges bs one by one, in their order (the plan's), into the
// working branch: what a worker left uncommitted in its worktree is
// committed on its branch first, the branch is merged with a merge commit
// naming the worker, the merge is recorded (rec), and only then are its
// worktree and branch removed. A branch the working branch holds already
// (merged by a run killed before it recorded the merge, or by hand) is
// recorded without a second merge: git merge-base --is-ancestor is the
// check, so each merge is made exactly once. A worktree that is gone,
// its agent having changed nothing, is recorded empty.
//
// At the first conflict the merge is aborted (nothing is half-merged),
// recorded as a conflict naming the files and the earlier workers (of
// earlier, the state's merges so far) whose changes meet them, and
// returned; its branch and the branches after it stay as they are. A
// merge left in progress by an interrupted run of flowstate's (its
// MERGE_HEAD is one of bs) is aborted first; one of anybody else's stops
// everything with an error.
func (r *Repo) MergeWave(w Wave, bs []Branch, earlier []Merge, rec Recorder) (*Merge, error) {
	if err := r.AbortInterrupted(bs); err != nil {
		return nil, err
	}
	done := slices.Clone(earlier)
	for _, b := range bs {
		m, err := r.land(w, b)
		if err != nil {
			return nil, err
		}
		if m.Status == Conflict {
			m.With = Touched(done, m.Files)
		}
		if err := rec(m); err != nil {
			return nil, err
		}
		if m.Status == Conflict {
			return &m, nil
		}
		done = append(done, m)
		if err := r.Remove(b, m.Branch); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// AbortInterrupted aborts a merge in progress of one of bs's branches,
// which a run of flowstate's killed mid-merge left; any other merge in
// progress is the person's, and an error.
func (r *Repo) AbortInterrupted(bs []Branch) error {
	head := r.MergeHead()
	if head == "" {
		return nil
	}
	for _, b := range bs {
		if tip := r.tip(r.branchOf(b)); tip != "" && tip == head {
			return r.abort()
		}
	}
	return fmt.Errorf("a merge is in progress in %s (MERGE_HEAD %s) that is not flowstate's: finish it (git commit) or abort it (git merge --abort), then run the step again", r.Dir, short(head))
}

// land commits what b's worker left and merges its branch, or finds it
// merged already; a conflict is aborted and returned as a Merge.
func (r *Repo) land(w Wave, b Branch) (Merge, error) {
	m := Merge{Worker: b.Worker, Label: b.Label, Worktree: b.Worktree, At: time.Now().UTC().Truncate(time.Millisecond)}
	branch, err := r.prepare(w, b)
	if err != nil || branch == "" {
		m.Status = Empty
		return m, err
	}
	m.Branch = branch
	m.Commit = r.tip(branch)
	if r.isAncestor(m.Commit) {
		m.Status, m.Merge = Empty, r.mergeOf(m.Commit)
		if m.Merge != "" {
			m.Status = Merged
			m.Files, _ = r.changed(m.Merge)
		}
		return m, nil
	}
	msg := fmt.Sprintf("flowstate: merge %s of workflow %s (%s)\n\n%s\nBranch: %s\n", b.Worker, w.Workflow, w.State, b.Label, branch)
	if _, err := r.run(r.Dir, identity, "merge", "--no-ff", "--no-edit", "-m", msg, m.Commit); err != nil {
		files, _ := r.git(r.Dir, "diff", "--name-only", "--diff-filter=U", "-z")
		if abortErr := r.abort(); abortErr != nil {
			return m, errors.Join(err, abortErr)
		}
		if files == "" {
			return m, fmt.Errorf("merging %s's branch %s into %s: %w", b.Worker, branch, r.Branch, err)
		}
		m.Status, m.Files = Conflict, strings.Split(strings.TrimRight(files, "\x00"), "\x00")
		return m, nil
	}
	m.Status = Merged
	m.Merge, err = r.git(r.Dir, "rev-parse", "HEAD")
	if err == nil {
		m.Files, err = r.changed(m.Merge)
	}
	return m, err
}

// prepare finds b's branch and commits on it what b's worker left
// uncommitted in its worktree; "" when there is none: the worker shared
// the tree, or Claude Code removed its worktree and branch because it
// changed nothing.
func (r *Repo) prepare(w Wave, b Branch) (string, error) {
	if b.Worktree == "" {
		return "", nil
	}
	trees, err := r.Worktrees()
	if err != nil {
		return "", err
	}
	t, ok := Find(trees, b.Worktree)
	if !ok {
		// The worktree is gone; a branch of it may be left.
		if branch := BranchOf(b.Worktree); r.tip(branch) != "" {
			return branch, nil
		}
		return "", nil
	}
	if t.Branch == "" {
		return "", fmt.Errorf("the worktree %s of %s is on no branch (detached HEAD); merge or remove it by hand", t.Path, b.Worker)
	}
	status, err := r.run(t.Path, nil, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil || len(Outside(ParseStatus(status))) == 0 {
		return t.Branch, err
	}
	// What flowstate and Claude Code keep (Kept) is never the worker's
	// work: its artifact reaches the project on its own. Staged, then
	// taken out: a pathspec that excludes it is refused when the
	// person's .gitignore ignores it.
	if _, err := r.git(t.Path, "add", "-A"); err != nil {
		return "", err
	}
	unstage := []string{"reset", "-q", "--"}
	for _, k := range Kept {
		unstage = append(unstage, strings.TrimSuffix(k, "/"))
	}
	if _, err := r.git(t.Path, unstage...); err != nil {
		return "", err
	}
	if staged, err := r.git(t.Path, "diff", "--cached", "--name-only"); err != nil || staged == "" {
		return t.Branch, err // only what flowstate and Claude Code keep
	}
	msg := fmt.Sprintf("flowstate: %s of workflow %s (%s): what its agent left uncommitted\n\n%s\n", b.Worker, w.Workflow, w.State, b.Label)
	_, err = r.run(t.Path, identity, "commit", "-q", "--no-verify", "-m", msg)
	return t.Branch, err
}

// Patch is b's work as a patch against the working branch, what it left
// uncommitted committed first: what is kept of a failed worker's attempt
// before Remove takes its worktree and branch. nil when there is none.
func (r *Repo) Patch(w Wave, b Branch) (patch []byte, branch string, err error) {
	branch, err = r.prepare(w, b)
	if err != nil || branch == "" {
		return nil, branch, err
	}
	tip := r.tip(branch)
	base, err := r.git(r.Dir, "merge-base", "HEAD", tip)
	if err != nil {
		return nil, branch, err
	}
	out, err := r.run(r.Dir, nil, "diff", "--binary", base, tip)
	return []byte(out), branch, err
}

// Remove takes away b's worktree and its branch (branch, or the one
// Claude Code names after the worktree), whichever are there.
func (r *Repo) Remove(b Branch, branch string) error {
	if b.Worktree == "" {
		return nil
	}
	trees, err := r.Worktrees()
	if err != nil {
		return err
	}
	if t, ok := Find(trees, b.Worktree); ok {
		if _, err := r.git(r.Dir, "worktree", "remove", "--force", t.Path); err != nil {
			return err
		}
		if branch == "" {
			branch = t.Branch
		}
	} else if _, err := os.Stat(b.Worktree); err == nil {
		return fmt.Errorf("%s is not a worktree git knows of; flowstate leaves it as it is", b.Worktree)
	}
	if branch == "" {
		branch = BranchOf(b.Worktree)
	}
	if r.tip(branch) == "" {
		return nil
	}
	_, err = r.git(r.Dir, "branch", "-D", branch)
	return err
}

// DropUnmade removes the branch git made for a worktree Claude Code
// failed to make (Unmade) when no worktree holds the branch and it
// holds nothing the working branch does not: nobody worked on it.
// Anything else is left as it is.
func (r *Repo) DropUnmade(wt string) error {
	branch := BranchOf(wt)
	tip := r.tip(branch)
	if tip == "" || !r.isAncestor(tip) {
		return nil
	}
	trees, err := r.Worktrees()
	if err != nil {
		return err
	}
	for _, t := range trees {
		if t.Branch == branch {
			return nil
		}
	}
	_, err = r.git(r.Dir, "branch", "-D", branch)
	return err
}

// branchOf is the branch of b's worktree, "" when it has none.
func (r *Repo) branchOf(b Branch) string {
	if b.Worktree == "" {
		return ""
	}
	if trees, err := r.Worktrees(); err == nil {
		if t, ok := Find(trees, b.Worktree); ok {
			return t.Branch
		}
	}
	return BranchOf(b.Worktree)
}

// tip is the commit branch points at, "" when there is no such branch.
func (r *Repo) tip(branch string) string {
	if branch == "" {
		return ""
	}
	sha, err := r.git(r.Dir, "rev-parse", "-q", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return ""
	}
	return sha
}

// isAncestor reports whether commit is in the working branch.
func (r *Repo) isAncestor(commit string) bool {
	_, err := r.git(r.Dir, "merge-base", "--is-ancestor", commit, "HEAD")
	return err == nil
}

// mergeOf is the merge commit of the working branch that merged commit,
// among its recent merges; "" when none did.
func (r *Repo) mergeOf(commit string) string {
	out, err := r.git(r.Dir, "log", "--merges", "-n", "200", "--format=%H %P", "HEAD")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) > 2 && slices.Contains(f[2:], commit) {
			return f[0]
		}
	}
	return ""
}

// changed lists the files a merge commit brought into its first parent.
func (r *Repo) changed(merge string) ([]string, error) {
	out, err := r.git(r.Dir, "diff", "--name-only", "-z", merge+"^1", merge)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(strings.TrimRight(out, "\x00"), "\x00"), nil
}

// abort takes back a merge in progress: nothing half-merged stays.
func (r *Repo) abort() error {
	if _, err := r.git(r.Dir, "merge", "--abort"); err != nil {
		if _, resetErr := r.git(r.Dir, "reset", "--merge"); resetErr != nil {
			return fmt.Errorf("a merge in %s could not be aborted (%w); run git merge --abort there", r.Dir, errors.Join(err, resetErr))
		}
	}
	return nil
}

func short(sha string) string { return sha[:min(len(sha), 12)] }
