package app

import (
	"testing"

	"github.com/flowstate-dev/flowstate/lib/version"
)

// TestVersion: version prints the stamp scripts/build puts into
// lib/version, and --at-least compares against it (exit 2 when older, or
// when the wanted version is no version).
func TestVersion(t *testing.T) {
	defer func(v, c string) { version.Version, version.Commit = v, c }(version.Version, version.Commit)
	version.Version, version.Commit = "1.4.2", "0123abc"
	dir := t.TempDir()
	if out, _, code := run(t, dir, "version"); code != 0 || out != "flowstate 1.4.2 (commit 0123abc)\n" {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	for _, tt := range []struct {
		min  string
		code int
	}{
		{"1.4.2", 0}, {"1.4", 0}, {"1.0.9", 0}, {"v1.3.0", 0}, {"1.4.2-rc1", 0},
		{"1.4.3", 2}, {"1.10", 2}, {"2", 2},
		{"latest", 2},
	} {
		if _, _, code := run(t, dir, "version", "--at-least", tt.min); code != tt.code {
			t.Errorf("version --at-least %s: exit %d, want %d", tt.min, code, tt.code)
		}
	}
}
