package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestNoFlagReadByName: no code of the command line reads a flag by its
// name from a *cli.Context (c.String("reason"), c.IsSet("default"), ...),
// where a typo reads "" silently: each command's flags fill its options
// (a flag's Destination, or its Action) and the action reads those. The
// methods that take a flag's name are *cli.Context's with a string
// parameter first.
func TestNoFlagReadByName(t *testing.T) {
	byName := map[string]bool{}
	ctx := reflect.TypeOf(&cli.Context{})
	for i := range ctx.NumMethod() {
		m := ctx.Method(i).Type // the receiver is its first parameter
		if m.NumIn() > 1 && m.In(1).Kind() == reflect.String {
			byName[ctx.Method(i).Name] = true
		}
	}
	if !byName["String"] || !byName["IsSet"] {
		t.Fatalf("the methods of *cli.Context that take a flag's name are %v; want String and IsSet among them", byName)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		contexts := contextNames(f)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && contexts[x.Name] && byName[sel.Sel.Name] {
				t.Errorf("%s: %s.%s reads a flag by name; bind the flag to the command's options (Destination, or Action: given(&o.field)) and read those", fset.Position(call.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// contextNames are the names f gives a *cli.Context: its parameters and
// variables of that type, and those ranging over a context's Lineage.
func contextNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(ids []*ast.Ident) {
		for _, id := range ids {
			names[id.Name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if types.ExprString(n.Type) == "*cli.Context" {
				add(n.Names)
			}
		case *ast.ValueSpec:
			if n.Type != nil && types.ExprString(n.Type) == "*cli.Context" {
				add(n.Names)
			}
		case *ast.RangeStmt:
			if id, ok := n.Value.(*ast.Ident); ok && strings.HasSuffix(types.ExprString(n.X), ".Lineage()") {
				add([]*ast.Ident{id})
			}
		}
		return true
	})
	return names
}

// TestEveryFlagBound: every flag of every command, and every global one,
// fills something an action reads (its Destination, or its Action for a
// flag whose absence counts): a flag bound to nothing does nothing.
// urfave's --help is urfave's own.
func TestEveryFlagBound(t *testing.T) {
	e := &env{}
	check := func(where string, flags []cli.Flag) {
		for _, f := range flags {
			if f == cli.HelpFlag {
				continue
			}
			v := reflect.ValueOf(f).Elem()
			dest, action := v.FieldByName("Destination"), v.FieldByName("Action")
			if (!dest.IsValid() || dest.IsNil()) && (!action.IsValid() || action.IsNil()) {
				t.Errorf("%s: flag --%s fills nothing; give it a Destination in the command's options", where, f.Names()[0])
			}
		}
	}
	check("flowstate", append(e.globalFlags(), e.versionFlag()))
	for _, c := range e.commands() {
		check(c.Name, c.Flags)
	}
}
