package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// Every ```bash block of docs/*.md runs, in order, each as a separate
// bash process in one scratch project per doc, the way Claude Code runs
// a command's blocks: same session, no shared shell variables. A block
// must exit 0 (docs show refusals as `cmd || echo "exit $?"`); an
// ```output block right after it is its expected stdout ("..." matches
// anything). ```bash legacy blocks show the old bash libraries and are
// not run; any other ```bash variant is a mistake.
func TestDocSnippets(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	for _, path := range docs {
		name := strings.TrimSuffix(filepath.Base(path), ".md")
		t.Run(name, func(t *testing.T) { runDoc(t, path) })
	}
}

func runDoc(t *testing.T, path string) {
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := protocol.Blocks(string(md))
	if err != nil {
		t.Fatal(err)
	}
	proj := scratchProject(t)
	env := baseEnv(proj, "docs-"+filepath.Base(path))
	ran := 0
	for i, b := range all {
		switch {
		case b.Info == "bash":
		case b.Info == "bash legacy":
			continue
		case strings.HasPrefix(b.Info, "bash"):
			t.Fatalf("line %d: unknown block marker %q; use ```bash (run by this test) or ```bash legacy", b.Line, b.Info)
		default:
			continue
		}
		ran++
		cmd := exec.Command("bash", "-c", b.Body)
		cmd.Dir, cmd.Env = proj, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("line %d (## %s): %v\n--- block\n%s\n--- stdout\n%s--- stderr\n%s", b.Line, b.Section, err, b.Body, stdout.String(), stderr.String())
		}
		if i+1 < len(all) && all[i+1].Info == "output" && !matchOutput(all[i+1].Body, stdout.String()) {
			t.Errorf("line %d (## %s): stdout differs from the output block at line %d\n--- got\n%s--- want\n%s--- stderr\n%s",
				b.Line, b.Section, all[i+1].Line, stdout.String(), all[i+1].Body, stderr.String())
		}
	}
	t.Logf("%d bash blocks ran", ran)
}

// commandNames lists the commands `flowstate help` shows, in its order,
// without the headings of their categories.
func commandNames(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "flowstate"), "help").Output()
	if err != nil {
		t.Fatalf("flowstate help: %v", err)
	}
	_, list, ok := strings.Cut(string(out), "COMMANDS:\n")
	if !ok {
		t.Fatalf("flowstate help has no COMMANDS: section:\n%s", out)
	}
	list, _, _ = strings.Cut(list, "\nGLOBAL OPTIONS:")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(line, ":") {
			names = append(names, f[0])
		}
	}
	return names
}
