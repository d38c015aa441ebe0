package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/flowstate-dev/flowstate/"

// packageMap reads the table of docs/architecture.md's "Where the code
// lives": each package it names and the row it is on, top row 0.
func packageMap(t *testing.T) map[string]int {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Where the code lives\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Where the code lives" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	pkg := regexp.MustCompile("`(lib/[a-z0-9]+)`")
	rows := map[string]int{}
	row := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[2]), "---") || strings.TrimSpace(cells[2]) == "Package" {
			continue
		}
		for _, m := range pkg.FindAllStringSubmatch(cells[2], -1) {
			if _, twice := rows[m[1]]; twice {
				t.Errorf("docs/architecture.md's package map names %s twice", m[1])
			}
			rows[m[1]] = row
		}
		row++
	}
	return rows
}

// The package map names every package under lib/ and nothing else, and
// its order is the import order: no package imports one on a row above
// its own, so the map is a true guide to where a change can reach.
func TestPackageMapMatchesTheCode(t *testing.T) {
	rows := packageMap(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./lib/...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		p := strings.TrimPrefix(fields[0], module)
		listed[p] = true
		r, ok := rows[p]
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's package map", p)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if d, ok := rows[dep]; ok && d < r {
				t.Errorf("%s (row %d) imports %s, which the map puts above it (row %d)", p, r, dep, d)
			}
		}
	}
	for p := range rows {
		if !listed[p] {
			t.Errorf("docs/architecture.md's package map names %s, which does not exist", p)
		}
	}
}
