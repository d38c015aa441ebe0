// Package protocol reads command and agent files the way
// docs/command-protocol.md says a model must, for the test suites: the
// fenced blocks and sections of a markdown file, the fields of a task
// block, the KEY=VALUE lines a bash block prints, and a Runner that plays
// a file block by block with a callback for the agents. tests/plugin,
// tests/docs and the e2e stand-in model all read the format through it,
// so they cannot disagree about it.
package protocol

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Block is one fenced block of a markdown file.
type Block struct {
	Info    string // the info string: "bash", "task", "output", "bash legacy", ...
	Body    string // the lines between the fences, verbatim
	Line    int    // 1-based line of the opening fence in the text parsed
	Section string // the "## name" heading above it, "" before the first
}

var (
	fenceOpen = regexp.MustCompile("^(`{3,})(.*)$")
	heading2  = regexp.MustCompile(`^##[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$`)
)

// Heading returns the section name of a level-2 heading line ("## name",
// an optional closing run of #s dropped).
func Heading(line string) (string, bool) {
	m := heading2.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// closes reports whether line closes a fence opened with ticks: at most
// three spaces of indentation, at least as many backticks, nothing else.
func closes(line, ticks string) bool {
	t := strings.TrimRight(line, " \t")
	indent := len(t) - len(strings.TrimLeft(t, " "))
	t = t[indent:]
	return indent <= 3 && strings.HasPrefix(t, ticks) && strings.Trim(t, "`") == ""
}

// Prose is a line outside every fenced block.
type Prose struct {
	Text string
	Line int // 1-based, in the text parsed
	Step int // the index of the step that follows it (len(Steps) if none)
}

// scan walks md: fenced blocks, and the lines outside them. A fence opens
// with three or more backticks at the start of a line and closes with at
// least as many, so a command file shown inside a ```` fence stays one
// block; headings inside fences do not count. first is the line number of
// md's first line.
func scan(md string, first int, block func(Block), prose func(text string, line int)) error {
	section := ""
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			if name, ok := Heading(lines[i]); ok {
				section = name
			}
			if prose != nil {
				prose(lines[i], first+i)
			}
			continue
		}
		end := i + 1
		for end < len(lines) && !closes(lines[end], m[1]) {
			end++
		}
		if end == len(lines) {
			return fmt.Errorf("line %d: fence never closed", first+i)
		}
		block(Block{Info: strings.TrimSpace(m[2]), Body: strings.Join(lines[i+1:end], "\n"), Line: first + i, Section: section})
		i = end
	}
	return nil
}

// Blocks returns the fenced blocks of md in order.
func Blocks(md string) ([]Block, error) {
	var out []Block
	err := scan(md, 1, func(b Block) { out = append(out, b) }, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Step is a ```bash block or a ```task block (protocol section 1). For
// a bash block, Body is what runs, verbatim.
type Step struct {
	Block
	Task *Task // the parsed task block; nil for a bash block
}

// Doc is a command or agent file (or any text in the format, such as an
// agent's prompt), parsed.
type Doc struct {
	Frontmatter map[string]string // the "key: value" lines between --- lines at the top; nil without
	Body        string            // the text after the frontmatter
	Lines       int               // newlines in the whole text
	Steps       []Step            // the bash and task blocks, in order
	Sections    map[string]int    // "## name" -> index of the first step after it
	Prose       []Prose           // the lines outside fenced blocks, headings included
}

// Parse reads md per docs/command-protocol.md. Steps are the blocks whose
// info string is exactly "bash" or "task"; other blocks (output, json,
// "bash legacy", examples in ```` fences) are not steps. A task block
// that does not parse, a fence that never closes and two sections of one
// name are errors.
func Parse(md string) (Doc, error) {
	d := Doc{Sections: map[string]int{}, Lines: strings.Count(md, "\n")}
	first := 1
	body := md
	if rest, ok := strings.CutPrefix(md, "---\n"); ok {
		front, after, ok := strings.Cut(rest, "\n---\n")
		if !ok {
			return d, fmt.Errorf("frontmatter not closed")
		}
		d.Frontmatter = map[string]string{}
		for _, l := range strings.Split(front, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				return d, fmt.Errorf("frontmatter line %q is not key: value", l)
			}
			d.Frontmatter[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		body = after
		first += strings.Count(front, "\n") + 3
	}
	d.Body = body
	var err error
	scanErr := scan(body, first, func(b Block) {
		if err != nil || (b.Info != "bash" && b.Info != "task") {
			return
		}
		s := Step{Block: b}
		if b.Info == "task" {
			t, terr := ParseTask(b.Body)
			if terr != nil {
				err = fmt.Errorf("task block at line %d: %w", b.Line, terr)
				return
			}
			s.Task = &t
		}
		d.Steps = append(d.Steps, s)
	}, func(text string, line int) {
		d.Prose = append(d.Prose, Prose{Text: text, Line: line, Step: len(d.Steps)})
		if name, ok := Heading(text); ok && err == nil {
			if _, dup := d.Sections[name]; dup {
				err = fmt.Errorf("line %d: a second section \"## %s\"", line, name)
				return
			}
			d.Sections[name] = len(d.Steps)
		}
	})
	if scanErr != nil {
		return d, scanErr
	}
	return d, err
}

// Task is a ```task block (protocol section 3).
type Task struct {
	SubagentType string
	Description  string
	ForEach      string // "i in 1..${N}", or empty
	Foreground   bool   // "run_in_background: false" is given
	Prompt       string
	PromptBlock  bool // the prompt was a "prompt: |" block, not a one-line value
}

var taskField = regexp.MustCompile(`^([ \t]*)([a-z_]+):(?:[ \t]+(.*?))?[ \t]*$`)

// ParseTask reads the body of a ```task block: "Task {", then
// subagent_type, description, optionally for_each and run_in_background
// (false is the only value: Claude Code's default is the background), and
// prompt, each as "key: value", then "}". "prompt: |" takes every line below it up to the
// closing "}", each indented deeper than the key, with the indentation
// they share removed (blank lines kept, trailing ones dropped); so prompt
// comes last. subagent_type, description and prompt are required.
func ParseTask(body string) (Task, error) {
	var t Task
	lines := strings.Split(body, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "Task {" || strings.TrimSpace(lines[len(lines)-1]) != "}" {
		return t, fmt.Errorf("want Task { ... } with the braces on their own lines")
	}
	seen := map[string]bool{}
	for i := 1; i < len(lines)-1; i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		m := taskField.FindStringSubmatch(lines[i])
		if m == nil {
			return t, fmt.Errorf("cannot read %q: want key: value", lines[i])
		}
		key, value := m[2], m[3]
		if seen[key] {
			return t, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		switch key {
		case "subagent_type":
			t.SubagentType = value
		case "description":
			t.Description = value
		case "for_each":
			t.ForEach = value
		case "run_in_background":
			if value != "false" {
				return t, fmt.Errorf("run_in_background: %q; the protocol runs agents in the foreground: false", value)
			}
			t.Foreground = true
		case "prompt":
			if value != "|" {
				t.Prompt = value
				continue
			}
			p, err := blockScalar(lines[i+1:len(lines)-1], len(m[1]))
			if err != nil {
				return t, err
			}
			t.Prompt, t.PromptBlock = p, true
			i = len(lines) - 1
		default:
			return t, fmt.Errorf("unknown field %q", key)
		}
	}
	switch {
	case t.SubagentType == "":
		return t, fmt.Errorf("no subagent_type")
	case t.Description == "":
		return t, fmt.Errorf("no description")
	case t.Prompt == "":
		return t, fmt.Errorf("no prompt")
	}
	return t, nil
}

// blockScalar is the text of a "key: |" value: lines, each blank or
// indented deeper than the key, with their common indentation removed.
func blockScalar(lines []string, keyIndent int) (string, error) {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if n <= keyIndent {
			return "", fmt.Errorf("prompt line %q is not indented below prompt: |", l)
		}
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for k, l := range lines {
		if strings.TrimSpace(l) != "" {
			out[k] = l[common:]
		}
	}
	return strings.Join(out, "\n"), nil
}

var kvLine = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)

// KeyValues returns the KEY=VALUE lines of a block's output, in order
// (protocol section 2): KEY matches [A-Z][A-Z0-9_]*, the value runs to the
// end of the line. When they are applied in order, the newest value of a
// key wins.
func KeyValues(out string) [][2]string {
	var kvs [][2]string
	for _, l := range strings.Split(out, "\n") {
		if m := kvLine.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			kvs = append(kvs, [2]string{m[1], m[2]})
		}
	}
	return kvs
}

// Ref matches a ${KEY} reference; KeyRef's second group is "_i" for a
// ${KEY_i} inside a for_each.
var (
	Ref    = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)
	keyRef = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*?)(_i)?\}`)
)

var (
	writeLine  = regexp.MustCompile("^\\s*(?:[-*]\\s+)?(?:Write|Create|Save)\\b[^:]*:\\s*`?([^\\s`]+)`?\\s*$")
	returnLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?Return exactly:\s*(.*?)\s*$`)
	readFirst  = regexp.MustCompile("^\\s*(?:[-*]\\s+)?Read first:\\s*`?([^\\s`]+)`?\\s*$")
)

// WriteTarget returns the path of a line that tells an agent which file
// to write ("Write the report to: <path>", "- Create the file: <path>");
// only a path with a "/" counts.
func WriteTarget(line string) (string, bool) {
	m := writeLine.FindStringSubmatch(line)
	if m == nil || !strings.Contains(m[1], "/") {
		return "", false
	}
	return m[1], true
}

// ReturnLine returns the answer a "Return exactly: <line>" line asks for.
func ReturnLine(line string) (string, bool) {
	m := returnLine.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.Trim(m[1], "`"), true
}

// ReadFirst returns the file a prompt tells its agent to read first (the
// brief its phase's workers share), from its "Read first: <path>" line.
func ReadFirst(prompt string) (string, bool) {
	for _, line := range strings.Split(prompt, "\n") {
		if m := readFirst.FindStringSubmatch(line); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// Brief reads the file prompt tells its agent to read first, a relative
// path from dir (the project, the agent's working directory).
func Brief(dir, prompt string) (string, error) {
	path, ok := ReadFirst(prompt)
	if !ok {
		return "", fmt.Errorf("the prompt names no file to read first:\n%s", prompt)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// Invocation is one Agent tool call a task block expands to.
type Invocation struct {
	SubagentType, Description, Prompt string
	I                                 int // the for_each index (1..N), 0 without for_each
}

var forEach = regexp.MustCompile(`^i in 1\.\.([0-9]+)$`)

// Expand turns the task into its Agent calls with values: each ${KEY}
// replaced by values[KEY], and for "for_each: i in 1..N" one call per i,
// ${KEY_i} standing for ${KEY_<i>} and ${i} for the number. A reference without a value is an
// error: the protocol has the bash block before a task print every value
// it uses.
func (t Task) Expand(values map[string]string) ([]Invocation, error) {
	sub := func(text string, i int) (string, error) {
		if i > 0 {
			text = strings.ReplaceAll(text, "${i}", strconv.Itoa(i))
		}
		var missing []string
		out := keyRef.ReplaceAllStringFunc(text, func(ref string) string {
			m := keyRef.FindStringSubmatch(ref)
			key := m[1]
			if m[2] != "" {
				if i == 0 {
					missing = append(missing, ref+" (outside a for_each)")
					return ref
				}
				key += "_" + strconv.Itoa(i)
			}
			v, ok := values[key]
			if !ok {
				missing = append(missing, "${"+key+"}")
			}
			return v
		})
		if missing != nil {
			return "", fmt.Errorf("no value printed for %s", strings.Join(missing, ", "))
		}
		return out, nil
	}
	n, indexed := 1, false
	if t.ForEach != "" {
		spec, err := sub(t.ForEach, 0)
		if err != nil {
			return nil, fmt.Errorf("for_each: %w", err)
		}
		m := forEach.FindStringSubmatch(spec)
		if m == nil {
			return nil, fmt.Errorf("for_each %q: want i in 1..N", spec)
		}
		n, _ = strconv.Atoi(m[1])
		indexed = true
	}
	var calls []Invocation
	for i := 1; i <= n; i++ {
		idx := 0
		if indexed {
			idx = i
		}
		var inv Invocation
		var err error
		for _, f := range []struct {
			dst *string
			src string
		}{{&inv.SubagentType, t.SubagentType}, {&inv.Description, t.Description}, {&inv.Prompt, t.Prompt}} {
			if *f.dst, err = sub(f.src, idx); err != nil {
				return nil, err
			}
		}
		inv.I = idx
		calls = append(calls, inv)
	}
	return calls, nil
}
