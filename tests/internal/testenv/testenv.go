// Package testenv holds what the test suites under tests/ share: the
// repository root, the flowstate binary built the way users get it, exit
// codes of runs, tree snapshots, the pinned Claude Code CLI, and a clean
// environment for child processes.
package testenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// RepoRoot is the repository the tests run in.
func RepoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", "..", ".."))
}

// Build compiles flowstate with scripts/build (the flags users get, so
// tests run what ships) into dir and returns the binary's path. args are
// passed on to scripts/build after the output path, e.g. "-ldflags", "...",
// which replaces its version stamp.
func Build(dir string, args ...string) (string, error) {
	bin := filepath.Join(dir, "flowstate")
	cmd := exec.Command("sh", append([]string{filepath.Join(RepoRoot(), "scripts", "build"), bin}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/build: %v\n%s", err, out)
	}
	return bin, nil
}

// BuildOrExit is for TestMain: it builds into a new temporary directory,
// exiting the test binary when that fails, and returns the binary and a
// cleanup that removes the directory.
func BuildOrExit(args ...string) (bin string, cleanup func()) {
	dir, err := os.MkdirTemp("", "flowstate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, err = Build(dir, args...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	return bin, func() { os.RemoveAll(dir) }
}

// RunWithBinary is a suite's TestMain: it builds flowstate as users get
// it (BuildOrExit), sets *bin to its path, runs the tests, removes the
// build and exits with their status.
func RunWithBinary(m *testing.M, bin *string) {
	var cleanup func()
	*bin, cleanup = BuildOrExit()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// ExitCode is the exit status of a finished run from the error
// exec.Cmd.Run (or Wait, Output) returned: 0 for nil, the process's
// status for an *exec.ExitError (-1 if a signal ended it), and the error
// itself when the process could not be run at all.
func ExitCode(err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	}
	return 0, err
}

// Snapshot records every file, directory and symlink under root (path
// relative to root -> kind, permissions, and a file's content or a link's
// target), to prove that something changed nothing. Entries whose
// relative path is in skip are left out, directories with all they hold.
// A root that does not exist is an empty snapshot.
func Snapshot(tb testing.TB, root string, skip ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			desc += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		}
		out[rel] = desc
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		tb.Fatal(err)
	}
	return out
}

// TreeDiff lists, sorted, what differs between two snapshots: "added P",
// "removed P", "changed P".
func TreeDiff(before, after map[string]string) []string {
	var diff []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diff = append(diff, "removed "+k)
		} else if v != w {
			diff = append(diff, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, "added "+k)
		}
	}
	slices.Sort(diff)
	return diff
}

// CopyTree copies the regular files, directories and symlinks under src
// into dst (created if needed), keeping permissions. Entries whose path
// relative to src is in skip are left out, directories with all they
// hold.
func CopyTree(dst, src string, skip ...string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil // sockets, devices: not source
	})
}

// SourceTree copies the repository's working tree into dst as a checkout
// without build products would have it: no .git, nothing .gitignore
// names (bin/, dist/, the e2e cache, state, test binaries and profiles).
// Uncommitted changes are included; that is the source under test.
func SourceTree(dst string) error {
	root := RepoRoot()
	skip := []string{".git", "bin", "dist", filepath.Join("tests", "e2e", ".cache"), filepath.Join(".claude", "state")}
	var generated []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(rel, ".test") || strings.HasSuffix(rel, ".prof")) {
			generated = append(generated, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return CopyTree(dst, root, append(skip, generated...)...)
}

// Env is a clean environment for a child process: the few variables of
// ours a program needs to run at all (PATH, locale, time zone, user,
// shell, terminal, TMPDIR), HOME set to home, then extra ("NAME=value",
// later entries win). Nothing else of the caller's reaches the child: no
// CLAUDE_* or ANTHROPIC_* of an outer Claude Code session, no FLOWSTATE_*
// settings, no XDG_* directories, no proxies.
func Env(home string, extra ...string) []string {
	var env []string
	for _, name := range []string{"PATH", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "SHELL", "TERM"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env, "HOME="+home)
	return append(env, extra...)
}

// WaveLeftovers lists what a state's isolated waves left behind in the
// git repository at dir, which they must not: worktrees besides the
// main one, branches of Claude Code's worktrees (worktree-*), a merge in
// progress, changes of tracked files.
func WaveLeftovers(tb testing.TB, dir string) []string {
	tb.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	var left []string
	if trees := git("worktree", "list"); strings.Contains(trees, "\n") {
		left = append(left, "worktrees:\n"+trees)
	}
	if branches := git("branch", "--list", "worktree-*"); branches != "" {
		left = append(left, "branches: "+branches)
	}
	if status := git("status", "--porcelain", "--untracked-files=no"); status != "" {
		left = append(left, "changes of the working tree (or a merge in progress):\n"+status)
	}
	return left
}

// FromProject is path, a file in the project, as flowstate's briefs and
// messages name it: from the project's root.
func FromProject(tb testing.TB, project, path string) string {
	tb.Helper()
	rel, err := filepath.Rel(project, path)
	if err != nil || !filepath.IsLocal(rel) {
		tb.Fatalf("%s is not in the project %s", path, project)
	}
	return rel
}
