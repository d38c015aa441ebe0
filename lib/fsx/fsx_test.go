package fsx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	RemoveStrayTemps(dir)
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".dir1", ".hidden", "checkpoint.json", "lock", "state"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
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
	if err := AppendLineDurable(p, []byte("c")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "a\nb\nc\n" {
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
