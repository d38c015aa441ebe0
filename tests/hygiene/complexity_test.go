// Package hygiene checks the code itself for what no compiler checks:
// here, that the functions of lib/ stay small enough to read top to
// bottom.
package hygiene

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

const (
	// maxComplexity is the cyclomatic complexity above which a function
	// needs a reason to stay in one piece.
	maxComplexity = 20
	// maxExceptions is how many such functions lib/ may hold.
	maxExceptions = 5
	// reasonPrefix starts the line of an exception's doc comment that
	// says why it stays in one piece.
	reasonPrefix = "Complexity:"
)

// At most maxExceptions functions of lib/ (tests aside) exceed cyclomatic
// complexity maxComplexity, as gocyclo counts it, and each says why in its
// doc comment, on a line starting "Complexity:". A function past the
// limit is a knot a reader has to hold in their head at once; named steps
// are almost always the better code.
func TestComplexity(t *testing.T) {
	var over []function
	for _, f := range libFunctions(t) {
		switch {
		case f.complexity <= maxComplexity:
		case !hasReason(f.doc):
			t.Errorf("%s: %s has cyclomatic complexity %d (over %d): split it into named steps, or say why it stays whole on a line of its doc comment starting %q",
				f.pos, f.name, f.complexity, maxComplexity, reasonPrefix)
			over = append(over, f)
		default:
			over = append(over, f)
		}
	}
	if len(over) > maxExceptions {
		var list strings.Builder
		for _, f := range over {
			fmt.Fprintf(&list, "\n\t%d %s (%s)", f.complexity, f.name, f.pos)
		}
		t.Errorf("%d functions of lib/ exceed cyclomatic complexity %d; at most %d may:%s",
			len(over), maxComplexity, maxExceptions, list.String())
	}
}

// hasReason reports a doc comment with a line "Complexity: <why>".
func hasReason(doc *ast.CommentGroup) bool {
	return doc != nil && slices.ContainsFunc(strings.Split(doc.Text(), "\n"), func(line string) bool {
		why, ok := strings.CutPrefix(strings.TrimSpace(line), reasonPrefix)
		return ok && strings.TrimSpace(why) != ""
	})
}

// libFunctions parses every Go file under lib/ the go tool builds, tests
// aside, and returns its functions.
func libFunctions(t *testing.T) []function {
	t.Helper()
	lib := filepath.Join(testenv.RepoRoot(), "lib")
	var out []function
	err := filepath.WalkDir(lib, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != lib && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		dir, err := filepath.Rel(lib, filepath.Dir(path))
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, f := range fileFunctions(fset, file) {
			f.name = filepath.ToSlash(dir) + " " + f.name
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
