//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Set by TestMain for every test.
var (
	claudeBin  string // the Claude Code CLI of the pinned version
	fixtureBin string // freshly built testdata/fixture-tool
	binDir     string // where the tests' binaries are built
	repoRoot   string
	cacheDir   string // tests/e2e/.cache, gitignored
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	repoRoot = filepath.Join(wd, "..", "..")
	cacheDir = filepath.Join(wd, ".cache")
	if claudeBin, err = ensureClaude(filepath.Join(cacheDir, "npm")); err != nil {
		return 0, err
	}
	if binDir, err = os.MkdirTemp("", "flowstate-e2e-bin-"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(binDir)
	fixtureBin = filepath.Join(binDir, "fixture-tool")
	if err := goBuild(fixtureBin, "./tests/e2e/testdata/fixture-tool"); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

var (
	flowstateOnce sync.Once
	flowstatePath string
	flowstateErr  error
)

// flowstateBin builds flowstate once for all tests that need it, so that the
// fixture tests do not depend on the state of cmd/flowstate.
func flowstateBin(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "cmd", "flowstate")); err != nil {
		t.Skip("cmd/flowstate does not exist yet")
	}
	flowstateOnce.Do(func() {
		flowstatePath = filepath.Join(binDir, "flowstate")
		// scripts/build: the flags users get, so tests run what ships.
		cmd := exec.Command("sh", filepath.Join(repoRoot, "scripts", "build"), flowstatePath)
		if b, err := cmd.CombinedOutput(); err != nil {
			flowstateErr = fmt.Errorf("scripts/build: %v\n%s", err, b)
		}
	})
	if flowstateErr != nil {
		t.Fatal(flowstateErr)
	}
	return flowstatePath
}

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
