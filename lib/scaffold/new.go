package scaffold

import (
	"fmt"
	"path"

	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// NewWorkflow is what runs command name on the workflow engine: its
// saved Claude Code workflow and the step agent it asks (shared by every
// command of the install), for a project's .claude, or with plugin the
// plugin it goes into. source names what wrote it.
func NewWorkflow(name, plugin, source string) ([]File, error) {
	if err := protocol.CheckCommandName(name); err != nil {
		return nil, fmt.Errorf("new workflow: %w", err)
	}
	dir, prefix := ".claude/", ""
	if plugin != "" {
		dir, prefix = "", plugin+":"
	}
	flow, err := RenderWorkflow(Workflow{Name: engine.FlowName(name), Description: "The workflow of /" + name + ", run by flowstate",
		StepAgent: prefix + orchestrate.StepAgent, Source: source})
	if err != nil {
		return nil, err
	}
	step, err := RenderStepAgent()
	if err != nil {
		return nil, err
	}
	return []File{
		{Path: dir + "workflows/" + engine.FlowName(name) + ".js", Data: flow},
		{Path: dir + "agents/" + orchestrate.StepAgent + ".md", Data: step, Shared: true},
	}, nil
}

// File is one file `flowstate new command` writes, its path relative to
// the project (a project's .claude layout) or to the plugin's root.
type File struct {
	Path string
	Data []byte
	// Shared files (the sub-supervisor) serve every command of the
	// install: written only when absent.
	Shared bool
}

// NewCommand is a working command NAME of its own: a workflow definition
// (a fan-out of three reviewers over lenses, partial failure accepted,
// then a writer who summarises their reviews), the command that runs it
// through the phase loop, and its agents. plugin is the name of the
// plugin it goes into, "" for a project's .claude.
func NewCommand(name, plugin string) ([]File, error) {
	// What phase-start would refuse, new never writes: the name goes into
	// every file, and the plugin's into the command's agent names.
	if err := protocol.CheckCommandName(name); err != nil {
		return nil, fmt.Errorf("new command: %w", err)
	}
	if err := protocol.CheckCommandName(plugin); plugin != "" && err != nil {
		return nil, fmt.Errorf("new command: plugin.json's \"name\": %w", err)
	}
	dir, prefix := ".claude/", ""
	def := ".claude/flows/" + name + ".json"
	if plugin != "" {
		dir, prefix = "", plugin+":"
		def = "${CLAUDE_PLUGIN_ROOT}/flows/" + name + ".json"
	}
	definition, err := render("definition.json.tmpl", struct{ Name string }{name})
	if err != nil {
		return nil, err
	}
	if _, err := machine.Parse(definition); err != nil {
		return nil, fmt.Errorf("scaffold: the definition of %s: %w", name, err)
	}
	command, err := RenderCommand(Command{
		Name:         name,
		Description:  "Review a change through three lenses in parallel, then summarise the reviews (a flowstate workflow)",
		ArgumentHint: "WHAT TO REVIEW",
		Intro: "Review what the arguments name through each lens of `" + path.Base(def) + "` in parallel, then\n" +
			"summarise the reviews, keeping all state in `flowstate`.",
		Prefix: prefix,
		Start:  `phase-start --command ` + name + ` --machine "` + def + `" --launch`,
		Resume: "/" + prefix + name + " --resume",
	})
	if err != nil {
		return nil, err
	}
	supervisor, err := RenderSubSupervisor(prefix)
	if err != nil {
		return nil, err
	}
	flow, err := NewWorkflow(name, plugin, "flowstate new command "+name)
	if err != nil {
		return nil, err
	}
	files := append([]File{
		{Path: dir + "flows/" + name + ".json", Data: definition},
		{Path: dir + "commands/" + name + ".md", Data: command},
	}, flow[0], File{Path: dir + "agents/sub-supervisor.md", Data: supervisor, Shared: true}, flow[1])
	for _, a := range []struct{ name, description, task string }{
		{name + "-reviewer", "Reviews what a workflow's request names through one lens, its topic, and writes the review in the format its brief gives",
			"You review what the workflow's request names through one lens, the `Topic:` (correctness,\nsecurity, readability): read the code it names and say what holds up, what does not, and\nwhat to change."},
		{name + "-writer", "Sums up the reviews a workflow's brief lists into one file, in the format its brief gives",
			"You sum up the reviews of a change: read each file your brief lists, and write one that says\nwhat to change first and why, citing them, and what is missing where a review was not\ndelivered."},
	} {
		md, err := render("worker.md.tmpl", struct{ Name, Description, Task string }{a.name, a.description, a.task})
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: dir + "agents/" + a.name + ".md", Data: md})
	}
	return files, nil
}
