package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/lint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// lintSet is what one `flowstate lint` checks: the files named (or the
// project's), and what the commands among them use, a command being
// checked whole: the definitions it starts, and the agent files those
// name. Files are checked in the order they were added.
type lintSet struct {
	e       *env
	files   []string
	seen    map[string]bool // the files, cleaned
	data    map[string][]byte
	project string // the project of the run, "" outside one
	// agentsDir is the agents directory of each definition's install
	// ("" when it has none lint can tell); agents each such
	// directory's agent files by file name, read once.
	agentsDir map[string]string
	agents    map[string]map[string]lint.AgentFile
	// starts and defs are each command's starts and what was found for
	// them.
	starts map[string][]lint.Start
	defs   map[string][]lint.Definition
}

// newLintSet reads files and, for each command among them, the
// definitions it starts and the agent files those name.
func (e *env) newLintSet(files []string) (*lintSet, error) {
	s := &lintSet{e: e, seen: map[string]bool{}, data: map[string][]byte{}, agentsDir: map[string]string{}, agents: map[string]map[string]lint.AgentFile{},
		starts: map[string][]lint.Start{}, defs: map[string][]lint.Definition{}}
	if p, err := e.Project(); err == nil {
		s.project = p.Dir
	}
	for _, f := range files {
		if err := s.add(f, agentsBeside(f)); err != nil {
			return nil, err
		}
	}
	// Commands first, then their definitions, then those definitions'
	// agents: each step may add files the next one reads.
	for _, f := range slices.Clone(s.files) {
		if isCommand(f, s.data[f]) {
			if err := s.command(f); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range slices.Clone(s.files) {
		if filepath.Ext(f) == ".json" {
			if err := s.definitionAgents(f); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// add reads a file into the set, once; a definition's with the agents
// directory of its install.
func (s *lintSet) add(f, agentsDir string) error {
	if s.seen[filepath.Clean(f)] {
		return nil
	}
	s.seen[filepath.Clean(f)] = true
	b, err := fsx.ReadNamed(f, limit.Max)
	if err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	s.files, s.data[f] = append(s.files, f), b
	if filepath.Ext(f) == ".json" {
		s.agentsDir[f] = agentsDir
	}
	return nil
}

// isCommand reports whether the markdown file f is a command.
func isCommand(f string, md []byte) bool {
	if filepath.Ext(f) != ".md" {
		return false
	}
	d, _ := protocol.Parse(string(md))
	return lint.KindOf(f, d.Frontmatter) == lint.Command
}

// installOf is the directory a file of a command's install is in: the
// .claude of a project, or a plugin's root; "" for a file elsewhere.
func installOf(f string) string {
	switch dir := filepath.Dir(f); filepath.Base(dir) {
	case "commands", "agents", "flows":
		return filepath.Dir(dir)
	}
	return ""
}

// agentsBeside is the agents directory of the install a definition at
// f is in, "" outside one.
func agentsBeside(f string) string {
	if root := installOf(f); root != "" && filepath.Base(filepath.Dir(f)) == "flows" {
		return filepath.Join(root, "agents")
	}
	return ""
}

// command finds what the command f starts: each definition, read into
// the set (with the agents of the command's install) when it is there.
func (s *lintSet) command(f string) error {
	starts := lint.Starts(string(s.data[f]))
	defs := make([]lint.Definition, len(starts))
	root := installOf(f)
	for i, st := range starts {
		path, ok := s.resolve(f, st.Machine)
		if st.Machine == "" || st.Dynamic || !ok {
			defs[i].Found = true // the built-in one, or one lint cannot find
			continue
		}
		defs[i].Path = path
		switch _, err := os.Stat(path); {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("lint: %w", err)
		}
		agentsDir := agentsBeside(path)
		if agentsDir == "" && root != "" {
			agentsDir = filepath.Join(root, "agents")
		}
		if err := s.add(path, agentsDir); err != nil {
			return err
		}
		defs[i].Found = true
		defs[i].Machine, _ = machine.Parse(s.data[path])
	}
	s.starts[f], s.defs[f] = starts, defs
	return nil
}

// resolve is the file a --machine of command f names: a relative path
// is the project's (the command's own, for one in a project's .claude),
// ${CLAUDE_PLUGIN_ROOT} the plugin the command is in. ok is false when
// lint cannot tell where that is.
func (s *lintSet) resolve(f, machinePath string) (string, bool) {
	project, plugin := s.project, ""
	switch root := installOf(f); {
	case filepath.Base(root) == ".claude":
		project = s.e.path(filepath.Dir(root))
	case root != "":
		plugin = s.e.path(root)
	}
	for name, dir := range map[string]string{lint.PluginRoot: plugin, lint.ProjectDir: project} {
		ref := "${" + name + "}"
		if strings.Contains(machinePath, ref) {
			if dir == "" {
				return "", false
			}
			machinePath = strings.ReplaceAll(machinePath, ref, dir)
		}
	}
	if filepath.IsAbs(machinePath) {
		return s.e.shown(filepath.Clean(machinePath)), true
	}
	if project == "" {
		return "", false
	}
	return s.e.shown(filepath.Join(project, machinePath)), true
}

// shown is how lint prints a path: relative to the working directory
// when it is under it.
func (e *env) shown(path string) string {
	if rel, err := filepath.Rel(e.Cwd, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// agentsIn reads the agent files of dir once, by file name; nil when dir
// is "" or holds none.
func (s *lintSet) agentsIn(dir string) (map[string]lint.AgentFile, error) {
	if dir == "" {
		return nil, nil
	}
	if a, ok := s.agents[dir]; ok {
		return a, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lint: %w", err)
	}
	var agents map[string]lint.AgentFile
	for _, en := range entries {
		if en.IsDir() || filepath.Ext(en.Name()) != ".md" {
			continue
		}
		f := filepath.Join(dir, en.Name())
		b, err := fsx.ReadNamed(f, limit.Max)
		if err != nil {
			return nil, fmt.Errorf("lint: %w", err)
		}
		if agents == nil {
			agents = map[string]lint.AgentFile{}
		}
		agents[strings.TrimSuffix(filepath.Base(f), ".md")] = lint.ReadAgent(f, string(b))
	}
	s.agents[dir] = agents
	return agents, nil
}

// definitionAgents adds to the set the agent files the definition f
// names, found in its install by name or by file name.
func (s *lintSet) definitionAgents(f string) error {
	agents, err := s.agentsIn(s.agentsDir[f])
	if err != nil || agents == nil {
		return err
	}
	m, err := machine.Parse(s.data[f])
	if err != nil {
		return nil // CheckDefinition reports it
	}
	for _, name := range m.AgentNames() {
		for stem, a := range agents {
			if stem == name || a.Name == name {
				if err := s.add(a.Path, ""); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// findings checks each file of the set, and the set's commands whole, in
// the order the files were added.
func (s *lintSet) findings() (map[string][]lint.Finding, error) {
	out := map[string][]lint.Finding{}
	for _, f := range s.files {
		switch text := string(s.data[f]); {
		case filepath.Ext(f) == ".json":
			agents, err := s.agentsIn(s.agentsDir[f])
			if err != nil {
				return nil, err
			}
			out[f] = lint.CheckDefinition(f, s.data[f], agents)
		case isCommand(f, s.data[f]):
			out[f] = append(lint.Check(f, text), lint.CheckCommand(f, text, s.starts[f], s.defs[f])...)
		default:
			out[f] = append(lint.Check(f, text), lint.CheckAgentName(lint.ReadAgent(f, text))...)
		}
		slices.SortStableFunc(out[f], func(a, b lint.Finding) int { return a.Line - b.Line })
	}
	return out, nil
}
