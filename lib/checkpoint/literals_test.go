package checkpoint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// literalAllowed are the packages that may still spell checkpoint paths,
// and why. Nothing else may: a field is named in fields.go and nowhere
// else.
var literalAllowed = map[string]string{}

// notACheckpoint is the comment that marks a literal as a field of
// another JSON document that shares a name with the checkpoint's (the
// Bash tool's input has a "command"), on the literal's line.
const notACheckpoint = "not a checkpoint path"

// TestNoCheckpointPathLiterals: no Go source of lib/ outside this package
// (tests aside) spells a checkpoint path as a string literal; it names the
// field through fields.go (PathCurrentState, PhaseData(state, key)) or
// reads the View. A literal is a checkpoint path when
//   - it names a top-level field of the checkpoint that is no everyday
//     word (state_machine, phase_data, …), alone or followed by '.': a
//     dotted path, a map key, a prefix joined to a name;
//   - it is an everyday word among the top-level fields (status, hold,
//     metadata, …) followed by '.' and a field of that object
//     ("hold.by", "metadata.revision");
//   - or it is the path of a gjson/sjson call, of checkpoint.Get, Set,
//     Append or Increment or of the store's SetCheckpoint,
//     AppendCheckpoint or IncrementCheckpoint (directly, as the left end
//     of a '+', or through a constant of the package), and its first
//     component is any top-level field ("status", "command").
//
// A literal that names a field of another JSON document sharing a name
// with the checkpoint's says so on its line (notACheckpoint).
func TestNoCheckpointPathLiterals(t *testing.T) {
	found := pathLiterals(t, "..", literalAllowed)
	for _, f := range found {
		t.Errorf("%s: %s spells a checkpoint path; use the checkpoint.Path* constants, the path builders (checkpoint.PhaseData, …) or checkpoint.ViewOf", f.pos, f.lit)
	}
}

// The detector itself, on sources that spell paths in each of the ways
// above, and on ones that do not.
func TestPathLiteralDetector(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{`var _ = gjson.GetBytes(doc, "state_machine.current_state")`, []string{`"state_machine.current_state"`}},
		{`var _ = gjson.GetBytes(doc, "status")`, []string{`"status"`}},
		{`var _ = sjson.SetBytes(doc, "phase_data."+state+".x", 1)`, []string{`"phase_data."`}},
		{`const p = "status"; var _, _ = sjson.DeleteBytes(doc, p)`, []string{`"status"`}},
		{`var _, _, _ = checkpoint.Get(doc, "command")`, []string{`"command"`}},
		{`var _ = w.SetCheckpoint("status", v)`, []string{`"status"`}},
		{`var _ = r.Get("error_state")`, []string{`"error_state"`}},
		{`var _ = map[string]int{"supervisor_state": 1}`, []string{`"supervisor_state"`}},
		{`const p = "metadata.revision"`, []string{`"metadata.revision"`}},
		{`var _ = "hold.by"`, []string{`"hold.by"`}},
		{`var _ = gjson.GetBytes(in, "command") // not a checkpoint path: a tool's input`, nil},
		// Everyday words elsewhere are not paths: flag names, worker
		// fields, events, file names.
		{`var _ = c.String("command")`, nil},
		{`var _ = w.Get("status")`, nil},
		{`var _ = map[string]any{"status": s, "command": c}`, nil},
		{`var _ = render("command.md.tmpl")`, nil},
		{`var _ = "metadata.json"`, nil},
		{`var _ = gjson.GetBytes(line, "rev")`, nil},
		{"type t struct{ S string `json:\"state_machine\"` }", nil},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src+"\n", parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		var got []string
		for _, l := range fileLiterals(fset, f, constants([]*ast.File{f})) {
			got = append(got, l.lit)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: found %q, want %q", tt.src, got, tt.want)
		}
	}
}

type pathLiteral struct {
	pos token.Position
	lit string
}

// pathLiterals parses every non-test Go file under lib (outside this
// package and the allowed ones) and returns the checkpoint path literals.
func pathLiterals(t *testing.T, lib string, allowed map[string]string) []pathLiteral {
	t.Helper()
	lib, err := filepath.Abs(lib)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]string{} // dir -> its files
	err = filepath.WalkDir(lib, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(lib), path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, ok := allowed[rel]; ok || rel == "lib/checkpoint" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found Go sources in only %d directories under %s: is it lib/?", len(pkgs), lib)
	}
	var out []pathLiteral
	for _, files := range pkgs {
		fset := token.NewFileSet()
		var parsed []*ast.File
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		consts := constants(parsed)
		for _, f := range parsed {
			out = append(out, fileLiterals(fset, f, consts)...)
		}
	}
	return out
}

// topLevel are the checkpoint's top-level fields; everyday are those that
// are also ordinary words, counted as paths only in a path's place or
// followed by one of their own fields.
var (
	topLevel = slices.Concat(topNames[:], []string{PathSession})
	everyday = map[string][]string{
		PathCommand: nil, PathStatus: nil, PathCreatedAt: nil, PathUpdatedAt: nil,
		PathWorkflowID: nil, PathProjectName: nil, PathSession: nil,
		PathHold: holdNames[:], PathMetadata: mdNames[:],
	}
)

// constants maps the package's string constants to their literals, so
// that a path named by a constant of its own is found where it is used.
func constants(files []*ast.File) map[string]*ast.BasicLit {
	out := map[string]*ast.BasicLit{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING && i < len(vs.Names) {
						out[vs.Names[i].Name] = lit
					}
				}
			}
		}
	}
	return out
}

// pathArg is the index of the path argument of the calls that take one,
// by package and function, and of the store's methods that edit the
// checkpoint (by method name: the receiver's type is not known here). A
// method Get (of a gjson.Result) counts only with a path that spellsPath.
var (
	pathArg = map[string]map[string]int{
		"gjson":      {"Get": 1, "GetBytes": 1},
		"sjson":      {"Set": 1, "SetBytes": 1, "SetRaw": 1, "SetRawBytes": 1, "SetOptions": 1, "SetBytesOptions": 1, "SetRawOptions": 1, "SetRawBytesOptions": 1, "Delete": 1, "DeleteBytes": 1},
		"checkpoint": {"Get": 1, "Set": 1, "Append": 1, "Increment": 1},
	}
	methodPathArg = map[string]int{"SetCheckpoint": 0, "AppendCheckpoint": 0, "IncrementCheckpoint": 0}
)

func fileLiterals(fset *token.FileSet, f *ast.File, consts map[string]*ast.BasicLit) []pathLiteral {
	marked := map[int]bool{} // lines that say their literal is not a checkpoint path
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.Contains(c.Text, notACheckpoint) {
				marked[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	skip := map[*ast.BasicLit]bool{}
	for _, imp := range f.Imports {
		skip[imp.Path] = true
	}
	seen := map[*ast.BasicLit]bool{}
	var out []pathLiteral
	report := func(lit *ast.BasicLit) {
		if !seen[lit] && !marked[fset.Position(lit.Pos()).Line] {
			seen[lit] = true
			out = append(out, pathLiteral{fset.Position(lit.Pos()), lit.Value})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				skip[n.Tag] = true
			}
		case *ast.CallExpr:
			if lit := pathOf(n, consts); lit != nil {
				if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(topLevel, first(s)) {
					report(lit)
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING || skip[n] {
				return true
			}
			if s, err := strconv.Unquote(n.Value); err == nil && spellsPath(s) {
				report(n)
			}
		}
		return true
	})
	slices.SortFunc(out, func(a, b pathLiteral) int { return a.pos.Offset - b.pos.Offset })
	return out
}

// pathOf is the literal in the path argument of call, if it takes one.
func pathOf(call *ast.CallExpr, consts map[string]*ast.BasicLit) *ast.BasicLit {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	i, known := methodPathArg[sel.Sel.Name]
	if pkg, ok := sel.X.(*ast.Ident); ok && !known {
		i, known = pathArg[pkg.Name][sel.Sel.Name]
	}
	if !known {
		return nil
	}
	if i >= len(call.Args) {
		return nil
	}
	arg := call.Args[i]
	for {
		b, ok := arg.(*ast.BinaryExpr)
		if !ok || b.Op != token.ADD {
			break
		}
		arg = b.X
	}
	switch a := arg.(type) {
	case *ast.BasicLit:
		if a.Kind == token.STRING {
			return a
		}
	case *ast.Ident:
		return consts[a.Name]
	}
	return nil
}

// spellsPath reports whether s reads as a checkpoint path wherever it
// appears (see TestNoCheckpointPathLiterals).
func spellsPath(s string) bool {
	top, rest, dotted := strings.Cut(s, ".")
	if !slices.Contains(topLevel, top) {
		return false
	}
	fields, common := everyday[top]
	if !common {
		return true
	}
	return dotted && slices.Contains(fields, first(rest))
}

func first(path string) string {
	top, _, _ := strings.Cut(path, ".")
	return top
}
