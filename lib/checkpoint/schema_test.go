package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The binary validates with hand-written Go (Validate); docs print the
// JSON Schema (SchemaJSON). These tests run both over every fixture and
// over hundreds of single-field mutations, and require them to agree. The
// only allowed difference: Validate also rejects what a JSON Schema
// cannot express (errors of type *semanticError: unknown states,
// duplicate keys), which the schema must then accept.

func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // date-time must be checked, as Validate does
	const url = "https://github.com/flowstate-dev/flowstate/lib/checkpoint/checkpoint-2.1.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return sch
}

func schemaValidate(sch *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// agree fails t unless Validate and the schema give the same verdict on
// doc (modulo semantic errors); wantValid nil means either verdict is fine.
func agree(t *testing.T, sch *jsonschema.Schema, name string, doc []byte, wantValid *bool) {
	t.Helper()
	goErr := Validate(doc)
	schErr := schemaValidate(sch, doc)
	var sem *semanticError
	switch {
	case (goErr == nil) == (schErr == nil):
	case goErr != nil && errors.As(goErr, &sem) && schErr == nil:
		return // a rule only Go can check
	default:
		t.Errorf("%s: Validate and the JSON Schema disagree\n  Validate: %v\n  schema:   %v", name, goErr, schErr)
		return
	}
	if wantValid != nil && *wantValid != (goErr == nil) {
		t.Errorf("%s: valid = %v, want %v (Validate: %v)", name, goErr == nil, *wantValid, goErr)
	}
	if goErr != nil && errors.As(goErr, &sem) {
		t.Errorf("%s: semantic error but the schema rejects too: %v / %v", name, goErr, schErr)
	}
}

func TestSchemaAgreesWithValidateOnFixtures(t *testing.T) {
	sch := compileSchema(t)
	yes, no := true, false
	for _, dir := range []string{"valid", "invalid", "invalid-semantic", "legacy"} {
		for _, name := range fixtures(t, dir) {
			doc := readFixture(t, name)
			switch {
			case dir == "valid" || strings.HasSuffix(name, ".migrated.json"):
				agree(t, sch, name, doc, &yes)
			case dir == "invalid-semantic":
				if err := schemaValidate(sch, doc); err != nil {
					t.Errorf("%s: the schema rejects a semantic-only fixture (move it to invalid/): %v", name, err)
				}
				if Validate(doc) == nil {
					t.Errorf("%s: Validate accepts it", name)
				}
			default: // invalid/ and unmigrated legacy documents
				agree(t, sch, name, doc, &no)
			}
		}
	}
}

// mutations applied to every path of the valid fixtures: each is a type
// or range the schema has an opinion about.
var mutations = []string{
	`null`, `true`, `0`, `1`, `-1`, `1.5`, `5`, `2.0`, `""`, `"x"`, `"in_progress"`, `"completed"`,
	`"2025-11-07T14:30:22Z"`, `"2025-11-07T14:30:22+01:00"`, `"initialize"`, `"research"`,
	`[]`, `["initialize"]`, `["x","x"]`, `[1]`, `{}`, `{"worker_id":"w","status":"running"}`,
	`{"workers":[{"worker_id":"w","status":"done"}]}`, `{"a":1}`,
}

func TestSchemaAgreesWithValidateOnMutations(t *testing.T) {
	sch := compileSchema(t)
	n := 0
	for _, name := range fixtures(t, "valid") {
		base := readFixture(t, name)
		for _, p := range allPaths(gjson.ParseBytes(base), "") {
			del, err := sjson.DeleteBytes(base, p)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, sch, fmt.Sprintf("%s: delete %s", name, p), del, nil)
			n++
			for _, m := range mutations {
				doc, err := sjson.SetRawBytes(base, p, []byte(m))
				if err != nil {
					t.Fatal(err)
				}
				agree(t, sch, fmt.Sprintf("%s: %s = %s", name, p, m), doc, nil)
				n++
			}
		}
	}
	t.Logf("%d mutated documents checked", n)
	if n < 1000 {
		t.Errorf("only %d mutations: the fixtures lost their content?", n)
	}
}

// allPaths lists every value's path in v, sorted.
func allPaths(v gjson.Result, prefix string) []string {
	var out []string
	i := 0
	v.ForEach(func(k, c gjson.Result) bool {
		key := k.Str
		if v.IsArray() {
			key = strconv.Itoa(i)
			i++
		}
		p := join(prefix, key)
		out = append(out, p)
		if c.IsObject() || c.IsArray() {
			out = append(out, allPaths(c, p)...)
		}
		return true
	})
	sort.Strings(out)
	return out
}

func TestSchemaIsEmbedded(t *testing.T) {
	if !gjson.ValidBytes(SchemaJSON) {
		t.Fatal("SchemaJSON is not valid JSON")
	}
	if got := gjson.GetBytes(SchemaJSON, "properties.schema_version.const").Str; got != SchemaVersion {
		t.Errorf("schema const %q, SchemaVersion %q", got, SchemaVersion)
	}
	if _, err := filepath.Abs("checkpoint-2.1.schema.json"); err != nil {
		t.Fatal(err)
	}
}
