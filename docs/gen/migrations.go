package main

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// migrationFunc names a migration step: migrate10to11 is 1.0 → 1.1.
var migrationFunc = regexp.MustCompile(`^migrate(\d)(\d)to(\d)(\d)$`)

// migrationsDoc renders the migration chain from the doc comment of each
// step function in lib/checkpoint/migrate.go (the comments sit next to
// the code they describe, so that is where they are kept up to date) and
// the fields each step adds, found by running the migrations.
func migrationsDoc(root string) (string, error) {
	path := filepath.Join(root, "lib", "checkpoint", "migrate.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		return "", err
	}
	type step struct{ from, to, doc string }
	var steps []step
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Doc == nil {
			continue
		}
		if m := migrationFunc.FindStringSubmatch(fn.Name.Name); m != nil {
			steps = append(steps, step{m[1] + "." + m[2], m[3] + "." + m[4], fn.Doc.Text()})
		}
	}
	if len(steps) == 0 {
		return "", fmt.Errorf("%s: no documented migrateXXtoYY functions found", path)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].from < steps[j].from })
	var b strings.Builder
	b.WriteString("## Migrations\n\n")
	b.WriteString("flowstate reads the checkpoints of the bash libraries (schema 1.0 to 2.0, and their own \"2.1\",\n" +
		"which lacks fields flowstate requires) and migrates them in place the first time a command reads\n" +
		"them: under the workflow's lock, after saving the original as `checkpoint.json.v<version>.bak`.\n" +
		"The version is `schema_version`, else `version`, else 1.0. A newer or unknown version, or a\n" +
		"document that cannot be repaired, is refused with exit 4 and left untouched. Fields a step does\n" +
		"not know are kept. The steps run in order from the document's version:\n\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "### %s → %s\n\n", s.from, s.to)
		b.WriteString(markdown(stripStepPrefix(s.doc, s.from, s.to)))
		b.WriteString("\n")
		added, err := addedBy(s.from, s.to)
		if err != nil {
			return "", err
		}
		if len(added) > 0 {
			b.WriteString("| Field added | Value |\n|---|---|\n")
			for _, a := range added {
				fmt.Fprintf(&b, "| `%s` | `%s` |\n", a[0], cell(a[1]))
			}
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// addedBy lists the top-level fields the step from → to adds, with the
// value it gives them when the document has nothing to take them from.
// It asks Migrate rather than restating the code: a current document
// relabelled "from" and the same document relabelled "to" are migrated,
// and what the first gains over the second is the step's. Steps that
// only fill in what a 2.x document already has (1.3 → 2.0 on a document
// with a state machine) list nothing; their comment says what they do.
func addedBy(from, to string) ([][2]string, error) {
	if to == checkpoint.SchemaVersion {
		return nil, nil // a document relabelled 2.1 is not migrated at all
	}
	base, err := checkpoint.New(checkpoint.Params{
		WorkflowID: "w", Command: "c", Scope: machine.FullImplementation,
		InitialState: "initialize", TerminalState: "complete",
		Transitions: machine.Default().Transitions,
		Now:         time.Date(2025, 11, 7, 14, 30, 22, 0, time.UTC),
	})
	if err != nil {
		return nil, err
	}
	keys := func(version string) (map[string]gjson.Result, error) {
		doc, err := sjson.SetBytes(base, "schema_version", version)
		if err != nil {
			return nil, err
		}
		out, _, err := checkpoint.Migrate(doc, intent.Scope)
		if err != nil {
			return nil, fmt.Errorf("migrate a %s document: %w", version, err)
		}
		m := map[string]gjson.Result{}
		gjson.ParseBytes(out).ForEach(func(k, v gjson.Result) bool {
			m[k.String()] = v
			return true
		})
		return m, nil
	}
	before, err := keys(from)
	if err != nil {
		return nil, err
	}
	after, err := keys(to)
	if err != nil {
		return nil, err
	}
	var added [][2]string
	for k, v := range before {
		if _, ok := after[k]; !ok {
			added = append(added, [2]string{k, string(pretty.Ugly([]byte(v.Raw)))})
		}
	}
	sort.Slice(added, func(i, j int) bool { return added[i][0] < added[j][0] })
	return added, nil
}

// stripStepPrefix drops the "1.0 → 1.1: " or "migrate20to21 " that
// starts a step's comment; the heading already says it.
func stripStepPrefix(doc, from, to string) string {
	doc = strings.TrimPrefix(doc, from+" → "+to+": ")
	if name, rest, ok := strings.Cut(doc, " "); ok && migrationFunc.MatchString(name) {
		doc = rest
	}
	return strings.ToUpper(doc[:1]) + doc[1:]
}

// markdown renders a Go doc comment as markdown paragraphs.
func markdown(text string) string {
	var p comment.Parser
	var pr comment.Printer
	return string(pr.Markdown(p.Parse(text)))
}
