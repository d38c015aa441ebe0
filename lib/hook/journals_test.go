package hook

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestNewest: of many runs' journals, the latest written few are read.
func TestNewest(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	base := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	for i, name := range []string{"a", "b", "c", "d", "e", "f"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration((i*5)%6) * time.Minute) // a 0, b 5, c 4, d 3, e 2, f 1
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got := newest(paths, 3)
	want := []string{filepath.Join(dir, "b"), filepath.Join(dir, "c"), filepath.Join(dir, "d")}
	if !slices.Equal(got, want) {
		t.Errorf("newest = %v, want %v", got, want)
	}
	if got := newest(paths[:2], 4); len(got) != 2 {
		t.Errorf("newest of two = %v", got)
	}
}
