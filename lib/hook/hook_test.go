package hook

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjectFromPayloadCwd: without CLAUDE_PROJECT_DIR the hook finds
// the project the way the CLI does from the payload's cwd, walking up to
// the directory holding .git, so it exports and sweeps the same project.
func TestProjectFromPayloadCwd(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "src", "pkg")
	for _, d := range []string{filepath.Join(root, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	env := func(vars map[string]string) Env {
		return Env{Getenv: func(k string) string { return vars[k] }, Now: now}
	}
	l := &logger{env: env(nil), event: SessionStart}
	for _, c := range []struct {
		name string
		vars map[string]string
		cwd  string
		want string // "" for no project
	}{
		{"payload cwd in a subdirectory", nil, sub, root},
		{"payload cwd at the root", nil, root, root},
		{"CLAUDE_PROJECT_DIR wins", map[string]string{"CLAUDE_PROJECT_DIR": other}, sub, other},
		{"CLAUDE_PROJECT_DIR without a payload cwd", map[string]string{"CLAUDE_PROJECT_DIR": other}, "", other},
		{"neither: no guessing from the process's cwd", nil, "", ""},
	} {
		p := project(env(c.vars), payload{Cwd: c.cwd}, l)
		switch {
		case c.want == "" && p != nil:
			t.Errorf("%s: project %s, want none", c.name, p.Dir)
		case c.want != "" && (p == nil || p.Dir != c.want):
			t.Errorf("%s: project %+v, want %s", c.name, p, c.want)
		case p != nil && p.LockWait != hookLockWait:
			t.Errorf("%s: lock wait %v, want the hook's %v", c.name, p.LockWait, hookLockWait)
		}
	}
}
