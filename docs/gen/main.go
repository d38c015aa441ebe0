// Command gen writes the generated parts of docs/ from the sources they
// describe, so the docs cannot drift from the code:
//
//   - docs/checkpoint-schema.md from the shipped JSON Schema
//     (checkpoint.SchemaJSON) and the migration steps' doc comments in
//     lib/checkpoint/migrate.go;
//   - docs/cli.md from the command tree the binary runs (app.Commands);
//   - every "<!-- gen ... -->" block in docs/*.md: a file of the
//     repository included verbatim, or the output of a flowstate command
//     (the state machine diagram in docs/architecture.md);
//   - the plugin's phase-loop commands (commands/coordinate.md, ...) and
//     its sub-supervisor agent, from lib/scaffold's templates.
//
// Run it from anywhere in the repository: `go run ./docs/gen`. With
// -check it writes nothing and exits 1 naming each file that differs;
// tests/docs runs it that way.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	check := flag.Bool("check", false, "only compare: exit 1 listing the docs that differ from what gen would write")
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fatal(err)
	}
	out, err := generate(root)
	if err != nil {
		fatal(err)
	}
	var stale []string
	for _, path := range sortedKeys(out) {
		old, err := os.ReadFile(filepath.Join(root, path))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fatal(err)
		}
		if bytes.Equal(old, out[path]) {
			continue
		}
		stale = append(stale, path)
		if !*check {
			if err := os.WriteFile(filepath.Join(root, path), out[path], 0o644); err != nil {
				fatal(err)
			}
			fmt.Fprintf(os.Stderr, "gen: wrote %s\n", path)
		}
	}
	if *check && len(stale) > 0 {
		for _, p := range stale {
			fmt.Fprintf(os.Stderr, "gen: %s is out of date\n", p)
		}
		fatal(errors.New("run `go run ./docs/gen` and commit the result"))
	}
}

// generate returns every generated file's content by repository-relative
// path: the two whole files, and each doc with its gen blocks refreshed.
func generate(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	schema, err := schemaDoc(root)
	if err != nil {
		return nil, err
	}
	out["docs/checkpoint-schema.md"] = schema
	out["docs/cli.md"] = cliDoc()
	plugin, err := pluginFiles()
	if err != nil {
		return nil, err
	}
	maps.Copy(out, plugin)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		if _, generated := out[rel]; generated {
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		fresh, err := splice(old, sources{root: root})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		out[rel] = fresh
	}
	return out, nil
}

// repoRoot is the nearest ancestor of the working directory with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; run gen inside the flowstate repository")
		}
		dir = parent
	}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "gen: %v\n", err)
	os.Exit(1)
}
