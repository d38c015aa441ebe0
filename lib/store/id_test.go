package store

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestValidID(t *testing.T) {
	ok := []string{"a", "coordinate-20261121-203835-75dc60", "orchestrate_billing_20251102_160312", "A.b-c_9", strings.Repeat("x", 128)}
	bad := []string{"", "../etc", "a/b", "/abs", "..", "a..b", ".hidden", "-flag", "new\nline", "nul\x00", "sp ace", "é", strings.Repeat("x", 129), strings.Repeat("y", 10240)}
	for _, id := range ok {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v", id, err)
		}
	}
	for _, id := range bad {
		err := ValidID(id)
		if fail.Code(err) != fail.Invalid {
			t.Errorf("ValidID(%.20q) = %v, want invalid", id, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x00") {
			t.Errorf("error for %.20q spans lines: %q", id, err)
		}
	}
}

func TestNewID(t *testing.T) {
	now := time.Date(2026, 11, 21, 20, 38, 35, 0, time.UTC)
	re := regexp.MustCompile(`^([a-z0-9-]+)-20261121-203835-[0-9a-f]{6}$`)
	for cmd, prefix := range map[string]string{"coordinate": "coordinate", "My Command!": "my-command", "": "wf", "///": "wf"} {
		id := NewID(cmd, now)
		m := re.FindStringSubmatch(id)
		if m == nil || m[1] != prefix {
			t.Errorf("NewID(%q) = %q, want prefix %q", cmd, id, prefix)
		}
		if err := ValidID(id); err != nil {
			t.Errorf("NewID(%q) = %q is not a valid id: %v", cmd, id, err)
		}
	}
	if NewID("x", now) == NewID("x", now) {
		t.Error("two ids in the same second are equal")
	}
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

func TestSummaryActive(t *testing.T) {
	tests := []struct {
		s        Summary
		want     bool
		finished bool
	}{
		{Summary{CurrentState: "research", Terminal: "plan", Status: "in_progress"}, true, false},
		{Summary{CurrentState: "research", Terminal: "plan"}, true, false},
		{Summary{CurrentState: "plan", Terminal: "plan", Status: "in_progress"}, true, false},
		{Summary{CurrentState: "plan", Terminal: "plan", Status: "complete"}, false, true},
		{Summary{CurrentState: "research", Terminal: "plan", Status: "abandoned"}, false, true},
		{Summary{CurrentState: "research", Terminal: "plan", Status: "failed"}, false, true},
		// Unreadable: neither picked by discovery nor cleaned up as finished.
		{Summary{CurrentState: "unreadable", Status: "unreadable"}, false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Active(); got != tt.want {
			t.Errorf("%+v.Active() = %v", tt.s, got)
		}
		if got := tt.s.Finished(); got != tt.finished {
			t.Errorf("%+v.Finished() = %v", tt.s, got)
		}
	}
}
