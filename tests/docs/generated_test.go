package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The generated docs (cli.md, checkpoint-schema.md, every gen block)
// match what docs/gen writes from the code today.
func TestGeneratedDocsUpToDate(t *testing.T) {
	cmd := exec.Command("go", "run", "./docs/gen", "-check")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docs drifted from the code:\n%s", out)
	}
}

// The diagram in architecture.md is what the shipped binary draws.
func TestArchitectureDiagramIsFlowstateGraph(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "flowstate"), "graph", "--format", "mermaid")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```mermaid\n"+string(out)+"```\n") {
		t.Fatalf("docs/architecture.md does not embed the output of `flowstate graph --format mermaid`; run `go run ./docs/gen`:\n%s", out)
	}
}
