// Package scaffold owns the markdown of the commands that run flowstate's
// phase loop and of the sub-supervisor agent that fans a large phase out,
// the saved Claude Code workflow that runs a command on the workflow
// engine and its step agent, and what `flowstate new command` writes: a
// workflow definition, its command, its saved workflow and its agents.
// The plugin's own orchestrators are rendered from the same templates as
// a user's command (docs/gen keeps commands/*.md and workflows/*.js in
// step), so a fix to the loop reaches every command.
//
// It is pure: it returns files and their contents; lib/app writes them.
package scaffold

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sync"
	"text/template"
)

//go:embed *.tmpl
var templates embed.FS

// parsed are the templates, parsed on first use.
var parsed = sync.OnceValue(func() *template.Template {
	funcs := template.FuncMap{"json": func(s string) (string, error) {
		b, err := json.Marshal(s)
		return string(b), err
	}}
	return template.Must(template.New("").Funcs(funcs).ParseFS(templates, "*.tmpl"))
})

// Command is one command that runs the phase loop.
type Command struct {
	Name         string // as typed after the slash, without a plugin prefix
	Description  string // the frontmatter's description
	ArgumentHint string
	Intro        string // what the command does, in a paragraph
	// Prefix is how the command's install names its agents: "flowstate:"
	// in the flowstate plugin, "review:" in a plugin named review, "" in
	// a project's .claude (install.sh drops flowstate: there).
	Prefix string
	// Start is what the start block runs after `flowstate `, its input the
	// command's arguments: phase-start --command NAME ..., or resume -.
	Start string
	// Classifier is the agent that classifies the request before the
	// workflow exists ("" for none), and Classified what the block after
	// it runs.
	Classifier string
	Classified string
	// Sequential: one worker at a time, never a sub-supervisor, so the
	// command has no ## supervised section.
	Sequential bool
	// Resume is what the user types to continue the workflow, e.g.
	// /flowstate:workflow-resume or /audit --resume.
	Resume string
}

// RenderCommand writes c's markdown.
func RenderCommand(c Command) ([]byte, error) {
	if c.Name == "" || c.Start == "" || c.Resume == "" || c.Classifier != "" && c.Classified == "" {
		return nil, fmt.Errorf("scaffold: command %q needs a name, a start, a resume and, with a classifier, a classified step", c.Name)
	}
	return render("command.md.tmpl", c)
}

// Workflow is a command's saved Claude Code workflow: the same loop for
// every definition, which asks flowstate for each step.
type Workflow struct {
	Name        string // its meta.name (engine.FlowName of the command)
	Description string // what Claude Code shows of it
	// StepAgent is the step agent as the install names it:
	// flowstate:flowstate-step in the plugin, flowstate-step in a
	// project's .claude.
	StepAgent string
	Source    string // what wrote it, for the reader of the file
}

// RenderWorkflow writes w's script.
func RenderWorkflow(w Workflow) ([]byte, error) {
	if w.Name == "" || w.StepAgent == "" || w.Source == "" {
		return nil, fmt.Errorf("scaffold: workflow %q needs a name, a step agent and a source", w.Name)
	}
	return render("workflow.js.tmpl", w)
}

// RenderStepAgent writes the workflow engine's step agent.
func RenderStepAgent() ([]byte, error) { return render("step.md.tmpl", nil) }

// RenderSubSupervisor writes the sub-supervisor agent of an install whose
// agents are named with prefix.
func RenderSubSupervisor(prefix string) ([]byte, error) {
	return render("sub-supervisor.md.tmpl", struct{ Prefix string }{prefix})
}

func render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := parsed().ExecuteTemplate(&b, name, data); err != nil {
		return nil, fmt.Errorf("scaffold: %s: %w", name, err)
	}
	return b.Bytes(), nil
}
