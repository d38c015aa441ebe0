package hook

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// fileTools are the tools that write a file, with the input field that
// names it.
var fileTools = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// guardWrite holds the files only an agent of the session's command
// writes (orchestrate.AgentFiles: the artifacts the workflow handed out,
// the pending classification) to the agent they were handed to. The main
// thread's write of one is refused: a model whose worker delivered
// nothing writes the file itself, and the next verify would take it as
// the worker's. So is another agent's, one not the workflow's or handed
// another file. The agent it was handed to is granted its write (no
// person is asked about it). Claude Code 2.1.328 puts agent_id in the
// payload of a tool call made inside a subagent and nothing in the main
// thread's (docs/claude-code.md). Every other file is the person's: the
// hook says nothing of it. A call whose target cannot be read is refused
// while the session has such files, and let through otherwise.
func (h handler) guardWrite(field string) {
	if !h.recordable() {
		return
	}
	files := orchestrate.AgentFiles(h.p, h.session)
	if len(files) == 0 {
		return
	}
	if field == "" || h.unreadable || slices.Contains(h.pl.Dropped, "tool_input."+field) {
		h.deny("flowstate could not read which file this call writes, and only the agents of the session's workflow write its artifacts; run the command's next bash block instead.")
		return
	}
	target := h.pl.filePath(field)
	if target == "" {
		return // no file named: nothing is written
	}
	// A worktree of the project mirrors it: an isolated agent's file
	// there is the project's file of that path.
	target = worktree.MainPath(resolved(h.p.Dir), resolved(target))
	i := slices.IndexFunc(files, func(f orchestrate.AgentFile) bool { return resolved(f.Path) == target })
	if i < 0 {
		return
	}
	f := files[i]
	if h.pl.AgentID == "" {
		h.deny(refusal(h.p, f))
		return
	}
	switch h.handedTo(f, target) {
	case handedYes:
		if h.granting() {
			h.allow("the "+f.Agent+" agent writes the file the workflow handed it", nil)
		}
	case handedNo:
		h.deny(refusal(h.p, f))
	}
}

// handedVerdict says whether a subagent writing a file only an agent
// writes is the agent it was handed to.
type handedVerdict int

const (
	handedUnknown handedVerdict = iota // its prompt cannot be read: the person's mode decides
	handedYes
	handedNo
)

// handedTo tells whether the subagent making the call is the agent f was
// handed to: one of the session's workflow (orchestrate.RecognizeAgent),
// f's agent, told in its prompt to write target (or, before its prompt is
// on disk, launched as f's agent with target to write).
func (h handler) handedTo(f orchestrate.AgentFile, target string) handedVerdict {
	prompt := sync.OnceValue(h.agentPrompt)
	k, ours := orchestrate.RecognizeAgent(h.p, h.session, h.pl.AgentType, h.pl.AgentID, prompt, h.pl.Cwd)
	switch {
	case !ours || k.Name != f.Agent:
		return handedNo
	case prompt() == "":
		// Claude Code writes an agent's transcript a little after it
		// starts: its launch, which the hook saw with its prompt, says.
		if orchestrate.HandedOut(h.p, h.session, k.Name, func(path string) bool { return resolved(path) == target }) {
			return handedYes
		}
		return handedUnknown
	}
	for _, path := range orchestrate.WriteTargets(prompt(), h.pl.Cwd, h.p.Dir) {
		if resolved(path) == target {
			return handedYes
		}
	}
	return handedNo
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
