package hygiene

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"testing"
)

// The count here is gocyclo's (github.com/fzipp/gocyclo v0.6.0), so its
// report and this gate agree: one, plus one per if, for, range, non-default
// case or select clause, && and ||. Function literals count toward the
// function that holds them.

// function is one function of a file as gocyclo reports it.
type function struct {
	name       string // "F", "(T).M", "(*T).M", or a package-level var's name
	pos        token.Position
	complexity int
	doc        *ast.CommentGroup
}

// fileFunctions lists a file's functions, methods and package-level
// function literals (var f = func() {...}).
func fileFunctions(fset *token.FileSet, file *ast.File) []function {
	var out []function
	add := func(name string, fn ast.Node, doc *ast.CommentGroup) {
		out = append(out, function{name, fset.Position(fn.Pos()), complexity(fn), doc})
	}
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			add(funcName(d), d, d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				v, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for _, value := range v.Values {
					if lit, ok := value.(*ast.FuncLit); ok {
						add(v.Names[0].Name, lit, d.Doc)
					}
				}
			}
		}
	}
	return out
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	return fmt.Sprintf("(%s).%s", recvType(d.Recv.List[0].Type), d.Name.Name)
}

// recvType is a receiver's type as written, without type parameters.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return "BADRECV"
}

func complexity(fn ast.Node) int {
	n := 1
	ast.Inspect(fn, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil { // default
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil { // default
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// TestCount: each construct gocyclo counts, and those it does not.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want map[string]int
	}{
		{`func F() {}`, map[string]int{"F": 1}},
		{`func F(a, b bool) { if a && b || a { for {} }; for range 3 {} }`, map[string]int{"F": 6}},
		{`func F(x int) { switch x { case 1, 2: case 3: default: } }`, map[string]int{"F": 3}},
		{`func F(x any) { switch x.(type) { case int: default: } }`, map[string]int{"F": 2}},
		{`func F(c chan int) { select { case <-c: case c <- 1: default: } }`, map[string]int{"F": 3}},
		{`func F() { g := func() { if true {} }; g() }`, map[string]int{"F": 2}},
		{`var V = func(a bool) bool { return a || !a }`, map[string]int{"V": 2}},
		{`type T struct{}; func (*T) M(a int) bool { return a > 1 && a < 3 }`, map[string]int{"(*T).M": 2}},
		{`type G[K any] struct{}; func (G[K]) M() {}`, map[string]int{"(G).M": 1}},
		{`func F(a, b int) int { return a + b*a }; var v = 1`, map[string]int{"F": 1}},
	} {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "f.go", "package p\n"+tc.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, f := range fileFunctions(fset, file) {
			got[f.name] = f.complexity
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestHasReason: a reason is a line of its own, with words after it.
func TestHasReason(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{"// F does things.\n//\n// Complexity: one switch over the node kinds of a shell AST.\n", true},
		{"// Complexity: a reason on the first line.\n", true},
		{"// F does things.\n", false},
		{"// F does things.\n// Complexity:\n", false},
		{"// F does things. Complexity: mid-line does not count.\n", false},
		{"", false},
	} {
		file, err := parser.ParseFile(token.NewFileSet(), "f.go", "package p\n"+tc.doc+"func F() {}\n", parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := hasReason(file.Decls[0].(*ast.FuncDecl).Doc); got != tc.want {
			t.Errorf("%q: got %v, want %v", tc.doc, got, tc.want)
		}
	}
}
