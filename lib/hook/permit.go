package hook

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/grant"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
)

// In Claude Code's default permission mode a person is asked before a
// Bash command that may change something and before a file is written
// (in `claude -p` the call is refused). flowstate's own steps would ask
// them dozens of times a workflow, so the PreToolUse hook answers
// "allow" for exactly those, and for nothing else (lib/grant):
//
//   - a Bash call of the main thread that is, verbatim, a bash block of the
//     command the user's latest prompt invoked (UserPromptSubmit records
//     it), as Claude Code expanded it, running nothing but flowstate;
//   - a Bash call of one of the workflow's agents that is, verbatim, a bash
//     block of that agent's file (a sub-supervisor's steps, given back with
//     the agent's id exported before them: granted as flowstate rewrote
//     them, so the rewrite costs nobody an approval);
//   - a Write or Edit by one of the workflow's agents of the artifact the
//     workflow handed it (the classifier's of the pending classification);
//   - a Read by a general-purpose agent of the workflow of the agent file
//     it was told to follow, which may lie outside the project.
//
// Nothing is granted in plan mode, nor in a session whose user's latest
// prompt invoked no command with flowstate steps. Claude Code checks a
// person's own deny and ask rules after the hook, so those still win.

// bashCommand is the Bash call's command, when it was read whole and
// keeps the sandbox: a call that asks to leave the sandbox is not granted.
func (h handler) bashCommand() (string, bool) {
	c := gjson.GetBytes(h.pl.ToolInput, "command") // not a checkpoint path: the Bash tool's input
	if c.Type != gjson.String || slices.Contains(h.pl.Dropped, "tool_input.command") ||
		gjson.GetBytes(h.pl.ToolInput, "dangerouslyDisableSandbox").Bool() {
		return "", false
	}
	return c.Str, true
}

// granting reports whether the hook may grant anything: a session in
// plan mode changes nothing.
func (h handler) granting() bool {
	return h.pl.PermissionMode != "plan" && h.recordable()
}

// allow answers Claude Code that the call is one of flowstate's own,
// with updated, when not nil, as the input it runs.
func (h handler) allow(why string, updated json.RawMessage) {
	out := map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "allow",
		"permissionDecisionReason": "flowstate: " + why,
	}
	if updated != nil {
		out["updatedInput"] = updated
	}
	h.answer(map[string]any{"hookSpecificOutput": out})
}

// deny refuses the call, telling the model why.
func (h handler) deny(why string) {
	h.answer(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": why,
	}})
}

// permitBash grants a Bash call that is one of flowstate's own steps.
func (h handler) permitBash() {
	cmd, ok := h.bashCommand()
	if !ok || !h.granting() {
		return
	}
	name, steps := h.invokedSteps()
	if len(steps) == 0 {
		return
	}
	if h.pl.AgentID != "" {
		h.permitAgentBash(cmd)
		return
	}
	st, ok := grant.Match(steps, cmd)
	if !ok {
		return
	}
	if st.Phase {
		if err := orchestrate.StepPending(h.p, h.session, st.Text); err != nil {
			h.l.printf("pre-tool-use: %v", err)
		}
	}
	h.allow("a step of /"+name, nil)
}

// permitAgentBash grants a Bash call of one of the workflow's agents that
// is a bash block of its own file. A sub-supervisor's step is given back
// with `export FLOWSTATE_AGENT_ID=<id>` before it: phase-plan and
// phase-verify --supervisor then know the state the agent was started
// in, and a supervisor left over from an earlier state (it ran in the
// background while the command went on) acts on no later one.
func (h handler) permitAgentBash(cmd string) {
	k, ours := orchestrate.RecognizeAgent(h.p, h.session, h.pl.AgentType, h.pl.AgentID, sync.OnceValue(h.agentPrompt), h.pl.Cwd)
	if !ours {
		return
	}
	for _, path := range h.agentFiles(k.Name) {
		md, err := fsx.ReadRegular(path, maxMarkdown)
		if err != nil {
			continue
		}
		if _, ok := grant.Match(grant.Steps(string(md), grant.Expansion{}), cmd); !ok {
			continue
		}
		if !grant.SupervisorStep(cmd) || !agentIDs().MatchString(h.pl.AgentID) {
			h.allow("a step of the "+k.Name+" agent", nil)
			return
		}
		updated, err := sjson.SetBytes(h.pl.ToolInput, "command", "export "+orchestrate.AgentEnv+"="+h.pl.AgentID+"\n"+cmd) // not a checkpoint path
		if err != nil {
			h.l.printf("pre-tool-use: %v", err)
			return
		}
		h.allow("a step of the "+k.Name+" agent, told its agent id", updated)
		return
	}
}

// permitRead grants a general-purpose agent of the workflow the read of
// the agent file it was told to follow: the plugin's lies outside the
// project, where reads are asked.
func (h handler) permitRead() {
	target := h.pl.filePath("file_path")
	if h.pl.AgentID == "" || target == "" || !h.granting() {
		return
	}
	if _, steps := h.invokedSteps(); len(steps) == 0 {
		return
	}
	if !orchestrate.IsGeneric(h.pl.AgentType) {
		return // an agent of its own type has its instructions already
	}
	k, ours := orchestrate.RecognizeAgent(h.p, h.session, h.pl.AgentType, h.pl.AgentID, sync.OnceValue(h.agentPrompt), h.pl.Cwd)
	if !ours {
		return
	}
	target = resolved(target)
	for _, path := range h.agentFiles(k.Name) {
		if resolved(path) == target {
			h.allow("the "+k.Name+" agent reads its instructions", nil)
			return
		}
	}
}

// maxMarkdown bounds the read of a command or agent file.
const maxMarkdown = 256 << 10

// invokedSteps are the command the user's latest prompt in the session
// invoked (as typed) and its flowstate steps, as Claude Code expanded
// it; none when the prompt invoked no command, or one with none.
func (h handler) invokedSteps() (string, []grant.Step) {
	name, args, ok := orchestrate.Invoked(h.p, h.session)
	if !ok {
		return "", nil
	}
	paths, root := h.commandFiles(name)
	vars := map[string]string{"CLAUDE_SESSION_ID": h.session}
	if dir := h.env.Getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		vars["CLAUDE_PROJECT_DIR"] = dir
	}
	if root != "" {
		vars["CLAUDE_PLUGIN_ROOT"] = root
	}
	var steps []grant.Step
	for _, path := range paths {
		md, err := fsx.ReadRegular(path, maxMarkdown)
		if err == nil {
			steps = append(steps, grant.Steps(string(md), grant.Expansion{Command: true, Args: args, Vars: vars})...)
		}
	}
	return name, steps
}

// fileName is what a command or agent file may be named in this hook's
// lookups: no path, nothing hidden.
var fileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`) })

// commandFiles are the files Claude Code may have expanded for the slash
// command name as typed: a plugin's ("flowstate:coordinate") when it is
// the plugin this hook comes from, whose root is returned too; else the
// project's or the user's own (.claude/commands/NAME.md). A command of
// another plugin is not known here.
func (h handler) commandFiles(name string) (paths []string, pluginRoot string) {
	plugin, cmd, prefixed := strings.Cut(name, ":")
	if !prefixed {
		cmd = plugin
	}
	if !fileName().MatchString(cmd) || strings.Contains(cmd, "..") {
		return nil, ""
	}
	if prefixed {
		root := h.env.Getenv("CLAUDE_PLUGIN_ROOT")
		if root == "" || plugin != engine.PluginName(root) {
			return nil, ""
		}
		return []string{filepath.Join(root, "commands", cmd+".md")}, root
	}
	return h.ownFiles("commands", cmd), ""
}

// agentFiles are the files that may hold the agent name of the workflow:
// the plugin's (agents/NAME.md of the plugin this hook comes from) when
// the call's agent type names that plugin or no type (a general-purpose
// agent told to follow it), and the project's and the user's own when it
// names no plugin.
func (h handler) agentFiles(name string) []string {
	if !fileName().MatchString(name) || strings.Contains(name, "..") {
		return nil
	}
	plugin, _, prefixed := strings.Cut(h.pl.AgentType, ":")
	var out []string
	if root := h.env.Getenv("CLAUDE_PLUGIN_ROOT"); root != "" && (!prefixed || plugin == engine.PluginName(root)) {
		out = append(out, filepath.Join(root, "agents", name+".md"))
	}
	if !prefixed {
		out = append(out, h.ownFiles("agents", name)...)
	}
	return out
}

// ownFiles are the project's and the user's .claude/KIND/NAME.md.
func (h handler) ownFiles(kind, name string) []string {
	out := []string{filepath.Join(h.p.Dir, ".claude", kind, name+".md")}
	if home := h.env.Getenv("HOME"); home != "" {
		out = append(out, filepath.Join(home, ".claude", kind, name+".md"))
	}
	return out
}

// agentPrompt is the prompt of the subagent that makes the call: the
// first line of its transcript, beside the session's (a workflow
// script's agent's, where Claude Code keeps those).
func (h handler) agentPrompt() string {
	p, ok := transcriptPrompt(agentTranscript(h.pl.SessionTranscript, h.pl.AgentID))
	if !ok {
		p, _ = transcriptPrompt(h.workflowTranscript(h.pl.AgentID))
	}
	return p
}

// worthLooking reports whether a PreToolUse call can concern flowstate
// at all, before the hook looks for its project: every session's Bash
// calls and reads pass here. A Bash command that names no flowstate is
// none of its steps; a read of anything but an agent file
// (agents/NAME.md) is not granted.
func worthLooking(pl payload) bool {
	switch pl.ToolName {
	case "Bash":
		c := gjson.GetBytes(pl.ToolInput, "command").String() // not a checkpoint path
		return strings.Contains(c, "flowstate") || strings.Contains(c, "FLOWSTATE_BIN")
	case "Read":
		path := gjson.GetBytes(pl.ToolInput, "file_path").String()
		return pl.AgentID != "" && filepath.Ext(path) == ".md" && filepath.Base(filepath.Dir(path)) == "agents"
	case workflowTool:
		return pl.AgentID == ""
	}
	return true
}
