package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Help texts, messages, comments and docs cite what a reader can open:
// the documents this project was designed from (the design sketch, the
// numbered seeds, the reference notes) are not in the repository, so
// nothing may send a reader to them. docs/ pages say the same things.
func TestNoCitationsOutsideTheRepository(t *testing.T) {
	// Built from parts so that this file does not match itself.
	cite := regexp.MustCompile(`\b(design` + `\.md|seeds?` + ` \d{3}|the seed` + `s\b|seed` + `'s|reference` + ` section \d|original-bash` + `-libraries\.md)`)
	skip := []string{".git", "bin", "dist", filepath.Join("tests", "e2e", ".cache")}
	text := map[string]bool{".go": true, ".md": true, ".sh": true, ".txtar": true, ".json": true, ".yaml": true, ".js": true}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !text[filepath.Ext(rel)] && filepath.Base(rel) != "run-hook" && filepath.Base(rel) != "build" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := cite.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which is not in the repository; cite a docs/ page instead:\n\t%s", rel, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
