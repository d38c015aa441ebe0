package fsx

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
