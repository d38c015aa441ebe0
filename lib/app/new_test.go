package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/scaffold"
)

// TestNewRefusesLinkedDirs: `flowstate new command` into a project whose
// .claude/agents (or commands, flows) is a link is exit 2 and writes
// nothing, there or where the link points. Before, it wrote through it.
func TestNewRefusesLinkedDirs(t *testing.T) {
	for _, linked := range []string{"agents", "commands", "flows"} {
		t.Run(linked, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, ".claude", linked)); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := run(t, dir, "new", "command", "audit")
			if code != 2 || !strings.Contains(stderr, "symlink") {
				t.Errorf("new command with a linked .claude/%s: exit %d, %s; want 2 and the link named", linked, code, stderr)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("new command wrote %s through the link", entries[0].Name())
			}
			for _, rel := range []string{".claude/flows/audit.json", ".claude/commands/audit.md"} {
				if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
					t.Errorf("new command wrote %s before refusing the link", rel)
				}
			}
		})
	}
}

// TestNewRemovesWhatItWroteOnFailure: a write that fails part way takes
// back the files written before it and says so, so that a retry is not
// refused by them. Before, they stayed, and the retry said they were in
// the way.
func TestNewRemovesWhatItWroteOnFailure(t *testing.T) {
	root := t.TempDir()
	// The second file's directory is the first file: its MkdirAll fails.
	files := []scaffold.File{{Path: "a/x", Data: []byte("1")}, {Path: "a/x/y", Data: []byte("2")}}
	written, err := writeNew(root, files)
	if err == nil || !strings.Contains(err.Error(), "removed again") {
		t.Errorf("writeNew failing part way: %v, want the error to say what it wrote was removed", err)
	}
	if len(written) > 0 {
		t.Errorf("writeNew failing part way returned %v as written", written)
	}
	if _, err := os.Lstat(filepath.Join(root, "a", "x")); err == nil {
		t.Error("writeNew failing part way left a/x, which it wrote")
	}
}
