package docs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

type manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Owner   struct {
		Name string `json:"name"`
	} `json:"owner"`
	Plugins []struct {
		Name    string `json:"name"`
		Source  string `json:"source"`
		Version string `json:"version"`
	} `json:"plugins"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The marketplace lists this repository's plugin under the name and
// version its plugin.json declares (Claude Code warns on a mismatch and
// plugin.json wins at install time).
func TestMarketplaceManifest(t *testing.T) {
	var mk, plugin manifest
	readJSON(t, ".claude-plugin/marketplace.json", &mk)
	readJSON(t, ".claude-plugin/plugin.json", &plugin)
	if mk.Name == "" || mk.Owner.Name == "" || len(mk.Plugins) != 1 {
		t.Fatalf("marketplace needs name, owner.name and one plugin: %+v", mk)
	}
	p := mk.Plugins[0]
	if p.Name != plugin.Name || p.Source != "./" || p.Version != plugin.Version {
		t.Fatalf("marketplace entry %+v does not match plugin.json (name %q, version %q) with source ./", p, plugin.Name, plugin.Version)
	}
}

// `claude plugin validate` passes with warnings treated as errors, and the
// repository works as a marketplace: add it, install the plugin from it.
func TestMarketplaceInstall(t *testing.T) {
	claude := testenv.Claude(t)
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(claude, args...)
		cmd.Dir = repoRoot
		cmd.Env = testenv.Env(home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("plugin", "validate", "--strict", ".")
	run("plugin", "marketplace", "add", "./")
	run("plugin", "install", "flowstate@flowstate-marketplace")
	if out := run("plugin", "list"); !strings.Contains(out, "flowstate@flowstate-marketplace") {
		t.Fatalf("plugin list does not show the installed plugin:\n%s", out)
	}
}
