// Package engine decides which engine runs a definition in a Claude Code
// session: the workflow engine, a Claude Code workflow (its Workflow
// tool) whose script asks flowstate for every step, where that tool is
// on; else the steps engine, the model following the command's blocks.
// engine.go is the decision, pure and table-tested; read.go gathers
// what it reads (the environment, the settings files the session reads,
// the session transcript's tool list) and finds a command's saved
// workflow. It decides nothing a definition means: lib/orchestrate runs
// every step in both engines.
package engine

import (
	"encoding/json"
	"strings"
)

// The engines.
const (
	Steps    = "steps"
	Workflow = "workflow"
)

// Override is the environment variable a project or a person sets to
// choose the engine ("steps" or "workflow"), as .claude/settings.json's
// "env" can: it wins over what flowstate finds out (the workflow engine
// still needs a Claude Code session with flowstate's hooks).
const Override = "FLOWSTATE_ENGINE"

// Inputs is everything the choice reads.
type Inputs struct {
	// Definition is the definition's "engine": "", "steps" or "workflow".
	Definition string
	// Override is FLOWSTATE_ENGINE.
	Override string
	// InClaude: the step runs in a Claude Code session
	// (CLAUDE_CODE_SESSION_ID is set).
	InClaude bool
	// Hooks: flowstate's hooks run in the session (its UserPromptSubmit
	// hook recorded the prompt that invoked the command). The workflow
	// engine steps through them.
	Hooks bool
	// Disable and Enable are CLAUDE_CODE_DISABLE_WORKFLOWS and
	// CLAUDE_CODE_WORKFLOWS, as Claude Code's environment gives them to
	// the step.
	Disable, Enable string
	// Settings are the settings files the session reads, as read
	// (disableWorkflows, enableWorkflows).
	Settings [][]byte
	// Tools are the tools Claude Code offered the session's main thread,
	// as its transcript records them; ToolsKnown is false when it could
	// not be read. Where known, it is the exact answer.
	Tools      []string
	ToolsKnown bool
	// Saved: the command's saved workflow is installed (Saved).
	Saved bool
}

// Choose is the engine for in, and why, in a few words for the person.
func Choose(in Inputs) (engine, why string) {
	switch {
	case !in.InClaude:
		return Steps, "not in a Claude Code session"
	case in.Definition == Steps:
		return Steps, `the definition says "engine": "steps"`
	case in.Override == Steps:
		return Steps, Override + "=steps"
	case !in.Hooks:
		return Steps, "flowstate's hooks do not run in this session"
	case in.Override == Workflow:
		return Workflow, Override + "=workflow"
	case !in.Saved:
		return Steps, "the command's saved workflow is not installed"
	case in.ToolsKnown && !hasTool(in.Tools, "Workflow"):
		return Steps, "Claude Code does not offer this session the Workflow tool"
	case in.ToolsKnown:
		return Workflow, "Claude Code offers this session the Workflow tool"
	case truthy(in.Disable):
		return Steps, "CLAUDE_CODE_DISABLE_WORKFLOWS=" + in.Disable
	case falsy(in.Enable):
		return Steps, "CLAUDE_CODE_WORKFLOWS=" + in.Enable
	}
	for _, s := range in.Settings {
		if settingOff(s) {
			return Steps, "a settings file turns workflows off"
		}
	}
	return Workflow, "the Workflow tool is on"
}

func hasTool(tools []string, name string) bool {
	for _, t := range tools {
		if t == name {
			return true
		}
	}
	return false
}

// truthy and falsy read an environment switch as Claude Code does: 1,
// true, yes, on; 0, false, no, off.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// settingOff reports whether a settings document turns workflows off:
// "disableWorkflows": true or "enableWorkflows": false. A document that
// does not parse says nothing.
func settingOff(doc []byte) bool {
	var s struct {
		Disable *bool `json:"disableWorkflows"`
		Enable  *bool `json:"enableWorkflows"`
	}
	if json.Unmarshal(doc, &s) != nil {
		return false
	}
	return s.Disable != nil && *s.Disable || s.Enable != nil && !*s.Enable
}
