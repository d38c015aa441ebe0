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
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// doc is one command or agent file, parsed per the command protocol.
type doc struct {
	Path        string
	Frontmatter map[string]string
	Body        string
	Steps       []step
	Sections    map[string]int // "## name" -> index of the first step after it
	Lines       int
}

type step struct {
	Bash string // a ```bash block, verbatim
	Task *task  // or a ```task block
	Line int
}

type task struct {
	SubagentType, Description, ForEach, Prompt string
}

var (
	fence      = regexp.MustCompile("^(`{3,})\\s*([A-Za-z0-9_-]*)")
	heading    = regexp.MustCompile(`^##\s+(.+?)\s*$`)
	taskField  = regexp.MustCompile(`^(\s*)([a-z_]+):\s?(.*)$`)
	keyRef     = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)
	kvLine     = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	writeLine  = regexp.MustCompile("^\\s*(?:[-*]\\s+)?(?:Write|Create|Save)\\b[^:]*:\\s*`?([^\\s`]+)`?\\s*$")
	returnLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?Return exactly:\s*(.*?)\s*$`)
)

// loadDocs parses every markdown file of dir (commands or agents).
func loadDocs(t testing.TB, dir string) []doc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), dir, "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no markdown in %s: %v", dir, err)
	}
	var docs []doc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := parseDoc(p, string(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		docs = append(docs, d)
	}
	return docs
}

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

func (d doc) Name() string { return strings.TrimSuffix(filepath.Base(d.Path), ".md") }

func parseDoc(path, md string) (doc, error) {
	d := doc{Path: path, Frontmatter: map[string]string{}, Sections: map[string]int{}}
	d.Lines = strings.Count(md, "\n")
	rest, ok := strings.CutPrefix(md, "---\n")
	if !ok {
		return d, fmt.Errorf("no frontmatter")
	}
	front, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return d, fmt.Errorf("frontmatter not closed")
	}
	for _, l := range strings.Split(front, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return d, fmt.Errorf("frontmatter line %q is not key: value", l)
		}
		d.Frontmatter[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	d.Body = body
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		if m := heading.FindStringSubmatch(lines[i]); m != nil {
			d.Sections[m[1]] = len(d.Steps)
			continue
		}
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i
		for i++; i < len(lines) && !(strings.HasPrefix(strings.TrimSpace(lines[i]), m[1]) && strings.Trim(strings.TrimSpace(lines[i]), "`") == ""); i++ {
		}
		if i == len(lines) {
			return d, fmt.Errorf("line %d: fence never closed", start+1)
		}
		block := strings.Join(lines[start+1:i], "\n")
		switch m[2] {
		case "bash":
			d.Steps = append(d.Steps, step{Bash: block, Line: start + 1})
		case "task":
			t, err := parseTask(block)
			if err != nil {
				return d, fmt.Errorf("task block at line %d: %w", start+1, err)
			}
			d.Steps = append(d.Steps, step{Task: &t, Line: start + 1})
		}
	}
	return d, nil
}

func parseTask(body string) (task, error) {
	var t task
	lines := strings.Split(body, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "Task {" || strings.TrimSpace(lines[len(lines)-1]) != "}" {
		return t, fmt.Errorf("want Task { ... }")
	}
	for i := 1; i < len(lines)-1; i++ {
		m := taskField.FindStringSubmatch(lines[i])
		if m == nil {
			return t, fmt.Errorf("cannot read %q", lines[i])
		}
		switch m[2] {
		case "subagent_type":
			t.SubagentType = m[3]
		case "description":
			t.Description = m[3]
		case "for_each":
			t.ForEach = m[3]
		case "prompt":
			if m[3] != "|" {
				return t, fmt.Errorf("prompt must be a | block")
			}
			var p []string
			for i++; i < len(lines)-1; i++ {
				p = append(p, strings.TrimPrefix(lines[i], m[1]+"  "))
			}
			t.Prompt = strings.Join(p, "\n")
		default:
			return t, fmt.Errorf("unknown field %q", m[2])
		}
	}
	if t.SubagentType == "" || t.Description == "" || t.Prompt == "" {
		return t, fmt.Errorf("need subagent_type, description and prompt")
	}
	return t, nil
}

// keyValues returns the KEY=VALUE lines of a block's output, in order.
func keyValues(out string) [][2]string {
	var kvs [][2]string
	for _, l := range strings.Split(out, "\n") {
		if m := kvLine.FindStringSubmatch(l); m != nil {
			kvs = append(kvs, [2]string{m[1], m[2]})
		}
	}
	return kvs
}

// IsCommand tells commands, whose bodies Claude Code substitutes
// arguments into, from agents.
func (d doc) IsCommand() bool { return filepath.Base(filepath.Dir(d.Path)) == "commands" }
