// Package plugin tests the flowstate plugin (commands/, agents/,
// .claude-plugin/) against docs/command-protocol.md: every block parses,
// every command and agent obeys the protocol's rules, the real CLI
// validates the plugin, and the orchestrator commands run block by block,
// each bash block its own process, with fake agents writing the files.
package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// doc is one command or agent file, parsed per the command protocol
// (lib/protocol).
type doc struct {
	protocol.Doc
	Path string
}

type step = protocol.Step

// loadDocs parses every markdown file of dir (commands or agents).
func loadDocs(t testing.TB, dir string) []doc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), dir, "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no markdown in %s: %v", dir, err)
	}
	var docs []doc
	for _, p := range paths {
		docs = append(docs, loadDoc(t, filepath.Join(dir, filepath.Base(p))))
	}
	return docs
}

// loadDoc parses the file at rel, relative to the repository.
func loadDoc(t testing.TB, rel string) doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDoc(rel, string(b))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return d
}

// parseDoc parses a command or agent file: the protocol, plus what the
// plugin's files must have beyond it: frontmatter, and every task prompt
// a "prompt: |" block.
func parseDoc(path, md string) (doc, error) {
	pd, err := protocol.Parse(md)
	d := doc{Doc: pd, Path: path}
	if err != nil {
		return d, err
	}
	if d.Frontmatter == nil {
		return d, fmt.Errorf("no frontmatter")
	}
	for _, s := range d.Steps {
		if s.Task != nil && !s.Task.PromptBlock {
			return d, fmt.Errorf("task block at line %d: prompt must be a | block", s.Line)
		}
	}
	return d, nil
}

func (d doc) Name() string { return strings.TrimSuffix(filepath.Base(d.Path), ".md") }

// IsCommand tells commands, whose bodies Claude Code substitutes
// arguments into, from agents.
func (d doc) IsCommand() bool { return filepath.Base(filepath.Dir(d.Path)) == "commands" }
