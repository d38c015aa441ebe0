package main

import (
	"errors"
	"testing"

	"github.com/tidwall/gjson"
)

type fakeSources map[string]string

func (f fakeSources) file(path string) ([]byte, error) {
	if v, ok := f["file:"+path]; ok {
		return []byte(v), nil
	}
	return nil, errors.New("no such file")
}

func (f fakeSources) run(cmd string) ([]byte, error) {
	if v, ok := f["run:"+cmd]; ok {
		return []byte(v), nil
	}
	return nil, errors.New("no such command")
}

func TestSplice(t *testing.T) {
	src := fakeSources{
		"file:m.json":      `{"a": 1}`,
		"file:c.md":        "# C\n```bash\necho\n```\n",
		"run:flowstate go": "graph\n",
	}
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{"untouched without markers", "# T\ntext\n", "# T\ntext\n", false},
		{"file replaces stale content",
			"a\n<!-- gen file: m.json -->\nold\n<!-- end gen -->\nb\n",
			"a\n<!-- gen file: m.json -->\n```json\n{\"a\": 1}\n```\n<!-- end gen -->\nb\n", false},
		{"nested fences get a longer fence",
			"<!-- gen file: c.md -->\n<!-- end gen -->\n",
			"<!-- gen file: c.md -->\n````markdown\n# C\n```bash\necho\n```\n````\n<!-- end gen -->\n", false},
		{"run takes the fence language from the marker",
			"<!-- gen run mermaid: flowstate go -->\n<!-- end gen -->\n",
			"<!-- gen run mermaid: flowstate go -->\n```mermaid\ngraph\n```\n<!-- end gen -->\n", false},
		{"missing end marker", "<!-- gen file: m.json -->\n", "", true},
		{"unknown file", "<!-- gen file: nope -->\n<!-- end gen -->\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splice([]byte(tt.in), src)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if !tt.err && string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestSourcesRefuse(t *testing.T) {
	s := sources{root: t.TempDir()}
	if _, err := s.file("../etc/passwd"); err == nil {
		t.Error("a path outside the repository must be refused")
	}
	if _, err := s.run("rm -rf /"); err == nil {
		t.Error("only flowstate commands may run")
	}
}

func TestTypeOf(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type": "string"}`, "string"},
		{`{"type": ["string", "null"]}`, "string or null"},
		{`{"const": "2.1"}`, "`\"2.1\"` (constant)"},
		{`{"enum": ["a", "b"]}`, "one of `\"a\"`, `\"b\"`"},
		{`{"$ref": "#/$defs/state"}`, "[state](#state)"},
		{`{"anyOf": [{"type": "null"}, {"$ref": "#/$defs/timestamp"}]}`, "null or [timestamp](#timestamp)"},
		{`{"type": "array", "items": {"type": "string"}}`, "array of string"},
		{`{"type": "object", "additionalProperties": {"type": "integer"}}`, "object: name → integer"},
		{`{"type": "object"}`, "object"},
		{`{}`, "any"},
	}
	for _, tt := range tests {
		if got := typeOf(gjson.Parse(tt.schema)); got != tt.want {
			t.Errorf("typeOf(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"description": "d"}`, "d"},
		{`{"minLength": 1}`, "(non-empty)"},
		{`{"description": "n", "minimum": 1, "maximum": 4}`, "n (1 to 4)"},
		{`{"minimum": 0}`, "(at least 0)"},
		{`{"uniqueItems": true, "format": "date-time"}`, "(no duplicates; format date-time)"},
	}
	for _, tt := range tests {
		if got := describe(gjson.Parse(tt.schema)); got != tt.want {
			t.Errorf("describe(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

func TestUnquoteUsage(t *testing.T) {
	tests := []struct{ in, name, text string }{
		{"custom machine JSON `FILE`", "FILE", "custom machine JSON FILE"},
		{"plain", "", "plain"},
		{"odd `quote", "", "odd `quote"},
	}
	for _, tt := range tests {
		name, text := unquoteUsage(tt.in)
		if name != tt.name || text != tt.text {
			t.Errorf("unquoteUsage(%q) = %q, %q; want %q, %q", tt.in, name, text, tt.name, tt.text)
		}
	}
}

// The step comments lose their "1.0 → 1.1: " lead-in; the heading says it.
func TestStripStepPrefix(t *testing.T) {
	if got := stripStepPrefix("1.0 → 1.1: replanning bookkeeping.", "1.0", "1.1"); got != "Replanning bookkeeping." {
		t.Errorf("got %q", got)
	}
	if got := stripStepPrefix("migrate20to21 adds the classification.", "2.0", "2.1"); got != "Adds the classification." {
		t.Errorf("got %q", got)
	}
}
