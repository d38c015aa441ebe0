package main

import (
	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/scaffold"
)

// pluginPrefix is how Claude Code names the flowstate plugin's agents.
const pluginPrefix = "flowstate:"

// orchestrators are the plugin's commands that run the phase loop: the
// same template as a user's command (`flowstate new command`), with
// what each says and how it starts.
var orchestrators = []scaffold.Command{
	{
		Name:         "coordinate",
		Description:  "Classify a request and run it as a flowstate workflow, with parallel workers and sub-supervisors for large phases",
		ArgumentHint: "[--approve-plan] DESCRIPTION",
		Intro: "Classify the request with the workflow-classifier (or offline when\n" +
			"`FLOWSTATE_CLASSIFICATION=offline`), then run its phases, keeping all state in `flowstate`.",
		Start:      "phase-start --command coordinate --launch",
		Classifier: "workflow-classifier",
		Classified: "phase-start --command coordinate --classified",
	},
	{
		Name:         "supervise",
		Description:  "Classify a request and run it as a flowstate workflow, one agent at a time, no sub-supervisors",
		ArgumentHint: "[--approve-plan] DESCRIPTION",
		Intro: "Classify the request, then run its phases sequentially: one worker per step, no\n" +
			"sub-supervisors, all state in `flowstate`.",
		Start:      "phase-start --command supervise --sequential --launch",
		Classifier: "workflow-classifier",
		Classified: "phase-start --command supervise --classified --sequential",
		Sequential: true,
	},
	{
		Name:         "orchestrate",
		Description:  "Run a flowstate workflow with the scope you choose (no classifier), from research to documentation",
		ArgumentHint: "--scope SCOPE [--approve-plan] DESCRIPTION",
		Intro: "Run the workflow described after `--scope SCOPE`, phase by phase, keeping all state in\n" +
			"`flowstate`.",
		Start: "phase-start --command orchestrate --require-scope --launch",
	},
	{
		Name:         "workflow-resume",
		Description:  "Continue an interrupted flowstate workflow from its checkpoint, re-running only unfinished states and workers",
		ArgumentHint: "[--retry-failed] [WORKFLOW_ID]",
		Intro: "Point this session at the workflow (the given id, else this session's or the project's only\n" +
			"unfinished one) and continue it. Workers already recorded as completed are not run again;\n" +
			"with `--retry-failed`, workers whose failure the workflow went on without are run again too.",
		Start: "resume --launch -",
	},
}

// pluginFiles renders the plugin's phase-loop commands, the saved
// workflow of each (the workflow engine), and its sub-supervisor and
// step agents.
func pluginFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, c := range orchestrators {
		c.Prefix, c.Resume = pluginPrefix, "/"+pluginPrefix+"workflow-resume"
		md, err := scaffold.RenderCommand(c)
		if err != nil {
			return nil, err
		}
		out["commands/"+c.Name+".md"] = md
		flow := engine.FlowName(c.Name)
		js, err := scaffold.RenderWorkflow(scaffold.Workflow{Name: flow, Description: c.Description,
			StepAgent: pluginPrefix + orchestrate.StepAgent, Source: "go run ./docs/gen, from lib/scaffold"})
		if err != nil {
			return nil, err
		}
		out["workflows/"+flow+".js"] = js
	}
	sup, err := scaffold.RenderSubSupervisor(pluginPrefix)
	if err != nil {
		return nil, err
	}
	out["agents/sub-supervisor.md"] = sup
	step, err := scaffold.RenderStepAgent()
	if err != nil {
		return nil, err
	}
	out["agents/"+orchestrate.StepAgent+".md"] = step
	return out, nil
}
