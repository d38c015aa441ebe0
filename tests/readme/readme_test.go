// Package readmetest follows the README as a newcomer would: a fresh
// `git clone` (of the working tree under test: only the URL is this
// repository's), exactly the README's commands in a scratch HOME with a
// scratch project, and the real Claude Code CLI where the README says to
// use Claude Code, answered by the e2e stand-in model. If a step the
// README gives fails here, the README is wrong.
package readmetest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// cloneURL is what the README clones; the test clones the working tree instead.
const cloneURL = "https://github.com/flowstate-dev/flowstate"

// newcomer is a user's machine: a scratch HOME holding a project, the
// tools on PATH (Go, git, the Claude Code CLI), Go's caches (a machine
// with Go has them; downloading every module would test the network),
// and nothing of an outer Claude Code session.
type newcomer struct {
	t      *testing.T
	home   string
	env    []string
	claude string
	model  *standin.Server
}

func newNewcomer(t *testing.T, claude string) *newcomer {
	t.Helper()
	caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil || len(strings.Fields(string(caches))) != 2 {
		t.Fatalf("go env GOCACHE GOMODCACHE: %v %q", err, caches)
	}
	gocache, gomodcache := strings.Fields(string(caches))[0], strings.Fields(string(caches))[1]
	model, err := standin.Start(standin.Knobs{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	home := t.TempDir()
	path := filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH")
	return &newcomer{t: t, home: home, claude: claude, model: model, env: testenv.Env(home,
		"PATH="+path, "GOCACHE="+gocache, "GOMODCACHE="+gomodcache, "GOTOOLCHAIN=local",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=newcomer", "GIT_AUTHOR_EMAIL=newcomer@example.com",
		"GIT_COMMITTER_NAME=newcomer", "GIT_COMMITTER_EMAIL=newcomer@example.com",
		"ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-fake",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")}
}

// run runs a command in dir and returns its combined output, failing the
// test unless it exits 0.
func (n *newcomer) run(dir string, name string, args ...string) string {
	n.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, n.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		n.t.Fatalf("in %s: %s %s: %v\n%s", dir, name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// bash runs a README block as typed into a terminal in dir: stop at the
// first failing command.
func (n *newcomer) bash(dir, block string) string {
	n.t.Helper()
	return n.run(dir, "bash", "-euo", "pipefail", "-c", block)
}

// project makes a git project with one commit in HOME.
func (n *newcomer) project(name string) string {
	n.t.Helper()
	dir := filepath.Join(n.home, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# "+name+"\n"), 0o644); err != nil {
		n.t.Fatal(err)
	}
	n.run(dir, "git", "init", "-q")
	n.run(dir, "git", "add", "README.md")
	n.run(dir, "git", "commit", "-q", "-m", "start")
	return dir
}

// useClaudeCode types prompt into Claude Code in dir (as `claude -p`), in
// its default permission mode, as the README says: nothing of
// flowstate's asks the newcomer, so nothing is refused.
func (n *newcomer) useClaudeCode(dir, prompt string, args ...string) string {
	n.t.Helper()
	start := time.Now()
	cmd := exec.Command(n.claude, append([]string{"-p", prompt, "--output-format", "json"}, args...)...)
	cmd.Dir, cmd.Env = dir, n.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		n.t.Fatalf("in %s: claude -p %q: %v\n%s%s", dir, prompt, err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	n.t.Logf("claude -p %q: %s", prompt, time.Since(start).Round(time.Millisecond))
	var res struct {
		Result  string            `json:"result"`
		Denials []json.RawMessage `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		n.t.Fatalf("claude -p %q: the JSON result does not parse: %v\n%s", prompt, err, out)
	}
	if len(res.Denials) > 0 {
		n.t.Errorf("claude -p %q in the default permission mode: Claude Code refused %s", prompt, res.Denials)
	}
	return res.Result
}

// finished checks, with the project's own flowstate, that the project
// has exactly one workflow and that it finished, and that git sees none
// of its state.
func (n *newcomer) finished(dir, flowstate string) {
	n.t.Helper()
	list := n.run(dir, flowstate, "list")
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 2 || !regexp.MustCompile(`^coordinate-\S+ +coordinate +research-and-plan +plan +complete `).MatchString(lines[1]) {
		n.t.Errorf("in %s after /coordinate: flowstate list:\n%s", dir, list)
	}
	for _, line := range strings.Split(n.run(dir, "git", "status", "--porcelain", "--untracked-files=all"), "\n") {
		if strings.Contains(line, ".claude/state") {
			n.t.Errorf("in %s, git sees workflow state: %s", dir, line)
		}
	}
}

// upstream is the repository the README's clone line stands for: a clone
// of this one (a new repository when the source is no git checkout) with
// the working tree under test committed on top.
func upstream(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "flowstate")
	start := []string{"clone", "-q", testenv.RepoRoot(), dir}
	if exec.Command("git", "-C", testenv.RepoRoot(), "rev-parse", "--git-dir").Run() != nil {
		start = []string{"init", "-q", dir}
	}
	if out, err := exec.Command("git", start...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", start, err, out)
	}
	if err := testenv.SourceTree(dir); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "the working tree under test"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// section returns the one ```bash block of the README's section.
func section(t *testing.T, blocks []protocol.Block, name string) string {
	t.Helper()
	var found []string
	for _, b := range blocks {
		if b.Section == name && b.Info == "bash" {
			found = append(found, b.Body)
		}
	}
	if len(found) != 1 {
		t.Fatalf("README section %q has %d bash blocks, want 1", name, len(found))
	}
	return found[0]
}

// quoted returns the first `code` span of the README after lead.
func quoted(t *testing.T, readme, lead string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(lead) + "\\s*`([^`]+)`").FindStringSubmatch(readme)
	if m == nil {
		t.Fatalf("the README no longer says %q followed by a command", lead)
	}
	return m[1]
}

// TestReadme: the README's "Install and run" (clone, ./install.sh into a
// project, /coordinate in Claude Code), its quick start in a terminal, the
// plugin route, and the test command, on a fresh clone.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("clones, builds and runs Claude Code")
	}
	claude := testenv.Claude(t)
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	blocks, err := protocol.Blocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	n := newNewcomer(t, claude)
	project := n.project("my-project")

	// Clone and install, as written; only the URL is this repository.
	install := section(t, blocks, "Install and run")
	if !strings.Contains(install, "git clone "+cloneURL+" ") {
		t.Fatalf("the README's install block no longer clones %s:\n%s", cloneURL, install)
	}
	out := n.bash(n.home, strings.Replace(install, cloneURL, upstream(t), 1))
	bin := filepath.Join(project, ".claude", "bin", "flowstate")
	for _, want := range []string{"Next:", "In Claude Code, in " + project + ": /coordinate", "export PATH=" + filepath.Dir(bin) + `:"$PATH"`} {
		if !strings.Contains(out, want) {
			t.Errorf("./install.sh does not say what to do next (%q):\n%s", want, out)
		}
	}
	clone := filepath.Join(n.home, "flowstate")
	// "What a team commits": git sees nothing else of the install.
	for _, line := range strings.Split(strings.TrimRight(n.run(project, "git", "status", "--porcelain", "--untracked-files=all"), "\n"), "\n") {
		if p := line[3:]; !regexp.MustCompile(`^\.claude/(commands/[^/]+\.md|agents/[^/]+\.md|workflows/[^/]+\.js|settings\.json|flowstate-manifest\.json)$`).MatchString(p) {
			t.Errorf("after ./install.sh git sees %s, which the README does not list among what a team commits", p)
		}
	}

	// "Then in Claude Code, in that project: /coordinate ..."
	n.useClaudeCode(project, quoted(t, readme, "Then in Claude Code, in that project:"))
	n.finished(project, bin)

	// The quick start, in a terminal.
	out = n.bash(n.home, section(t, blocks, "Quick start: flowstate from bash blocks"))
	if !strings.Contains(out, "research "+project+"/.flowstate/specs/reports\n") || !strings.HasSuffix(out, "{\"tokens\":1200}\nplan\n") {
		t.Errorf("the quick start printed:\n%s", out)
	}

	// "./install.sh --uninstall ~/my-project removes exactly what was added":
	// the workflow state and the artifacts stay, git sees what it saw.
	m := regexp.MustCompile("`(\\./install\\.sh --uninstall [^`]+)`\\s+removes\\s+exactly\\s+what\\s+was\\s+added").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README no longer says how to uninstall")
	}
	n.bash(clone, m[1])
	if _, err := os.Stat(filepath.Join(project, ".claude", "commands")); err == nil {
		t.Errorf("%s left the commands in %s", m[1], project)
	}

	// The plugin route, in another project: no install there, and still
	// git sees no state.
	n.bash(clone, quoted(t, readme, "As a plugin instead:"))
	other := n.project("other-project")
	pluginDir := quoted(t, readme, "then, in your\nproject,")
	if pluginDir != "claude --plugin-dir ~/flowstate" {
		t.Fatalf("the README's plugin command is %q; this test runs claude --plugin-dir ~/flowstate", pluginDir)
	}
	n.useClaudeCode(other, "/flowstate:coordinate Add OAuth login with server-side sessions", "--plugin-dir", clone)
	n.finished(other, filepath.Join(clone, "bin", "flowstate"))
	if st, err := os.Stat(filepath.Join(other, ".claude", "settings.json")); err == nil {
		t.Errorf("the plugin route wrote the project's settings: %v", st.Name())
	}

	// ./test.sh is the test command, and CI runs exactly it; it is a
	// runnable script in the clone (CI runs it on a clean checkout).
	test := strings.Fields(section(t, blocks, "Test"))[0]
	ci, err := os.ReadFile(filepath.Join(clone, ".ci", "run"))
	if err != nil || !strings.Contains(string(ci), "\nexec "+test+"\n") {
		t.Errorf(".ci/run does not run the README's test command %s:\n%s", test, ci)
	}
	if st, err := os.Stat(filepath.Join(clone, test)); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable in a fresh clone: %v", test, err)
	}
	n.run(clone, "bash", "-n", test)
}
