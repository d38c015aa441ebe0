// Package worktree owns the git side of running a state's workers in
// worktrees of their own (a definition's "isolation": "worktree"):
// whether the project is a repository flowstate can merge into, the
// person's uncommitted changes there, and after each wave committing what
// each worker left in its worktree, merging the workers' branches into
// the working branch one by one in plan order, recording each merge
// before the next (through the caller's Recorder), aborting a merge that
// conflicts, and removing what a wave leaves behind.
//
// It is the one package that runs git, at the edge: status.go is pure
// (parsing git's output, the paths of Claude Code's worktrees,
// table-tested), worktree.go and merge.go run git as a subprocess, every
// call bounded in time, with the repository's hooks off and nothing of
// the caller's environment choosing another repository. It knows no
// workflow, checkpoint or engine: the phase loop (lib/orchestrate) and
// any other engine call the same API and keep the records themselves.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Timeout bounds each git command flowstate runs: a merge of a wave is
// milliseconds, and a step runs under the Bash tool's two minutes.
const Timeout = 30 * time.Second

// Author is who flowstate's commits and merges are by.
const (
	AuthorName  = "flowstate"
	AuthorEmail = "flowstate@localhost"
)

// Repo is the git repository whose working tree is a project, on the
// branch its workers' branches merge into.
type Repo struct {
	Dir     string // the working tree's top, the project
	Branch  string // the checked-out branch
	Timeout time.Duration
}

// Refusal says why a project cannot run a state's workers in worktrees:
// the state then shares the project's tree, as without isolation.
type Refusal struct {
	Dir    string
	Reason string
}

func (r *Refusal) Error() string { return r.Dir + ": " + r.Reason }

// Open is the repository of the project at dir, ready for worktrees and
// merges; a *Refusal when it is none: git is not installed, dir is no
// repository or not its top (Claude Code's worktrees mirror the
// repository's top, so a project inside one would see its files under
// another path), HEAD has no commit yet (there is nothing to branch from)
// or is detached (there is no branch to merge into).
func Open(dir string) (*Repo, error) {
	r := &Repo{Dir: dir, Timeout: Timeout}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, &Refusal{dir, "git is not installed (not found on PATH)"}
	}
	top, err := r.git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		if errors.Is(err, errTimeout) {
			return nil, err
		}
		return nil, &Refusal{dir, "not a git repository"}
	}
	if !sameDir(top, dir) {
		return nil, &Refusal{dir, "a directory inside the git repository at " + top + ", not its top"}
	}
	if _, err := r.git(dir, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return nil, &Refusal{dir, "a git repository with no commit yet"}
	}
	branch, err := r.git(dir, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil || branch == "" {
		return nil, &Refusal{dir, "a git repository whose HEAD is detached (no branch to merge into)"}
	}
	r.Branch = branch
	return r, nil
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}

// Dirty lists the changes of the working tree that are the person's:
// modified, added, deleted and untracked files, leaving out what
// flowstate and Claude Code keep there (Outside).
func (r *Repo) Dirty() ([]Change, error) {
	out, err := r.run(r.Dir, nil, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
	if err != nil {
		return nil, err
	}
	return Outside(ParseStatus(out)), nil
}

// MergeHead is the commit a merge in progress in the working tree
// merges, "" when none is.
func (r *Repo) MergeHead() string {
	head, err := r.git(r.Dir, "rev-parse", "-q", "--verify", "MERGE_HEAD")
	if err != nil {
		return ""
	}
	return head
}

// Worktrees lists the repository's worktrees as git has them.
func (r *Repo) Worktrees() ([]Tree, error) {
	out, err := r.git(r.Dir, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	return ParseWorktrees(out), nil
}

// errTimeout marks a git command that ran out of time.
var errTimeout = errors.New("timed out")

// git runs git in dir and returns its stdout, trimmed. Every call is
// bounded by r.Timeout (a command still running then is asked to stop,
// so that it removes its lock files, and killed soon after), runs with
// the repository's hooks off (flowstate's commits and merges are its
// own bookkeeping: a person's pre-commit check or post-merge install is
// for their own), never prompts, and reads no GIT_DIR or GIT_WORK_TREE of
// the caller's that would point it at another repository. An error
// names the command, the directory and what git said.
func (r *Repo) git(dir string, args ...string) (string, error) {
	out, err := r.run(dir, nil, args...)
	return strings.TrimSpace(out), err
}

// run is git with extra environment env; its stdout as it is.
func (r *Repo) run(dir string, env []string, args ...string) (string, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(os.Environ()), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return stdout.String(), fmt.Errorf("git %s in %s: %w after %s", args[0], dir, errTimeout, timeout)
	case err != nil:
		said := strings.TrimSpace(stderr.String())
		if said == "" {
			said = strings.TrimSpace(stdout.String())
		}
		if i := strings.IndexByte(said, '\n'); i >= 0 {
			said = said[:i]
		}
		return stdout.String(), fmt.Errorf("git %s in %s: %w: %s", args[0], dir, err, said)
	}
	return stdout.String(), nil
}

// gitEnv is env without what would make git act on another repository
// or wait for a person, in the C locale (its messages are read).
func gitEnv(env []string) []string {
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
			"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "LC_ALL", "LANG", "LANGUAGE":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no")
}

// identity makes a commit flowstate's, author and committer: it needs no
// user.name of the person's, and says whose bookkeeping it is.
var identity = []string{"GIT_AUTHOR_NAME=" + AuthorName, "GIT_AUTHOR_EMAIL=" + AuthorEmail,
	"GIT_COMMITTER_NAME=" + AuthorName, "GIT_COMMITTER_EMAIL=" + AuthorEmail}
