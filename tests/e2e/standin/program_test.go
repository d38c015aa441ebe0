package standin

import (
	"reflect"
	"testing"
)

const command = "# Title\n\nWrite nothing to: here/x.md unless the path ends the line.\n\n" +
	"## start\n\n```bash\necho A=1\n```\n\n" +
	"Example, not a step:\n\n````markdown\n## Executive Summary\n```bash\necho no\n```\nWrite the report to: not/a/step.md\n````\n\n" +
	"## work\n\n```task\nTask {\n  subagent_type: x:y\n  description: d\n  prompt: p\n}\n```\n\n" +
	"Write the report to: `out/r.md`\nCreate the summary in this format: markdown\nReturn exactly: REPORT_CREATED: ${P}\n"

func TestParseProgram(t *testing.T) {
	p, err := parseProgram(command)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []stepKind
	for _, s := range p.Steps {
		kinds = append(kinds, s.Kind)
	}
	// Only a line that ends with a path containing "/" is a write step.
	want := []stepKind{stepBash, stepTask, stepWrite}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	if p.Steps[0].Text != "echo A=1" || p.Steps[2].Text != "out/r.md" {
		t.Errorf("steps = %+v", p.Steps)
	}
	if !reflect.DeepEqual(p.Sections, map[string]int{"start": 0, "work": 1}) {
		t.Errorf("sections = %v (headings inside fences must not count)", p.Sections)
	}
	if p.Return != "REPORT_CREATED: ${P}" {
		t.Errorf("return = %q", p.Return)
	}
}

func TestParseProgramUnclosedFence(t *testing.T) {
	if _, err := parseProgram("```bash\necho hi\n"); err == nil {
		t.Fatal("want an error for an unclosed fence")
	}
}

func TestThenShiftsSections(t *testing.T) {
	a := program{Steps: []step{{Kind: stepWrite}}, Sections: map[string]int{}, Return: ""}
	b := program{Steps: []step{{Kind: stepBash}, {Kind: stepBash}}, Sections: map[string]int{"s": 1}, Return: "R"}
	got := a.then(b)
	if len(got.Steps) != 3 || got.Sections["s"] != 2 || got.Return != "R" {
		t.Errorf("then = %+v", got)
	}
}
