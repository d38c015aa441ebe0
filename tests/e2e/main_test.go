//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// Set by TestMain for every test.
var (
	claudeBin  string // the Claude Code CLI of the pinned version
	fixtureBin string // freshly built testdata/fixture-tool
	binDir     string // where the tests' binaries are built
	repoRoot   = testenv.RepoRoot()
	cacheDir   = filepath.Join(repoRoot, "tests", "e2e", ".cache") // gitignored
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
	var err error
	if claudeBin, err = testenv.EnsureClaude(); err != nil {
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
	code := m.Run()
	suiteContext.print(os.Stdout)
	suiteEngines.print(os.Stdout)
	suiteDenials.print(os.Stdout)
	return code, nil
}

var (
	flowstateOnce sync.Once
	flowstatePath string
	flowstateErr  error
)

// flowstateBin builds flowstate (scripts/build: what ships) once for all
// tests that need it, so that the fixture tests do not depend on the state
// of cmd/flowstate.
func flowstateBin(t *testing.T) string {
	t.Helper()
	flowstateOnce.Do(func() {
		flowstatePath, flowstateErr = testenv.Build(binDir)
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
