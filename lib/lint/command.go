package lint

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// The checks of a command as a whole: its command file, the workflow
// definition it starts and the agent files of its install agree. Each
// file is still read by the caller (lib/app); these are pure.

// Start is a workflow a command's bash block starts: a phase-start (the
// phase loop) or an sm-init (the low-level API) call.
type Start struct {
	Line int // in the command file
	// Machine is the --machine file as written, ${CLAUDE_PLUGIN_ROOT} and
	// ${CLAUDE_PROJECT_DIR} kept for the caller to resolve; "" for the
	// built-in definition. Dynamic: it is no text lint can follow.
	Machine string
	Dynamic bool
	// LowLevel: sm-init, whose command's own blocks run the workflow.
	// Its agents are those its --agents name (AgentsGiven; Agents, with
	// AgentsKnown false when one is no plain text), else those its
	// command's task blocks launch when sm-init finds the command in a
	// .claude/commands directory.
	LowLevel    bool
	AgentsGiven bool
	Agents      []string
	AgentsKnown bool
}

// Environment variables a --machine path may use, which lint resolves.
const (
	PluginRoot = "CLAUDE_PLUGIN_ROOT"
	ProjectDir = "CLAUDE_PROJECT_DIR"
)

// Starts lists the workflows the command md starts, in file order.
func Starts(md string) []Start {
	d, err := protocol.Parse(strings.ReplaceAll(md, "\r\n", "\n"))
	if err != nil {
		return nil
	}
	var out []Start
	for _, st := range d.Steps {
		if st.Task != nil {
			continue
		}
		s, perr := readScript(st.Body)
		if perr != nil {
			continue
		}
		for _, c := range s.calls {
			if c.sub == "phase-start" || c.sub == "sm-init" {
				out = append(out, startOf(st.Line+c.line, c))
			}
		}
	}
	return out
}

// startOf reads the flags of a start call.
func startOf(line int, c call) Start {
	s := Start{Line: line, LowLevel: c.sub == "sm-init", AgentsKnown: true}
	for i := 0; i < len(c.words); i++ {
		w, whole := render(c.words[i])
		flag, value, inline := strings.Cut(w, "=")
		if flag != "--machine" && flag != "--agents" {
			continue
		}
		ok := inline && whole
		if !inline && i+1 < len(c.words) {
			i++
			value, ok = render(c.words[i])
		}
		s.AgentsGiven = s.AgentsGiven || flag == "--agents"
		switch {
		case flag == "--machine":
			s.Machine, s.Dynamic = value, !ok
		case !ok:
			s.AgentsKnown = false
		default:
			for _, a := range strings.Split(value, ",") {
				if a = strings.TrimSpace(a); a != "" {
					s.Agents = append(s.Agents, a)
				}
			}
		}
	}
	return s
}

// render is a word's text with quotes removed and ${CLAUDE_PLUGIN_ROOT}
// and ${CLAUDE_PROJECT_DIR} (with or without a default) kept as
// ${NAME}; ok is false for a word that holds anything else to expand.
func render(w *syntax.Word) (string, bool) {
	var b strings.Builder
	ok := wordText(&b, w.Parts, func(p *syntax.ParamExp) (string, bool) {
		name := ""
		if p.Param != nil {
			name = p.Param.Value
		}
		if name != PluginRoot && name != ProjectDir || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil ||
			p.Exp != nil && p.Exp.Op != syntax.DefaultUnset && p.Exp.Op != syntax.DefaultUnsetOrNull {
			return "", false
		}
		return "${" + name + "}", true
	})
	return b.String(), ok
}

// Definition is what the caller found for a Start's --machine: the file
// where it looked, whether it is there, and the machine it holds (nil
// when it is not there or not valid, which CheckDefinition reports).
type Definition struct {
	Path    string
	Found   bool
	Machine *machine.Machine
}

// CheckCommand checks what the command md at path starts, defs[i] being
// what was found for starts[i]: a definition that is not there, and, for
// a command on the low-level API, task blocks that launch agents its
// workflow does not have: those its sm-init's --agents leave out, or, in
// a plugin, where sm-init cannot read the command's blocks, all those no
// --agents names.
func CheckCommand(path, md string, starts []Start, defs []Definition) []Finding {
	l := &linter{path: path}
	declared := map[string]bool{}
	lowLevel, known, given := false, true, false
	for i, s := range starts {
		def := defs[i]
		if s.Machine != "" && !s.Dynamic && !def.Found {
			where := ""
			if def.Path != s.Machine {
				where = " (looked for " + def.Path + ")"
			}
			l.add(s.Line, "starts the workflow definition %s, which is not there%s; write it there (flowstate new command NAME writes one) or give --machine the file's path, from the project's root or with ${%s} in a plugin",
				s.Machine, where, PluginRoot)
		}
		if !s.LowLevel {
			l.isolatedBlock(md, s, def.Machine)
			continue
		}
		lowLevel, given = true, given || s.AgentsGiven
		known = known && s.AgentsKnown && !s.Dynamic && (s.Machine == "" || def.Machine != nil)
		for _, a := range s.Agents {
			declared[a] = true
		}
		if def.Machine != nil {
			for _, a := range def.Machine.AgentNames() {
				declared[a] = true
			}
		}
	}
	if lowLevel && known && (given || !ownCommand(path)) {
		l.undeclared(md, starts, declared)
	}
	return l.findings
}

// isolatedBlock: a phase-loop command whose definition runs a state's
// workers in worktrees needs the task block that launches them so
// (isolation: worktree); without it such a batch would be handed to a
// block that launches nobody, and the command would stop on workers
// never started.
func (l *linter) isolatedBlock(md string, s Start, m *machine.Machine) {
	if m == nil {
		return
	}
	var isolated []string
	for state, w := range m.Work {
		if w.Isolated() {
			isolated = append(isolated, state)
		}
	}
	if len(isolated) == 0 {
		return
	}
	if d, err := protocol.Parse(md); err != nil || slices.ContainsFunc(d.Steps, func(st protocol.Step) bool { return st.Task != nil && st.Task.Isolation != "" }) {
		return
	}
	slices.Sort(isolated)
	l.add(s.Line, "its definition runs the workers of %s each in a git worktree (\"isolation\": \"worktree\"), and no task block here launches them so; add to ## work the second task block flowstate new command writes (for_each: i in 1..${ISOLATED_COUNT}, isolation: worktree)",
		strings.Join(isolated, ", "))
}

// ownCommand reports whether path is a command of a project's or a
// user's own (.claude/commands/NAME.md), whose task blocks sm-init reads
// for the workflow's agents (orchestrate.CommandAgents).
func ownCommand(path string) bool {
	dir := filepath.Dir(filepath.Clean(path))
	return filepath.Base(dir) == "commands" && filepath.Base(filepath.Dir(dir)) == ".claude"
}

// undeclared: each agent a task block of a low-level command launches
// is one its workflow declares, so that the hooks hold it.
func (l *linter) undeclared(md string, starts []Start, declared map[string]bool) {
	d, err := protocol.Parse(strings.ReplaceAll(md, "\r\n", "\n"))
	if err != nil {
		return
	}
	at := 0
	for _, s := range starts {
		if s.LowLevel {
			at = s.Line
			break
		}
	}
	for _, st := range d.Steps {
		if st.Task == nil || strings.Contains(st.Task.SubagentType, "${") || st.Task.SubagentType == "" {
			continue
		}
		name := st.Task.SubagentType[strings.LastIndex(st.Task.SubagentType, ":")+1:]
		if declared[name] {
			continue
		}
		l.add(st.Line+lineIn(st.Body, "subagent_type:"), "agent %s is launched here but is not the workflow's: the hooks hold (run in the foreground, record, send back to its section) only a workflow's agents, which for a command on sm-init are those its --agents names (or its --machine's \"agents\"), else, in .claude/commands, those its task blocks launch; add %s to the --agents of the sm-init at line %d",
			name, name, at)
	}
}

// lineIn is the 1-based line of body that starts with prefix (after
// spaces), 0 if none.
func lineIn(body, prefix string) int {
	for i, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return i + 1
		}
	}
	return 0
}

// AgentFile is an agent file: its path and the name its frontmatter gives,
// on line Line.
type AgentFile struct {
	Path string
	Name string
	Line int
}

// ReadAgent reads the name an agent file at path gives itself.
func ReadAgent(path, md string) AgentFile {
	a := AgentFile{Path: path, Line: 1}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	if len(lines) == 0 || lines[0] != "---" {
		return a
	}
	for i, line := range lines[1:] {
		if line == "---" {
			break
		}
		if v, ok := strings.CutPrefix(line, "name:"); ok {
			a.Name, a.Line = strings.Trim(strings.TrimSpace(v), `"'`), i+2
		}
	}
	return a
}

// stem is an agent file's name without .md: what a definition and the
// command's task blocks call it, and so its name: too.
func (a AgentFile) stem() string { return strings.TrimSuffix(filepath.Base(a.Path), ".md") }

// CheckAgentName: an agent's name: is its file name. Claude Code knows
// an agent by its name:, people and `flowstate new command` by the file.
func CheckAgentName(a AgentFile) []Finding {
	if a.Name == "" || a.Name == a.stem() {
		return nil
	}
	return []Finding{{Path: a.Path, Line: a.Line, Message: fmt.Sprintf(
		"name: %s differs from the file's name %s.md: Claude Code knows the agent as %s, its definition and task blocks as whatever they name; give the agent one name in all three places (the file, name:, the definition's \"agent\")",
		a.Name, a.stem(), a.Name)}}
}

// CheckDefinition checks the workflow definition at path: that it is a
// definition flowstate runs (a problem said at the line of the key it is
// about) and, when agents (the install's agent files by file name) is
// not nil, that every agent it names has a file whose name: is it.
func CheckDefinition(path string, data []byte, agents map[string]AgentFile) []Finding {
	keys := keyLines(data)
	m, err := machine.Parse(data)
	if err != nil {
		return []Finding{{Path: path, Line: lineOfError(keys, err.Error()), Message: err.Error()}}
	}
	if agents == nil {
		return nil
	}
	byName := map[string]AgentFile{}
	for _, a := range agents {
		if a.Name != "" {
			byName[a.Name] = a
		}
	}
	var out []Finding
	for _, ref := range agentRefs(m) {
		if _, ok := byName[ref.name]; ok {
			continue
		}
		msg := fmt.Sprintf("agent %s has no agent file: the hooks and Claude Code know no agent of that name; write agents/%s.md with name: %s, or name an agent that has a file", ref.name, ref.name, ref.name)
		if a, ok := agents[ref.name]; ok {
			msg = fmt.Sprintf("agent %s: its file %s is named %s (line %d); give the agent one name in the file's name, its name: and here", ref.name, a.Path, orNone(a.Name), a.Line)
		}
		out = append(out, Finding{Path: path, Line: keys[ref.key], Message: msg})
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// agentRef is an agent a definition names, and the key that names it.
type agentRef struct{ key, name string }

// agentRefs lists the agents m names: the classifier, each state's worker
// and sub-supervisor, and its agents list.
func agentRefs(m *machine.Machine) []agentRef {
	var out []agentRef
	if m.Classifier != "" {
		out = append(out, agentRef{"classifier", m.Classifier})
	}
	for _, s := range slices.Sorted(maps.Keys(m.Work)) {
		w := m.Work[s]
		out = append(out, agentRef{"work." + s + ".agent", w.Agent})
		if w.Supervisor != nil {
			out = append(out, agentRef{"work." + s + ".supervisor.agent", w.Supervisor.Agent})
		}
	}
	for i, a := range m.Agents {
		out = append(out, agentRef{fmt.Sprintf("agents.%d", i), a})
	}
	return out
}
