package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/app"
)

// A gen block in a doc is a start marker, anything, and an end marker:
//
//	<!-- gen file: examples/review/machines/review.json -->
//	<!-- gen run mermaid: flowstate graph --format mermaid -->
//	...
//	<!-- end gen -->
//
// splice replaces what lies between the markers with a fenced block
// holding the file, or the stdout of the flowstate command (run
// in-process, in the repository root, with an empty environment, so the
// output depends on nothing but the code).
var (
	genStart = regexp.MustCompile(`^<!-- gen (file|run ([a-z]+)): (.+?) -->$`)
	genEnd   = "<!-- end gen -->"
)

// sources resolves what gen blocks name.
type sources struct{ root string }

func (s sources) file(path string) ([]byte, error) {
	if filepath.IsAbs(path) || strings.Contains(path, "..") {
		return nil, fmt.Errorf("gen file %q: give a path inside the repository", path)
	}
	return os.ReadFile(filepath.Join(s.root, path))
}

func (s sources) run(cmdline string) ([]byte, error) {
	args := strings.Fields(cmdline)
	if len(args) == 0 || args[0] != "flowstate" {
		return nil, fmt.Errorf("gen run %q: only flowstate commands can be run", cmdline)
	}
	var stdout, stderr bytes.Buffer
	code := app.Main(args, app.IO{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }, Cwd: s.root,
	})
	if code != 0 {
		return nil, fmt.Errorf("gen run %q: exit %d: %s", cmdline, code, stderr.String())
	}
	return stdout.Bytes(), nil
}

// resolver is what splice needs; tests give a fake one.
type resolver interface {
	file(path string) ([]byte, error)
	run(cmdline string) ([]byte, error)
}

func splice(doc []byte, src resolver) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := genStart.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimRight(lines[end], "\n") != genEnd {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: %q has no %q after it", i+1, strings.TrimSpace(lines[i]), genEnd)
		}
		var body []byte
		var lang string
		var err error
		if m[1] == "file" {
			body, err = src.file(m[3])
			lang = langOf(m[3])
		} else {
			body, err = src.run(m[3])
			lang = m[2]
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out.WriteString(fence(lang, body))
		out.WriteString(lines[end])
		i = end
	}
	return []byte(out.String()), nil
}

// fence wraps body in a code fence longer than any backtick run at the
// start of its lines, so an included command file with its own ```bash
// blocks stays one block.
func fence(lang string, body []byte) string {
	longest := 0
	for _, line := range strings.Split(string(body), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		n := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		longest = max(longest, n)
	}
	ticks := strings.Repeat("`", max(3, longest+1))
	text := string(body)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return ticks + lang + "\n" + text + ticks + "\n"
}

func langOf(path string) string {
	switch filepath.Ext(path) {
	case ".json":
		return "json"
	case ".md":
		return "markdown"
	case ".sh", ".bash":
		return "bash"
	}
	return "text"
}
