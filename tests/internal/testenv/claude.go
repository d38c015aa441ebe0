package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ClaudeVersion is the Claude Code CLI the tests run against (test.sh
// installs the same one).
const ClaudeVersion = "2.1.328"

// ClaudeNPMPrefix is where test.sh and the e2e suite install the CLI.
func ClaudeNPMPrefix() string {
	return filepath.Join(RepoRoot(), "tests", "e2e", ".cache", "npm")
}

// FindClaude returns a Claude Code CLI of ClaudeVersion: `claude` on PATH
// if it is that version, else the one installed under ClaudeNPMPrefix. The
// error says what was found instead.
func FindClaude() (string, error) {
	var seen []string
	candidates := []string{filepath.Join(ClaudeNPMPrefix(), "node_modules", ".bin", "claude")}
	if p, err := exec.LookPath("claude"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		v := claudeVersion(p)
		if v == ClaudeVersion {
			return p, nil
		}
		seen = append(seen, fmt.Sprintf("%s reports version %q", p, v))
	}
	if len(seen) == 0 {
		return "", fmt.Errorf("the Claude Code CLI %s is not installed", ClaudeVersion)
	}
	return "", fmt.Errorf("no Claude Code CLI %s: %s", ClaudeVersion, strings.Join(seen, "; "))
}

// Claude is FindClaude for a test that needs the CLI: without it the
// test is skipped, saying how to install it.
func Claude(t testing.TB) string {
	t.Helper()
	p, err := FindClaude()
	if err != nil {
		t.Skipf("%v (test.sh installs it: npm install --prefix %s @anthropic-ai/claude-code@%s)", err, ClaudeNPMPrefix(), ClaudeVersion)
	}
	return p
}

// EnsureClaude is FindClaude, installing ClaudeVersion from the npm
// registry under ClaudeNPMPrefix first if needed.
func EnsureClaude() (string, error) {
	if p, err := FindClaude(); err == nil {
		return p, nil
	}
	cmd := exec.Command("npm", "install", "--prefix", ClaudeNPMPrefix(), "--no-audit", "--no-fund",
		"@anthropic-ai/claude-code@"+ClaudeVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install claude-code: %v\n%s", err, out)
	}
	return FindClaude()
}

// claudeVersion is the version `bin --version` reports ("2.1.328 (Claude
// Code)" gives "2.1.328"), or the error.
func claudeVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return err.Error()
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v
}
