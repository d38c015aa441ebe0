package fsx

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestRemoveStrayTemps removes only WriteFile's temp names.
func TestRemoveStrayTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"checkpoint.json", ".checkpoint.json8397547522849977611", ".state42", ".hidden", "lock", "state"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".dir1"), DirPerm); err != nil {
		t.Fatal(err)
	}
	// With a cutoff, only temps written before it go.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".state42"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStrayTemps(dir, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if want := []string{".checkpoint.json8397547522849977611", ".dir1", ".hidden", "checkpoint.json", "lock", "state"}; !slices.Equal(names(dir), want) {
		t.Errorf("after a cutoff: left %q, want %q", names(dir), want)
	}
	if err := RemoveStrayTemps(dir, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{".dir1", ".hidden", "checkpoint.json", "lock", "state"}; !slices.Equal(names(dir), want) {
		t.Errorf("left %q, want %q", names(dir), want)
	}
	if err := RemoveStrayTemps(filepath.Join(dir, "missing"), time.Time{}); err != nil {
		t.Errorf("a missing dir: %v", err)
	}
	// A link to a directory is refused, and nothing where it points goes.
	link := filepath.Join(t.TempDir(), "sessions")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".state7"), nil, FilePerm); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStrayTemps(link, time.Time{}); fail.Code(err) != fail.Usage || !slices.Contains(names(dir), ".state7") {
		t.Errorf("through a link: %v, left %q", err, names(dir))
	}
}

func names(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestStray: a temp file is removed only when its name is an atomic
// writer's, it is a regular file, and it is older than the cutoff (any
// age with a zero cutoff).
func TestStray(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cutoff := now.Add(-time.Minute)
	for _, c := range []struct {
		name     string
		mode     fs.FileMode
		modified time.Time
		cutoff   time.Time
		want     bool
	}{
		{".checkpoint.json8397547522849977611", 0o600, cutoff.Add(-time.Second), cutoff, true},
		{".state42", 0o600, cutoff.Add(-time.Hour), cutoff, true},
		{".state42", 0o600, cutoff, cutoff, false},                              // at the cutoff: a writer may be in flight
		{".state42", 0o600, now, cutoff, false},                                 // being written
		{".state42", fs.ModeDir | 0o700, cutoff.Add(-time.Hour), cutoff, false}, // not a file
		{".state42", fs.ModeSymlink | 0o777, cutoff.Add(-time.Hour), cutoff, false},
		{"state", 0o600, cutoff.Add(-time.Hour), cutoff, false}, // the real file
		{"checkpoint.json", 0o600, cutoff.Add(-time.Hour), cutoff, false},
		{".hidden", 0o600, cutoff.Add(-time.Hour), cutoff, false}, // no random suffix
		{".1", 0o600, cutoff.Add(-time.Hour), cutoff, false},      // too short to be dot, name, digits
		{"state42", 0o600, cutoff.Add(-time.Hour), cutoff, false}, // no dot
		{".state42", 0o600, now, time.Time{}, true},               // no cutoff: every temp
		{".state42", fs.ModeSymlink | 0o777, now, time.Time{}, false},
		{"state", 0o600, now, time.Time{}, false},
	} {
		if got := stray(c.name, c.mode, c.modified, c.cutoff); got != c.want {
			t.Errorf("stray(%q, %v, %v, %v) = %v, want %v", c.name, c.mode, c.modified, c.cutoff, got, c.want)
		}
	}
}

// TestWriteFileAndAppend: a replace leaves no temp behind, 0600, and both
// appends add whole lines after cutting a torn tail.
func TestWriteFileAndAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("a\ntorn")); err != nil {
		t.Fatal(err)
	}
	if err := AppendLine(p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 3)
	size, n, err := AppendLineDurable(p, []byte("c"), head, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// The size after the append and the first bytes, from the open file.
	if size != 6 || string(head[:n]) != "a\nb" {
		t.Errorf("AppendLineDurable = size %d, head %q; want 6, \"a\\nb\"", size, head[:n])
	}
	if size, n, err := AppendLineDurable(p, []byte("d"), make([]byte, 64), 1<<20); err != nil || size != 8 || n != 8 {
		t.Errorf("a head longer than the file: size %d, n %d, %v; want 8, 8", size, n, err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "a\nb\nc\nd\n" {
		t.Errorf("content %q", b)
	}
	st, _ := os.Stat(p)
	entries, _ := os.ReadDir(dir)
	if st.Mode().Perm() != FilePerm || len(entries) != 1 {
		t.Errorf("mode %v, %d entries", st.Mode(), len(entries))
	}
}

// TestEnsureDirRefusesLinks: a link to a directory and a dangling link
// are both refused (exit 2, naming the link) and nothing is created
// through them; a real directory is created 0700 or accepted as it is.
func TestEnsureDirRefusesLinks(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(target, DirPerm); err != nil {
		t.Fatal(err)
	}
	link, dangling, file := filepath.Join(root, "link"), filepath.Join(root, "dangling"), filepath.Join(root, "file")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "missing"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, FilePerm); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{link, dangling, file} {
		err := EnsureDir(d)
		if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), d+" is a symlink or not a directory") {
			t.Errorf("EnsureDir(%s) = %v, want a usage error naming it", filepath.Base(d), err)
		}
		if err := RefuseSymlinks(filepath.Join(root, "nothing"), d); fail.Code(err) != fail.Usage {
			t.Errorf("RefuseSymlinks(%s) = %v", filepath.Base(d), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "missing")); err == nil {
		t.Error("a dangling link's target was created")
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("something was created through the link: %v", entries)
	}
	deep := filepath.Join(root, "a", "b")
	for range 2 { // creating, then finding it there
		if err := EnsureDir(deep); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(deep); err != nil || st.Mode().Perm() != DirPerm {
		t.Errorf("created %v, %v", st, err)
	}
	if err := RefuseSymlinks(deep, filepath.Join(root, "nothing")); err != nil {
		t.Errorf("RefuseSymlinks of a real and a missing directory: %v", err)
	}
}
