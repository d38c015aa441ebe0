//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

const claudeVersion = "2.1.328"

// ensureClaude returns a Claude Code CLI of claudeVersion: `claude` on PATH if
// it is that version, else the one installed under npmPrefix, installing it
// from the npm registry first if needed.
func ensureClaude(npmPrefix string) (string, error) {
	if p, err := exec.LookPath("claude"); err == nil && isVersion(p) {
		return p, nil
	}
	local := filepath.Join(npmPrefix, "node_modules", ".bin", "claude")
	if isVersion(local) {
		return local, nil
	}
	cmd := exec.Command("npm", "install", "--prefix", npmPrefix, "--no-audit", "--no-fund",
		"@anthropic-ai/claude-code@"+claudeVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install claude-code: %v\n%s", err, out)
	}
	if !isVersion(local) {
		return "", fmt.Errorf("%s does not report version %s after npm install", local, claudeVersion)
	}
	return local, nil
}

func isVersion(bin string) bool {
	out, err := exec.Command(bin, "--version").Output()
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(out)), claudeVersion+" ")
}
