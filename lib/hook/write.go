package hook

import (
	"fmt"
	"path/filepath"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// fileTools are the tools that write a file, with the input field that
// names it.
var fileTools = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// guardWrite refuses a write by the main thread to a file only an agent
// of the session's command writes (orchestrate.AgentFiles): a model whose
// worker delivered nothing writes the file itself, and the next verify
// would take it as the worker's. Claude Code 2.1.328 puts agent_id in
// the payload of a tool call made inside a subagent and nothing in the
// main thread's (docs/claude-code.md), so the worker's own write passes.
func (h handler) guardWrite(field string) {
	if h.pl.AgentID != "" || h.p == nil || h.session == "" || store.ValidID(h.session) != nil {
		return
	}
	target := gjson.GetBytes(h.pl.ToolInput, field).String()
	if target == "" {
		return
	}
	if !filepath.IsAbs(target) {
		if h.pl.Cwd == "" {
			return
		}
		target = filepath.Join(h.pl.Cwd, target)
	}
	target = resolved(target)
	for _, f := range orchestrate.AgentFiles(h.p, h.session) {
		if resolved(f.Path) != target {
			continue
		}
		h.answer(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":            "PreToolUse",
			"permissionDecision":       "deny",
			"permissionDecisionReason": refusal(h.p, f),
		}})
		return
	}
}

// refusal tells the model that only the agent writes f and what to do
// instead.
func refusal(p *store.Project, f orchestrate.AgentFile) string {
	path := f.Path
	if rel, err := filepath.Rel(p.Dir, path); err == nil {
		path = rel
	}
	if f.Worker == "" {
		return fmt.Sprintf("Only the %s agent writes %s; do not write it yourself. Run the command's next bash block instead: it checks what the agent delivered and says what runs next.", f.Agent, path)
	}
	return fmt.Sprintf("Only the %s worker %s writes %s; do not write it yourself. Run the command's next bash block instead: it checks what the worker delivered and plans it again if it delivered nothing.", f.Agent, f.Worker, path)
}

// resolved is path, clean and absolute, with the links of its longest
// existing ancestor resolved: two spellings of one file (a `..`, a
// linked directory) compare equal, whether or not the file exists yet.
func resolved(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
