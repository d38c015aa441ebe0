//go:build e2e

package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// TestFlowstatePluginValidates checks the repository's plugin, with the
// freshly built flowstate in its bin/, with the real CLI's validator.
func TestFlowstatePluginValidates(t *testing.T) {
	dir := preparePlugin(t, repoRoot, map[string]string{"flowstate": flowstateBin(t)})
	cmd := exec.Command(claudeBin, "plugin", "validate", dir)
	cmd.Env = testenv.Env(t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude plugin validate: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "bin: flowstate") {
		t.Errorf("validator does not list bin/flowstate:\n%s", out)
	}
}
