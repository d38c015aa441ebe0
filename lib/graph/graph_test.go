package graph

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

var update = flag.Bool("update", false, "rewrite testdata/default.* from the renderers")

// small is a review machine: a loop (revise <-> review), a recovery and
// two scopes, one ending where the other passes through.
func small() *machine.Machine {
	return &machine.Machine{
		Name:    "review",
		Initial: "start",
		Transitions: map[string][]string{
			"start":  {"review"},
			"review": {"revise", "done"},
			"revise": {"review"},
			"done":   {},
		},
		Scopes: map[string]machine.Scope{
			"full":       {Terminal: "done", Route: []string{"start", "review", "done"}},
			"quick-look": {Terminal: "review", Route: []string{"start", "review"}},
		},
		Recovery: map[string]string{"review": "revise"},
	}
}

// awkward has names Mermaid cannot use as ids and a dead end no scope
// names.
func awkward() *machine.Machine {
	return &machine.Machine{
		Name:    `my "odd" machine`,
		Initial: "set-up",
		Transitions: map[string][]string{
			"set-up": {"end", "stuck"},
			"end":    {},
			"stuck":  {},
		},
		Scopes: map[string]machine.Scope{"only": {Terminal: "end", Route: []string{"set-up", "end"}}},
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		m      *machine.Machine
		format string
		want   string
	}{
		{"mermaid small", small(), "mermaid", `stateDiagram-v2
    [*] --> start
    start --> review
    review --> revise: on failure
    review --> done
    revise --> review
    review --> [*]: quick-look
    done --> [*]: full
    classDef terminal stroke-width:3px,font-weight:bold
    class review,done terminal
`},
		{"default format is mermaid", small(), "", Mermaid(small())},
		{"mermaid aliases hyphens and keywords", awkward(), "mermaid", `stateDiagram-v2
    state "set-up" as S0
    state "end" as S1
    [*] --> S0
    S0 --> S1
    S0 --> stuck
    S1 --> [*]: only
    stuck --> [*]
    classDef terminal stroke-width:3px,font-weight:bold
    class S1,stuck terminal
`},
		{"dot small", small(), "dot", `digraph "review" {
    rankdir=LR;
    node [shape=box, style=rounded];
    "[*]" [shape=point];
    "start";
    "review" [peripheries=2, label="review\n(ends quick-look)"];
    "done" [peripheries=2, label="done\n(ends full)"];
    "revise";
    "[*]" -> "start";
    "start" -> "review";
    "review" -> "revise" [label="on failure", style=dashed];
    "review" -> "done";
    "revise" -> "review";
}
`},
		{"dot quotes names and marks dead ends", awkward(), "dot", `digraph "my \"odd\" machine" {
    rankdir=LR;
    node [shape=box, style=rounded];
    "[*]" [shape=point];
    "set-up";
    "end" [peripheries=2, label="end\n(ends only)"];
    "stuck" [peripheries=2];
    "[*]" -> "set-up";
    "set-up" -> "end";
    "set-up" -> "stuck";
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.m.Validate(); err != nil {
				t.Fatalf("test machine invalid: %v", err)
			}
			got, err := Render(tt.m, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	_, err := Render(small(), "svg")
	if fail.Code(err) != fail.Usage {
		t.Fatalf("err %v (code %d), want a usage error", err, fail.Code(err))
	}
}

// The default machine's diagrams are goldens: a change to the default
// machine shows up here first, then in docs/architecture.md's drift test.
func TestDefaultGolden(t *testing.T) {
	for _, format := range Formats {
		got, err := Render(machine.Default(), format)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "default."+format)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./lib/graph -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s drifted from %s (run go test ./lib/graph -update if intended):\n%s", format, path, got)
		}
	}
}

// Rendering twice gives the same bytes although the machine is built from
// maps.
func TestDeterministic(t *testing.T) {
	for _, format := range Formats {
		first, _ := Render(machine.Default(), format)
		for i := 0; i < 20; i++ {
			if again, _ := Render(machine.Default(), format); again != first {
				t.Fatalf("%s output changed between runs", format)
			}
		}
	}
}
