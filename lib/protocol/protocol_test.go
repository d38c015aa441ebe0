package protocol

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestBlocks(t *testing.T) {
	md := "# T\n\n## one\n\n```bash\necho hi\n```\n\n````markdown\n## not a section\n```bash\nnot run\n```\n````\n\n## two\n\n```output\nhi\n```\n"
	got, err := Blocks(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{"bash", "echo hi", 5, "one"},
		{"markdown", "## not a section\n```bash\nnot run\n```", 9, "one"},
		{"output", "hi", 18, "two"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := Blocks("```bash\nopen"); err == nil {
		t.Fatal("an unclosed fence must be an error")
	}
}

const command = `---
description: a command
argument-hint: "[WHAT]"
---
# Title

Write nothing to: here/x.md unless the path ends the line.

## start

` + "```bash" + `
echo A=1
` + "```" + `

Example, not a step:

` + "````markdown" + `
## Executive Summary
` + "```bash" + `
echo no
` + "```" + `
` + "````" + `

` + "```bash legacy" + `
source lib.sh
` + "```" + `

## work ##

` + "```task" + `
Task {
  subagent_type: x:y
  description: d
  prompt: |
    p
}
` + "```" + `

Return exactly: DONE
`

func TestParse(t *testing.T) {
	d, err := Parse(command)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Frontmatter, map[string]string{"description": "a command", "argument-hint": `"[WHAT]"`}) {
		t.Errorf("frontmatter %v", d.Frontmatter)
	}
	if len(d.Steps) != 2 || d.Steps[0].Body != "echo A=1" || d.Steps[0].Task != nil || d.Steps[1].Task == nil {
		t.Fatalf("steps %+v: want the bash block and the task block only", d.Steps)
	}
	if d.Steps[0].Line != 11 || d.Steps[0].Section != "start" || d.Steps[1].Section != "work" {
		t.Errorf("steps %+v: want line 11 of the file, sections start and work", d.Steps)
	}
	if !reflect.DeepEqual(d.Sections, map[string]int{"start": 0, "work": 1}) {
		t.Errorf("sections %v (headings inside fences do not count)", d.Sections)
	}
	var writes, returns []string
	for _, p := range d.Prose {
		if w, ok := WriteTarget(p.Text); ok {
			writes = append(writes, w)
		}
		if r, ok := ReturnLine(p.Text); ok {
			returns = append(returns, fmt.Sprintf("%s@%d", r, p.Step))
		}
	}
	if writes != nil || !reflect.DeepEqual(returns, []string{"DONE@2"}) {
		t.Errorf("prose: writes %q (want none: the line does not end in the path), returns %q", writes, returns)
	}
	if !strings.HasPrefix(d.Body, "# Title\n") || d.Lines != strings.Count(command, "\n") {
		t.Errorf("body %q..., lines %d", d.Body[:10], d.Lines)
	}
}

// TestParseErrors: every error names the line at fault, so that
// flowstate lint can point at it.
func TestParseErrors(t *testing.T) {
	for name, c := range map[string]struct {
		md   string
		line int
	}{
		"unclosed fence":       {"# T\n```bash\necho hi\n", 2},
		"unclosed frontmatter": {"---\na: b\n# T\n", 1},
		"frontmatter line":     {"---\na: b\nnot a pair\n---\n", 3},
		"two sections":         {"## a\n```bash\ntrue\n```\n## a\n", 5},
		"bad task":             {"---\na: b\n---\n```task\nTask {\n  subagent_type: a\n}\n```\n", 5},
		"bad task field":       {"```task\nTask {\n  subagent_type: a\n  description: d\n  colour: red\n  prompt: p\n}\n```\n", 5},
		"background":           {"```task\nTask {\n  subagent_type: a\n  run_in_background: true\n}\n```\n", 4},
		"remote":               {"```task\nTask {\n  subagent_type: a\n  isolation: remote\n}\n```\n", 4},
		"prompt not indented":  {"```task\nTask {\n  subagent_type: a\n  description: d\n  prompt: |\n    ok\n  not indented\n}\n```\n", 7},
	} {
		_, err := Parse(c.md)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != c.line {
			t.Errorf("%s: %v; want a SyntaxError at line %d", name, err, c.line)
		}
	}
}

// TestFrontmatterLists: a YAML list or folded text under a key is that
// key's value, not an error.
func TestFrontmatterLists(t *testing.T) {
	d, err := Parse("---\nname: r\ntools:\n  - Read\n  - Write\ndescription: >\n  Reviews\n---\nbody\n")
	if err != nil {
		t.Fatal(err)
	}
	if d.Frontmatter["tools"] != "- Read - Write" || d.Frontmatter["description"] != "> Reviews" || d.Frontmatter["name"] != "r" {
		t.Errorf("frontmatter %q", d.Frontmatter)
	}
}

func TestParseTask(t *testing.T) {
	tk, err := ParseTask("Task {\n  subagent_type: flowstate:x\n  description: Research ${TOPIC_i}\n  for_each: i in 1..${N}\n  isolation: worktree\n  prompt: |\n    Topic: ${TOPIC_i}\n\n      indented\n    Write the report to: ${P_i}\n\n}")
	if err != nil {
		t.Fatal(err)
	}
	want := Task{SubagentType: "flowstate:x", Description: "Research ${TOPIC_i}", ForEach: "i in 1..${N}", Isolation: "worktree",
		Prompt: "Topic: ${TOPIC_i}\n\n  indented\nWrite the report to: ${P_i}", PromptBlock: true}
	if tk != want {
		t.Errorf("ParseTask =\n%+v\nwant\n%+v", tk, want)
	}
	one, err := ParseTask("Task {\n  subagent_type: a:b\n  description: d\n  prompt: do it\n}")
	if err != nil || one.Prompt != "do it" || one.PromptBlock {
		t.Errorf("one-line prompt: %+v, %v", one, err)
	}
	for _, body := range []string{
		"",
		"Task {\n  prompt: p\n}",
		"Task {\n  subagent_type: a\n  colour: red\n  prompt: p\n}",
		"Task {\n  subagent_type: a\n  prompt: p\n}", // no description
		"Task {\n  subagent_type: a\n  description: d\n  description: e\n  prompt: p\n}",
		"Task {\n  subagent_type: a\n  description: d\n  prompt: |\n  not indented\n}",
		"Task {\n  subagent_type: a\n  description: d\n  prompt: |\n}",
		"subagent_type: a\ndescription: d\nprompt: p",
	} {
		if _, err := ParseTask(body); err == nil {
			t.Errorf("ParseTask(%q): want an error", body)
		}
	}
}

func TestKeyValues(t *testing.T) {
	got := KeyValues("A=1\nnot one\nB_2=x=y\r\nlower=no\nA=2\n=x\n")
	want := [][2]string{{"A", "1"}, {"B_2", "x=y"}, {"A", "2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("KeyValues = %q, want %q", got, want)
	}
}

func TestKeyRefs(t *testing.T) {
	got := KeyRefs("${A} and ${TOPIC_i}, ${B_2} ${lower} $C ${A}")
	if want := []string{"A", "B_2", "A"}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeyRefs = %q, want %q (a for_each's ${KEY_i} is not one)", got, want)
	}
}

// TestLoopRefs: what lint checks of a for_each is the format's own.
func TestLoopRefs(t *testing.T) {
	got := LoopRefs("${A} and ${TOPIC_i}, ${B_2} ${lower_i} ${FILE_NAME_i}")
	if want := []string{"TOPIC", "FILE_NAME"}; !reflect.DeepEqual(got, want) {
		t.Errorf("LoopRefs = %q, want %q", got, want)
	}
	for spec, want := range map[string]bool{"i in 1..3": true, "i in 1..${N}": true, "i in 1..${n}": false, "f in files": false, "i in 0..3": false, "i in 1..$N": false} {
		if got := ForEachWritten(spec); got != want {
			t.Errorf("ForEachWritten(%q) = %v, want %v", spec, got, want)
		}
	}
}

func TestReadFirst(t *testing.T) {
	for prompt, want := range map[string]string{
		"Topic: x\nRead first: s/briefs/a.md\nWrite your result to: s/r.md": "s/briefs/a.md",
		"- Read first: `/abs/b.md`":                                         "/abs/b.md",
		"Topic: x\nRead the brief: s/a.md":                                  "",
	} {
		if got, ok := ReadFirst(prompt); got != want || ok != (want != "") {
			t.Errorf("ReadFirst(%q) = %q, %v; want %q", prompt, got, ok, want)
		}
	}
}

func TestExpand(t *testing.T) {
	tk := Task{SubagentType: "a:${AGENT}", Description: "d ${TOPIC_i}", ForEach: "i in 1..${N}", Isolation: "worktree", Prompt: "T: ${TOPIC_i}\nW: ${W}"}
	got, err := tk.Expand(map[string]string{"AGENT": "r", "N": "2", "TOPIC_1": "x", "TOPIC_2": "y", "W": "w"})
	want := []Invocation{{"a:r", "d x", "T: x\nW: w", 1, "worktree"}, {"a:r", "d y", "T: y\nW: w", 2, "worktree"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Expand = %+v, %v; want %+v", got, err, want)
	}
	if got, err := tk.Expand(map[string]string{"N": "0"}); err != nil || len(got) != 0 {
		t.Errorf("N=0: %+v, %v; want no calls", got, err)
	}
	for name, values := range map[string]map[string]string{
		"no N":       {"AGENT": "r", "W": "w"},
		"no TOPIC_2": {"AGENT": "r", "N": "2", "TOPIC_1": "x", "W": "w"},
		"bad N":      {"AGENT": "r", "N": "two", "W": "w"},
	} {
		if _, err := tk.Expand(values); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := (Task{SubagentType: "a", Description: "d", Prompt: "${K_i}"}).Expand(map[string]string{"K_1": "x"}); err == nil {
		t.Error("${K_i} outside a for_each: want an error")
	}
}

func TestTemplate(t *testing.T) {
	brief := "# Brief: x\n\n## Read first\n\n```markdown\nnot this\n```\n\n## Format\n\nWrite it so:\n\n````json\n{\"a\": \"<a>\"}\n````\n"
	if lang, text, ok := Template(brief); !ok || lang != "json" || text != "{\"a\": \"<a>\"}\n" {
		t.Errorf("Template = %q, %q, %v", lang, text, ok)
	}
	if _, _, ok := Template("# Brief\n\n## Read first\n\n- a.md\n"); ok {
		t.Errorf("a brief without a Format section has a template")
	}
}

func TestLaunchedAgents(t *testing.T) {
	task := func(typ string) string {
		return "```task\nTask {\n  subagent_type: " + typ + "\n  description: d\n  run_in_background: false\n  prompt: p\n}\n```\n\n"
	}
	for _, c := range []struct {
		md   string
		want []string
	}{
		{"## start\n\n" + task("file-reviewer") + task("kit:writer") + task("file-reviewer"), []string{"file-reviewer", "writer"}},
		{task("${AGENT}") + task("flowstate:${AGENT}"), nil},
		{"no blocks at all\n", nil},
		{"```task\nTask {\n  description: no type\n}\n```\n", nil},
	} {
		if got := LaunchedAgents(c.md); !slices.Equal(got, c.want) {
			t.Errorf("LaunchedAgents(%q) = %q, want %q", c.md, got, c.want)
		}
	}
}
