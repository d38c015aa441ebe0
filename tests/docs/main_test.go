// Package docs tests that the documentation tells the truth. Every
// ```bash block in docs/*.md runs, in order, each as its own process
// (as Claude Code runs a command's blocks); an ```output block right
// after one is its expected stdout. The generated docs are regenerated
// and compared. The worked orchestrator in examples/review runs
// end to end with fake agents. Shell completion, the version stamp and
// the marketplace manifest are exercised as a user would.
package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

var (
	repoRoot = testenv.RepoRoot()
	binDir   string // holds the flowstate binary built for these tests
)

func TestMain(m *testing.M) {
	bin, cleanup := testenv.BuildOrExit() // scripts/build: the flags users get
	binDir = filepath.Dir(bin)
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// scratchProject makes an empty git project with examples/ copied in, so
// doc snippets can name examples/review/... as if run from a checkout.
func scratchProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(proj, "examples"), os.DirFS(filepath.Join(repoRoot, "examples"))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	return proj
}

// baseEnv is the environment of a bash block: flowstate on PATH, a
// private HOME, a Claude Code session, and nothing of the caller's
// flowstate settings. The lock wait is long: a doc shows ten concurrent
// writers, each fsyncing under the lock while the other suites load the
// disk, and what it shows is their result, not the lock's patience.
func baseEnv(proj, session string) []string {
	return testenv.Env(filepath.Join(filepath.Dir(proj), "home"),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CLAUDE_CODE_SESSION_ID="+session,
		"LC_ALL=C",
		"FLOWSTATE_LOCK_WAIT=2m",
	)
}
