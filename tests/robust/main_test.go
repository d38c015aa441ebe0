// Package robust proves that flowstate never loses, corrupts or executes
// state: it kills the real binary mid-write, runs it from many processes
// at once, feeds it hostile input, and checks what it leaves on disk.
// Every test runs the built binary as separate processes, the way Claude
// Code's bash blocks do, because in-process calls would hide exactly the
// failures (torn writes, stale locks, races between processes) these
// tests are about.
package robust

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bin is the flowstate binary built once for the whole suite.
var bin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "flowstate-robust-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "flowstate")
	// scripts/build: the flags users get, so tests run what ships.
	build := exec.Command("sh", "../../scripts/build", bin)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building flowstate:", err)
		return 1
	}
	return m.Run()
}
