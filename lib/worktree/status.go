package worktree

import (
	"path/filepath"
	"slices"
	"strings"
)

// What git prints and where Claude Code puts worktrees. Pure: no I/O.

// Dir is where Claude Code 2.1.328 creates the worktree of an agent
// launched with isolation "worktree", relative to the project:
// .claude/worktrees/agent-<id> on branch worktree-agent-<id> (and a
// workflow script's agents .claude/worktrees/wf_<run>-<n>).
const Dir = ".claude/worktrees"

// BranchOf is the branch Claude Code names after a worktree directory.
func BranchOf(worktree string) string { return "worktree-" + filepath.Base(worktree) }

// Of is the worktree of the project at project that path is in (an
// agent's working directory, a file it writes), "" when path is in none.
func Of(project, path string) string {
	rel, ok := inside(filepath.Join(project, Dir), path)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(project, Dir, name)
}

// Unmade is the worktree of the project Claude Code failed to make, as
// its Agent call's error says ("Failed to create worktree: Preparing
// worktree (new branch 'worktree-agent-<id>')..."), "" when it names
// none: git (2.39) may have made its branch all the same.
func Unmade(project, callError string) string {
	_, rest, ok := strings.Cut(callError, "(new branch 'worktree-agent-")
	id, _, closed := strings.Cut(rest, "')")
	if !ok || !closed || id == "" || len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return ""
	}
	return filepath.Join(project, Dir, "agent-"+id)
}

// MainPath is path with the worktree it is in, if any, replaced by the
// project: a worktree mirrors the project, so a file an agent names in
// its worktree is that file of the project. Any other path is as it is.
func MainPath(project, path string) string {
	wt := Of(project, path)
	if wt == "" {
		return path
	}
	rel, _ := inside(wt, path)
	return filepath.Join(project, rel)
}

// inside is path relative to dir when it is strictly inside it.
func inside(dir, path string) (string, bool) {
	if dir == "" || !filepath.IsAbs(path) {
		return "", false
	}
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	if err != nil || !filepath.IsLocal(rel) || rel == "." {
		return "", false
	}
	return rel, true
}

// Change is one entry of git status: the two status letters (index and
// working tree; "??" for untracked) and the path from the repository's
// top.
type Change struct {
	Code string
	Path string
}

func (c Change) String() string {
	if c.Code == "??" {
		return c.Path + " (untracked)"
	}
	return c.Path
}

// ParseStatus reads `git status --porcelain=v1 -z`: entries of "XY
// PATH", a rename or copy followed by its source path as an entry of its
// own.
func ParseStatus(out string) []Change {
	var cs []Change
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		c := Change{Code: f[:2], Path: f[3:]}
		if c.Code[0] == 'R' || c.Code[0] == 'C' {
			i++ // the source path
		}
		cs = append(cs, c)
	}
	return cs
}

// Kept are the directories whose changes are never the person's work:
// the workflow's artifacts and state, Claude Code's worktrees and
// settings. An isolated worker's artifact reaches the project there
// while its wave runs.
var Kept = []string{".flowstate/", ".claude/"}

// Outside leaves out the changes under Kept.
func Outside(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if !slices.ContainsFunc(Kept, func(dir string) bool { return strings.HasPrefix(c.Path, dir) || c.Path+"/" == dir }) {
			out = append(out, c)
		}
	}
	return out
}

// Tree is one worktree of `git worktree list --porcelain`.
type Tree struct {
	Path   string
	Head   string
	Branch string // without refs/heads/; "" when detached
}

// ParseWorktrees reads `git worktree list --porcelain`: blocks of
// "worktree PATH", "HEAD SHA", "branch REF" (or "detached") lines,
// separated by blank lines.
func ParseWorktrees(out string) []Tree {
	var ts []Tree
	var t *Tree
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "worktree":
			ts = append(ts, Tree{Path: value})
			t = &ts[len(ts)-1]
		case "HEAD":
			if t != nil {
				t.Head = value
			}
		case "branch":
			if t != nil {
				t.Branch = strings.TrimPrefix(value, "refs/heads/")
			}
		}
	}
	return ts
}

// Find is the worktree at path among ts.
func Find(ts []Tree, path string) (Tree, bool) {
	for _, t := range ts {
		if filepath.Clean(t.Path) == filepath.Clean(path) {
			return t, true
		}
	}
	return Tree{}, false
}

// Touched lists the earlier merges whose changes meet files, by worker:
// who a conflicting worker collided with.
func Touched(merged []Merge, files []string) []string {
	var out []string
	for _, m := range merged {
		if m.Status == Merged && slices.ContainsFunc(m.Files, func(f string) bool { return slices.Contains(files, f) }) {
			out = append(out, m.Worker)
		}
	}
	return out
}
