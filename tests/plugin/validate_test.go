package plugin

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

func TestPluginValidates(t *testing.T) {
	cmd := exec.Command(testenv.Claude(t), "plugin", "validate", testenv.RepoRoot())
	// A scratch HOME keeps the user's own plugins and settings out of it.
	home := t.TempDir()
	cmd.Env = testenv.Env(home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude plugin validate: %v\n%s", err, out)
	}
	for _, d := range allDocs(t) {
		kind := "agents"
		if d.IsCommand() {
			kind = "commands"
		}
		if want := kind + ": flowstate:" + d.Name(); !strings.Contains(string(out), want) {
			t.Errorf("validator does not list %q:\n%s", want, out)
		}
	}
}
