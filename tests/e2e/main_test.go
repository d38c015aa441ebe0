//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Set by TestMain for every test.
var (
	claudeBin  string // the Claude Code CLI of the pinned version
	flowstate  string // freshly built flowstate, "" while cmd/flowstate does not exist
	fixtureBin string // freshly built testdata/fixture-tool
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
	bins, err := os.MkdirTemp("", "flowstate-e2e-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(bins)
	fixtureBin = filepath.Join(bins, "fixture-tool")
	if err := goBuild(fixtureBin, "./tests/e2e/testdata/fixture-tool"); err != nil {
		return 0, err
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "cmd", "flowstate")); err == nil {
		flowstate = filepath.Join(bins, "flowstate")
		if err := goBuild(flowstate, "./cmd/flowstate"); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
