// Package robust proves that flowstate never loses, corrupts or executes
// state: it kills the real binary mid-write, runs it from many processes
// at once, feeds it hostile input, and checks what it leaves on disk.
// Every test runs the built binary as separate processes, the way Claude
// Code's bash blocks do, because in-process calls would hide exactly the
// failures (torn writes, stale locks, races between processes) these
// tests are about.
package robust

import (
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// bin is the flowstate binary built once for the whole suite.
var bin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &bin) }
