package standin

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// followPrefix starts the prompt of an agent launched as general-purpose
// (Drift.GeneralPurpose): the original bash system's Task blocks, and a
// model that does not know the plugin's agent types, hand the agent its
// instructions as a file to read.
const followPrefix = "Read and follow the instructions in "

// generalPurpose is the subagent_type such calls use.
const generalPurpose = "general-purpose"

// asGeneralPurpose is inv as a model sends it that launches every agent
// as general-purpose, told to follow the agent's file.
func (th thread) asGeneralPurpose(inv invocation) (invocation, error) {
	file, err := agentFile(inv.SubagentType, th.Knobs.PluginDir, th.Conv.Cwd)
	if err != nil {
		return inv, err
	}
	inv.SubagentType = generalPurpose
	inv.Prompt = followPrefix + file + "\n\n" + inv.Prompt
	return inv, nil
}

// agentFile is the file that defines an agent type: a plugin's agent
// ("flowstate:research-specialist") is <plugin>/agents/<name>.md, a
// project's ("research-specialist", as `flowstate install` names them)
// <project>/.claude/agents/<name>.md.
func agentFile(agentType, pluginDir, cwd string) (string, error) {
	plugin, name, ok := strings.Cut(agentType, ":")
	switch {
	case !ok:
		return filepath.Join(cwd, ".claude", "agents", agentType+".md"), nil
	case pluginDir == "":
		return "", fmt.Errorf("Drift.GeneralPurpose needs Knobs.PluginDir to name the file of agent %q (plugin %s)", name, plugin)
	}
	return filepath.Join(pluginDir, "agents", name+".md"), nil
}

var mdPath = regexp.MustCompile("`?([^\\s`]+\\.md)`?[.:]?$")

// FollowedAgent reads the prompt of an agent told to follow a file: the
// file (named on the first line, which starts "Read and follow", or on
// the line after it) and the rest of the prompt, the task itself.
func FollowedAgent(prompt string) (file, rest string, ok bool) {
	lines := strings.Split(strings.TrimLeft(prompt, " \t\n"), "\n")
	if !strings.HasPrefix(lines[0], "Read and follow") {
		return "", "", false
	}
	for i := 0; i < 2 && i < len(lines); i++ {
		if m := mdPath.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			return m[1], strings.TrimSpace(strings.Join(lines[i+1:], "\n")), true
		}
	}
	return "", "", false
}

// numberedLine is a line of what Claude Code's Read tool returns: the
// line number, a tab (or an arrow), the line.
var numberedLine = regexp.MustCompile(`^ *\d+(?:\t|→)(.*)$`)

// fileText is the file a Read tool result shows: the numbers taken off
// its lines and the reminders Claude Code appends dropped.
func fileText(result string) string {
	result, _, _ = strings.Cut(result, "<system-reminder>")
	lines := strings.Split(strings.TrimRight(result, "\n"), "\n")
	for i, l := range lines {
		m := numberedLine.FindStringSubmatch(l)
		if m == nil {
			return result // not numbered: as it is
		}
		lines[i] = m[1]
	}
	return strings.Join(lines, "\n") + "\n"
}

// frontmatter splits an agent file into the name its frontmatter gives
// ("" if none) and its body, the instructions.
func frontmatter(file string) (name, body string) {
	rest, ok := strings.CutPrefix(file, "---\n")
	if !ok {
		return "", file
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return "", file
	}
	for _, l := range strings.Split(head, "\n") {
		if v, ok := strings.CutPrefix(l, "name:"); ok {
			name = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return name, body
}

// followedPersona is the persona of a subagent told to follow an agent
// file: the name the file gives once it has been read, its file name
// before.
func (c conversation) followedPersona() string {
	if c.AgentName != "" {
		return c.AgentName
	}
	return strings.TrimSuffix(filepath.Base(c.AgentFile), ".md")
}

// follow makes a subagent told to follow an agent file follow it: the
// file, once its first call has read it, is its program, and what Claude
// Code's system prompt for a general-purpose agent says is not.
func (c *conversation) follow() {
	file, rest, ok := FollowedAgent(c.Prompt)
	if !ok {
		return
	}
	c.AgentFile, c.Prompt = file, rest
	if len(c.Calls) > 0 {
		if read := c.Calls[0]; read.Name == "Read" && read.HasResult && !read.IsError {
			c.AgentName, c.Program = frontmatter(fileText(read.Result))
		}
	}
}
