// Package protocol reads command and agent files the way
// docs/command-protocol.md says a model must: the fenced blocks and
// sections of a markdown file, the fields of a task block, the KEY=VALUE
// lines a bash block prints, the lines that tell an agent what to write
// and return, and what a flowstate command can print for the blocks after
// it (Prints). lib/lint checks files against it; the test suites and the
// e2e stand-in model read the format through it too, so none of them can
// disagree about it. It is pure: no I/O.
package protocol

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A SyntaxError is where a text departs from the format: its 1-based
// line and what is wrong there.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func syntaxErrorf(line int, format string, a ...any) *SyntaxError {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// Block is one fenced block of a markdown file.
type Block struct {
	Info    string // the info string: "bash", "task", "output", "bash legacy", ...
	Body    string // the lines between the fences, verbatim
	Line    int    // 1-based line of the opening fence in the text parsed
	Section string // the "## name" heading above it, "" before the first
}

// KeyPattern is the grammar of a KEY a bash block prints (KEY=VALUE) and
// a task block reads (${KEY}, ${KEY_i}); lib/lint builds its patterns
// from it.
const KeyPattern = `[A-Z][A-Z0-9_]*`

// patterns are the format's regular expressions, compiled on first use
// rather than at every flowstate start: each bash block is a process of
// its own, and most never read markdown.
var patterns = sync.OnceValue(func() *patternSet {
	return &patternSet{
		fenceOpen: regexp.MustCompile("^(`{3,})(.*)$"),
		heading2:  regexp.MustCompile(`^##[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$`),
		taskField: regexp.MustCompile(`^([ \t]*)([a-z_]+):(?:[ \t]+(.*?))?[ \t]*$`),
		kvLine:    regexp.MustCompile(`^(` + KeyPattern + `)=(.*)$`),
		// ${KEY}, or with "_i" in the second group a for_each's ${KEY_i}.
		keyRef:     regexp.MustCompile(`\$\{(` + KeyPattern + `?)(_i)?\}`),
		writeLine:  regexp.MustCompile("^\\s*(?:[-*]\\s+)?(?:Write|Create|Save)\\b[^:]*:\\s*`?([^\\s`]+)`?\\s*$"),
		returnLine: regexp.MustCompile(`^\s*(?:[-*]\s+)?Return exactly:\s*(.*?)\s*$`),
		readFirst:  regexp.MustCompile("^\\s*(?:[-*]\\s+)?Read first:\\s*`?([^\\s`]+)`?\\s*$"),
		forEach:    regexp.MustCompile(`^i in 1\.\.([0-9]+)$`),
		// A for_each as written, before ${N} is replaced by its value.
		forEachWritten: regexp.MustCompile(`^i in 1\.\.(?:[0-9]+|\$\{` + KeyPattern + `\})$`),
	}
})

type patternSet struct {
	fenceOpen, heading2, taskField, kvLine, keyRef, writeLine, returnLine, readFirst, forEach, forEachWritten *regexp.Regexp
}

// Heading returns the section name of a level-2 heading line ("## name",
// an optional closing run of #s dropped).
func Heading(line string) (string, bool) {
	m := patterns().heading2.FindStringSubmatch(line)
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
		m := patterns().fenceOpen.FindStringSubmatch(lines[i])
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
			return syntaxErrorf(first+i, "fence %s never closed", m[1])
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

// Step is a ```bash block, a ```task block or a ```workflow block
// (protocol section 1). For a bash block, Body is what runs, verbatim.
type Step struct {
	Block
	Task   *Task   // the parsed task block; nil for any other
	Launch *Launch // the parsed workflow block; nil for any other
}

// Bash reports whether the step is a bash block.
func (s Step) Bash() bool { return s.Task == nil && s.Launch == nil }

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
// info string is exactly "bash", "task" or "workflow"; other blocks
// (output, json, "bash legacy", examples in ```` fences) are not steps. A
// task or workflow block that does not parse, a fence that never closes
// and two sections of one name are errors.
func Parse(md string) (Doc, error) {
	d := Doc{Sections: map[string]int{}, Lines: strings.Count(md, "\n")}
	first := 1
	body := md
	if rest, ok := strings.CutPrefix(md, "---\n"); ok {
		front, after, ok := strings.Cut(rest, "\n---\n")
		if !ok {
			return d, syntaxErrorf(1, "frontmatter not closed: end it with a line ---")
		}
		var err error
		if d.Frontmatter, err = frontmatter(front); err != nil {
			return d, err
		}
		body = after
		first += strings.Count(front, "\n") + 3
	}
	d.Body = body
	var err error
	scanErr := scan(body, first, func(b Block) {
		if err != nil || (b.Info != "bash" && b.Info != "task" && b.Info != "workflow") {
			return
		}
		s := Step{Block: b}
		switch b.Info {
		case "task":
			t, terr := parseTask(b.Body)
			if terr != nil {
				err = syntaxErrorf(b.Line+terr.Line, "task block: %s", terr.Msg)
				return
			}
			s.Task = &t
		case "workflow":
			l, lerr := parseLaunch(b.Body)
			if lerr != nil {
				err = syntaxErrorf(b.Line+lerr.Line, "workflow block: %s", lerr.Msg)
				return
			}
			s.Launch = &l
		}
		d.Steps = append(d.Steps, s)
	}, func(text string, line int) {
		d.Prose = append(d.Prose, Prose{Text: text, Line: line, Step: len(d.Steps)})
		if name, ok := Heading(text); ok && err == nil {
			if _, dup := d.Sections[name]; dup {
				err = syntaxErrorf(line, "a second section \"## %s\"", name)
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

// frontmatter reads the "key: value" lines between the --- lines at the
// top of a file. A line that is indented or starts with "- " continues the
// key above it (a YAML list or folded text), which keeps that key's value
// non-empty. The lines start at line 2 of the file.
func frontmatter(front string) (map[string]string, error) {
	parts := map[string][]string{} // each key's value, line by line: joined once, not once a line
	last := ""
	for i, l := range strings.Split(front, "\n") {
		switch t := strings.TrimSpace(l); {
		case t == "" || strings.HasPrefix(t, "#"):
		case last != "" && (strings.TrimLeft(l, " \t") != l || strings.HasPrefix(t, "- ")):
			parts[last] = append(parts[last], t)
		default:
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				return nil, syntaxErrorf(i+2, "frontmatter line %q is not key: value", t)
			}
			last = strings.TrimSpace(k)
			parts[last] = []string{strings.TrimSpace(v)}
		}
	}
	fm := make(map[string]string, len(parts))
	for k, p := range parts {
		fm[k] = strings.TrimSpace(strings.Join(p, " "))
	}
	return fm, nil
}

// Task is a ```task block (protocol section 3).
type Task struct {
	SubagentType string
	Description  string
	ForEach      string // "i in 1..${N}", or empty
	Foreground   bool   // "run_in_background: false" is given
	Isolation    string // "worktree": each agent in a git worktree of its own
	Prompt       string
	PromptBlock  bool // the prompt was a "prompt: |" block, not a one-line value
}

// ParseTask reads the body of a ```task block: "Task {", then
// subagent_type, description, optionally for_each, run_in_background
// (false is the only value: Claude Code's default is the background) and
// isolation (worktree: the Agent tool's other isolation, remote, runs the
// agent away from the project, where no artifact reaches it), and
// prompt, each as "key: value", then "}". "prompt: |" takes every line below it up to the
// closing "}", each indented deeper than the key, with the indentation
// they share removed (blank lines kept, trailing ones dropped); so prompt
// comes last. subagent_type, description and prompt are required. An
// error is a *SyntaxError whose Line counts from the body's first line.
func ParseTask(body string) (Task, error) {
	t, err := parseTask(body)
	if err != nil {
		return t, err
	}
	return t, nil
}

func parseTask(body string) (Task, *SyntaxError) {
	var t Task
	err := braced(body, "Task", func(lines []string, i, indent int, key, value string) (int, *SyntaxError) {
		switch key {
		case "subagent_type":
			t.SubagentType = value
		case "description":
			t.Description = value
		case "for_each":
			t.ForEach = value
		case "run_in_background":
			if value != "false" {
				return i, syntaxErrorf(i+1, "run_in_background: %s: agents of a command run in the foreground; write run_in_background: false", value)
			}
			t.Foreground = true
		case "isolation":
			if value != "worktree" {
				return i, syntaxErrorf(i+1, "isolation: %s: a command's agents run in the project or, isolation: worktree, each in a git worktree of its own", value)
			}
			t.Isolation = value
		case "prompt":
			if value != "|" {
				t.Prompt = value
				return i, nil
			}
			p, bad, err := blockScalar(lines[i+1:len(lines)-1], indent)
			if err != nil {
				return i, syntaxErrorf(i+2+bad, "%v", err)
			}
			t.Prompt, t.PromptBlock = p, true
			return len(lines) - 1, nil
		default:
			return i, syntaxErrorf(i+1, "unknown field %q: a task block has subagent_type, description, for_each, run_in_background, isolation and prompt", key)
		}
		return i, nil
	})
	if err != nil {
		return t, err
	}
	for _, f := range []struct{ name, value string }{{"subagent_type", t.SubagentType}, {"description", t.Description}, {"prompt", t.Prompt}} {
		if f.value == "" {
			return t, syntaxErrorf(1, "no %s: a task block needs subagent_type, description and prompt", f.name)
		}
	}
	return t, nil
}

// braced reads the body of a block "<head> {", key: value lines, "}":
// field is given each key and value once, with the lines and the index
// of its line (and the key's indentation), and returns the index of the
// last line it took.
func braced(body, head string, field func(lines []string, i, indent int, key, value string) (int, *SyntaxError)) *SyntaxError {
	lines := strings.Split(body, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != head+" {" || strings.TrimSpace(lines[len(lines)-1]) != "}" {
		return syntaxErrorf(1, "want %s { ... } with the braces on their own lines", head)
	}
	seen := map[string]bool{}
	for i := 1; i < len(lines)-1; i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		m := patterns().taskField.FindStringSubmatch(lines[i])
		if m == nil {
			return syntaxErrorf(i+1, "cannot read %q: want key: value", strings.TrimSpace(lines[i]))
		}
		key, value := m[2], m[3]
		if seen[key] {
			return syntaxErrorf(i+1, "%s given twice: keep one", key)
		}
		seen[key] = true
		last, err := field(lines, i, len(m[1]), key, value)
		if err != nil {
			return err
		}
		i = last
	}
	return nil
}

// blockScalar is the text of a "key: |" value: lines, each blank or
// indented deeper than the key, with their common indentation removed.
// An error names the index of the line at fault.
func blockScalar(lines []string, keyIndent int) (string, int, error) {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for k, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if n <= keyIndent {
			return "", k, fmt.Errorf("prompt line %q is not indented below prompt: |", strings.TrimSpace(l))
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
	return strings.Join(out, "\n"), 0, nil
}

// KeyValues returns the KEY=VALUE lines of a block's output, in order
// (protocol section 2): KEY matches [A-Z][A-Z0-9_]*, the value runs to the
// end of the line. When they are applied in order, the newest value of a
// key wins.
func KeyValues(out string) [][2]string {
	var kvs [][2]string
	for _, l := range strings.Split(out, "\n") {
		if m := patterns().kvLine.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			kvs = append(kvs, [2]string{m[1], m[2]})
		}
	}
	return kvs
}

// KeyRefs lists the KEYs of the ${KEY} references in text, in order;
// a for_each's ${KEY_i} is not one.
func KeyRefs(text string) []string {
	var keys []string
	for _, m := range patterns().keyRef.FindAllStringSubmatch(text, -1) {
		if m[2] == "" {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// LoopRefs lists the KEYs of a for_each's ${KEY_i} references in text,
// in order: ${FILE_i} is FILE's.
func LoopRefs(text string) []string {
	var keys []string
	for _, m := range patterns().keyRef.FindAllStringSubmatch(text, -1) {
		if m[2] != "" {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// ForEachWritten reports whether spec, a task block's for_each value as
// written, is one the format runs: "i in 1..N" for a number N, or
// "i in 1..${KEY}" with KEY printed before.
func ForEachWritten(spec string) bool {
	return patterns().forEachWritten.MatchString(spec)
}

// WriteTarget returns the path of a line that tells an agent which file
// to write ("Write the report to: <path>", "- Create the file: <path>");
// only a path with a "/" counts.
func WriteTarget(line string) (string, bool) {
	m := patterns().writeLine.FindStringSubmatch(line)
	if m == nil || !strings.Contains(m[1], "/") {
		return "", false
	}
	return m[1], true
}

// WriteTargets lists the paths the lines of text tell an agent to write.
func WriteTargets(text string) []string {
	var paths []string
	for _, line := range strings.Split(text, "\n") {
		if p, ok := WriteTarget(line); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// ReturnLine returns the answer a "Return exactly: <line>" line asks for.
func ReturnLine(line string) (string, bool) {
	m := patterns().returnLine.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.Trim(m[1], "`"), true
}

// ReadFirst returns the file a prompt tells its agent to read first (the
// brief its phase's workers share), from its "Read first: <path>" line.
func ReadFirst(prompt string) (string, bool) {
	for _, line := range strings.Split(prompt, "\n") {
		if m := patterns().readFirst.FindStringSubmatch(line); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// Invocation is one Agent tool call a task block expands to.
type Invocation struct {
	SubagentType, Description, Prompt string
	I                                 int    // the for_each index (1..N), 0 without for_each
	Isolation                         string // the task block's isolation: "worktree" or ""
}

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
		out := patterns().keyRef.ReplaceAllStringFunc(text, func(ref string) string {
			m := patterns().keyRef.FindStringSubmatch(ref)
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
		m := patterns().forEach.FindStringSubmatch(spec)
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
		inv.I, inv.Isolation = idx, t.Isolation
		calls = append(calls, inv)
	}
	return calls, nil
}

// LaunchedAgents are the agents md's task blocks launch, by name without
// a plugin prefix, each once, in the order of the blocks; a block whose
// subagent_type a block prints (${AGENT}) names none.
func LaunchedAgents(md string) []string {
	d, err := Parse(strings.ReplaceAll(md, "\r\n", "\n"))
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range d.Steps {
		if st.Task == nil || st.Task.SubagentType == "" || strings.Contains(st.Task.SubagentType, "${") {
			continue
		}
		name := st.Task.SubagentType[strings.LastIndex(st.Task.SubagentType, ":")+1:]
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
