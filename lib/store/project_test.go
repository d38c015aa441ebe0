package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func testProject(t *testing.T) *Project {
	t.Helper()
	dir := t.TempDir()
	p, err := FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := findRoot(deep, nil); got != root {
		t.Errorf("findRoot = %s, want %s", got, root)
	}
	// A nearer .claude wins over the outer .git.
	inner := filepath.Join(root, "a")
	if err := os.Mkdir(filepath.Join(inner, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := findRoot(deep, nil); got != inner {
		t.Errorf("findRoot = %s, want %s", got, inner)
	}
	p, err := FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return root
		}
		return ""
	}, deep)
	if err != nil || p.Dir != root {
		t.Errorf("CLAUDE_PROJECT_DIR not preferred: %v %v", p, err)
	}
	_, err = FindProject(func(k string) string {
		if k == "FLOWSTATE_LOCK_WAIT" {
			return "soon"
		}
		return ""
	}, deep)
	if fail.Code(err) != fail.Usage {
		t.Errorf("bad FLOWSTATE_LOCK_WAIT: %v", err)
	}
}

// TestProjectNeverClaudeHome: outside any project under $HOME the
// project is the working directory, not $HOME (whose .claude is Claude
// Code's configuration); $HOME itself and ~/.claude are refused, however
// they are named.
func TestProjectNeverClaudeHome(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".claude", "scratch/deep", ".claude/projects/x"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := func(project string) func(string) string {
		return func(k string) string {
			return map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": project}[k]
		}
	}
	scratch := filepath.Join(home, "scratch", "deep")
	if p, err := FindProject(env(""), scratch); err != nil || p.Dir != scratch {
		t.Errorf("under $HOME in no project: %+v, %v; want the working directory %s", p, err, scratch)
	}
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ project, cwd, want string }{
		{"", home, "your home directory"},
		{home, scratch, "your home directory"},
		{"", filepath.Join(home, ".claude", "projects", "x"), "inside Claude Code's own configuration"},
		{filepath.Join(home, ".claude"), scratch, "inside Claude Code's own configuration"},
	} {
		_, err := FindProject(env(c.project), c.cwd)
		if fail.Code(err) != fail.Usage || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("CLAUDE_PROJECT_DIR=%q in %s: %v; want exit 2 saying %q", c.project, c.cwd, err, c.want)
		}
	}
	// HOME spelled through a link is still HOME.
	linked := func(k string) string { return map[string]string{"HOME": link}[k] }
	if _, err := FindProject(linked, home); fail.Code(err) != fail.Usage {
		t.Errorf("HOME through a symlink: %v; want it refused", err)
	}
}

// TestStateGitignore: the state directory keeps itself out of git from
// the first write on, and an existing file of that name is left alone.
func TestStateGitignore(t *testing.T) {
	p := testProject(t)
	if err := p.SetSession("s1", "wf"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p.GitignorePath()); err != nil || string(b) != StateGitignore {
		t.Fatalf("state .gitignore = %q, %v", b, err)
	}
	if err := os.WriteFile(p.GitignorePath(), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.SetSession("s1", "wf2"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p.GitignorePath()); string(b) != "mine\n" {
		t.Errorf("an existing .gitignore was replaced: %q", b)
	}
}

// TestClearSessionOnlyTheExpectedPointer: a pointer moved to another
// workflow since the caller judged it is kept; only the one still naming
// the expected workflow goes.
func TestClearSessionOnlyTheExpectedPointer(t *testing.T) {
	p := testProject(t)
	if err := p.SetSession("s1", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if err := p.ClearSession("s1", "wf-old"); err != nil {
		t.Fatal(err)
	}
	if id, err := p.SessionWorkflow("s1"); err != nil || id != "wf-new" {
		t.Fatalf("a pointer moved to wf-new was touched: %q %v", id, err)
	}
	if err := p.ClearSession("s1", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s1")); !os.IsNotExist(err) {
		t.Errorf("pointer naming the expected workflow not removed: %v", err)
	}
	if err := p.ClearSession("s1", "wf-new"); err != nil {
		t.Errorf("clearing a missing pointer: %v", err)
	}

	// A pointer naming no valid workflow is cleared with "" only.
	if err := os.WriteFile(p.SessionPointer("s2"), []byte("../etc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := p.SessionWorkflow("s2"); err != nil || id != "" {
		t.Fatalf("SessionWorkflow of a bad pointer = %q, %v", id, err)
	}
	if err := p.ClearSession("s2", "wf-new"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s2")); err != nil {
		t.Errorf("a bad pointer was removed though it does not name wf-new: %v", err)
	}
	if err := p.ClearSession("s2", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.SessionPointer("s2")); !os.IsNotExist(err) {
		t.Errorf("bad pointer not removed: %v", err)
	}
}

// TestHomeOf: the home /etc/passwd gives a uid, when HOME does not say.
func TestHomeOf(t *testing.T) {
	passwd := []byte("root:x:0:0:root:/root:/bin/bash\n# comment\nbroken line\nann:x:1000:1000:Ann,,,:/home/ann:/bin/zsh\r\nbob:x:10000:10000::/home/bob:/bin/sh")
	for uid, want := range map[int]string{0: "/root", 1000: "/home/ann", 10000: "/home/bob", 100: ""} {
		if got := homeOf(passwd, uid); got != want {
			t.Errorf("homeOf(uid %d) = %q, want %q", uid, got, want)
		}
	}
}

// TestFindProjectLooksAtHomeOnce: finding the project looks up the home
// directories once (HOME read, its symlink resolved, /etc/passwd read
// when unset), with or without CLAUDE_PROJECT_DIR. Before, a project
// found from cwd looked twice.
func TestFindProjectLooksAtHomeOnce(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	for _, projectDir := range []string{"", cwd} {
		reads := 0
		getenv := func(k string) string {
			switch k {
			case "HOME":
				reads++
				return home
			case "CLAUDE_PROJECT_DIR":
				return projectDir
			}
			return ""
		}
		p, err := FindProject(getenv, cwd)
		if err != nil || p.Dir != cwd {
			t.Fatalf("CLAUDE_PROJECT_DIR=%q: %v %v", projectDir, p, err)
		}
		if reads != 1 {
			t.Errorf("CLAUDE_PROJECT_DIR=%q: HOME read %d times", projectDir, reads)
		}
	}
}
