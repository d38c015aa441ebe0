// Package installtest tests `flowstate install`, `uninstall` and `doctor`
// against settings.json fixtures, running the real binary in a bare
// environment as Claude Code's hooks would. Build is shared with
// tests/hook, which needs the same binary.
package installtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build compiles cmd/flowstate into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "flowstate")
	// scripts/build: the flags users get, so tests run what ships.
	cmd := exec.Command("sh", filepath.Join(RepoRoot(), "scripts", "build"), bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// RepoRoot is the repository the tests run in.
func RepoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
}

// BuildOrExit is for TestMain: it builds into a temp dir, exiting the
// test binary when that fails, and returns the binary and a cleanup.
func BuildOrExit() (string, func()) {
	dir, err := os.MkdirTemp("", "flowstate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, err := Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	return bin, func() { os.RemoveAll(dir) }
}
