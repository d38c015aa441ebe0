package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// claudeCLI finds the Claude Code CLI: `claude` on PATH, else the copy the
// e2e tests install under tests/e2e/.cache (.ci/run installs one).
func claudeCLI(t *testing.T) string {
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	p := filepath.Join(repoRoot(t), "tests", "e2e", ".cache", "npm", "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Skip("the Claude Code CLI is not installed (npm install @anthropic-ai/claude-code@2.1.328, or run .ci/run); skipping `claude plugin validate`")
	return ""
}

func TestPluginValidates(t *testing.T) {
	cli := claudeCLI(t)
	cmd := exec.Command(cli, "plugin", "validate", repoRoot(t))
	// A scratch HOME keeps the user's own plugins and settings out of it.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
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
