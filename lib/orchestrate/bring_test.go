package orchestrate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBring: a worker's artifact in its worktree is moved into the
// project; one reached through a link in the worktree (the file, or a
// directory on the way) is left, and the file the link points at stays
// where it is.
func TestBring(t *testing.T) {
	p := project(t)
	wt := filepath.Join(p.Dir, ".claude", "worktrees", "agent-a1")
	rel := filepath.Join(".flowstate", "specs", "w", "summaries", "001.md")
	elsewhere := t.TempDir()
	mine := filepath.Join(elsewhere, "001.md")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(mine, "the person's file")
	reset := func() {
		t.Helper()
		for _, d := range []string{wt, filepath.Join(p.Dir, ".flowstate")} {
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(target, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	artifact := filepath.Join(p.Dir, rel)
	for _, c := range []struct {
		name    string
		make    func()
		brought bool
	}{
		{"a plain file", func() { write(filepath.Join(wt, rel), "summary") }, true},
		{"a link", func() { link(mine, filepath.Join(wt, rel)) }, false},
		{"a directory on the way is a link", func() { link(elsewhere, filepath.Join(wt, filepath.Dir(rel))) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			reset()
			c.make()
			if err := Bring(p, wt, artifact); err != nil {
				t.Fatal(err)
			}
			_, err := os.Lstat(artifact)
			if brought := err == nil; brought != c.brought {
				t.Errorf("brought = %v, want %v", brought, c.brought)
			}
			if b, err := os.ReadFile(mine); err != nil || string(b) != "the person's file" {
				t.Errorf("the file the link points at: %q, %v", b, err)
			}
		})
	}
}
