package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// sm_save and sm_load: a state machine in a file of its own.

// savedMachine is the state machine a file holds, in any of the three
// forms the original's sm_load read.
type savedMachine struct {
	current, scope, description, command string
	completed                            []string
}

// parseMachine reads the state machine of doc as the original's sm_load
// did: a checkpoint's state_machine section, else the top level (what
// sm_save writes), else a 1.3 checkpoint's phases. The scope defaults to
// full-implementation.
func parseMachine(doc []byte) savedMachine {
	root := gjson.ParseBytes(doc)
	var s savedMachine
	switch at := root.Get(checkpoint.PathStateMachine); {
	case at.IsObject():
		root = at
		fallthrough
	case root.Get("current_state").Exists():
		s.current = root.Get("current_state").String()
		s.scope = root.Get("workflow_config.scope").String()
		s.description = root.Get("workflow_config.description").String()
		s.command = root.Get("workflow_config.command").String()
		for _, c := range root.Get("completed_states").Array() {
			s.completed = append(s.completed, c.String())
		}
	default:
		s.current = phaseState(firstNonEmpty(root.Get("workflow_state.current_phase").String(), "0"))
		for _, p := range root.Get("workflow_state.completed_phases").Array() {
			s.completed = append(s.completed, phaseState(p.String()))
		}
	}
	s.scope = firstNonEmpty(s.scope, pendingScope)
	return s
}

// left is completed in flowstate's form, the states left, initial first:
// a machine the original saved lists the states entered.
func left(completed []string, current, initial string) []string {
	out := []string{}
	if current == initial {
		return out
	}
	for _, s := range append([]string{initial}, completed...) {
		if s != current && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// sm_save FILE: the state machine, written to FILE: the state_machine
// section of the checkpoint of the workflow the shell names, else the
// shell's variables in the original's form.
func smSave(c *call) int {
	file := c.arg(0)
	if file == "" {
		return c.usage("%s FILE", c.name)
	}
	w, err := c.named()
	if err != nil {
		return c.failErr(err)
	}
	var data string
	if w != nil {
		doc, err := w.ReadCheckpoint()
		if err != nil {
			return c.failErr(err)
		}
		raw, _, _ := checkpoint.Get(doc, checkpoint.PathStateMachine)
		data = checkpoint.Display(raw)
	} else {
		data = c.shellMachine()
	}
	path := c.abs(file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return c.failErr(err)
	}
	if err := fsx.WriteFile(path, []byte(data+"\n")); err != nil {
		return c.failErr(err)
	}
	return 0
}

// shellMachine is the original's sm_save JSON of the shell's variables:
// the state, the states entered, the default machine's table as comma
// lists and the configuration; sm_save_with_classification adds the
// classification.
func (c *call) shellMachine() string {
	m := machine.Default()
	table := map[string]string{}
	for _, s := range m.States() {
		table[s] = strings.Join(m.Transitions[s], ",")
	}
	out := map[string]any{
		"current_state":    firstNonEmpty(c.vars["CURRENT_STATE"], m.Initial),
		"completed_states": strings.Fields(c.vars["COMPLETED_STATES"]), // an item a line
		"transition_table": table,
		"workflow_config": map[string]string{
			"scope": c.vars["WORKFLOW_SCOPE"], "description": c.vars["WORKFLOW_DESCRIPTION"], "command": c.vars["COMMAND_NAME"],
		},
	}
	if c.name == "sm_save_with_classification" {
		cls := map[string]any{"workflow_type": c.vars["WORKFLOW_SCOPE"], "research_topics": json.RawMessage("[]")}
		if n := c.vars["RESEARCH_COMPLEXITY"]; isDigits(n) {
			cls["research_complexity"] = json.Number(n)
		}
		if t := c.vars["RESEARCH_TOPICS_JSON"]; gjson.Valid(t) && gjson.Parse(t).IsArray() {
			cls["research_topics"] = json.RawMessage(t)
		}
		out["classification"] = cls
	}
	return jsonText(out)
}

// sm_load FILE: the state machine's variables. FILE a workflow's
// checkpoint: that workflow's. Another file: in a workflow
// init_workflow_state started and sm_init has not, the workflow resumes
// from FILE's machine (its state, completed states, scope, description
// and command); without a workflow the shell takes FILE's values, as
// the original did; a workflow under way keeps its own, since its
// checkpoint is the one truth.
func smLoad(c *call) int {
	file := strings.SplitN(c.arg(0), "#", 2)[0]
	if file == "" || !isFile(c.abs(file)) {
		return c.fail(1, "ERROR: Checkpoint file not found: %s", c.arg(0))
	}
	w, err := c.refWorkflow(c.abs(file))
	if err == nil && w == nil {
		w, err = c.resume(c.abs(file))
		if err == nil && w == nil {
			return 0
		}
	}
	if err != nil {
		return c.failErr(err)
	}
	s, err := c.view(w)
	if err != nil {
		return c.failErr(err)
	}
	if w.ID != c.shellWorkflowID() {
		c.set("WORKFLOW_ID", w.ID, true)
	}
	for _, k := range []string{"WORKFLOW_SCOPE", "WORKFLOW_DESCRIPTION", "COMMAND_NAME"} {
		if v, ok := s.value(k); ok {
			c.set(k, v, true)
		}
	}
	c.answerMachine(s)
	c.touch(w, &s)
	return 0
}

// resume is sm_load of a file that is no workflow's checkpoint: it
// returns the workflow whose variables the shell gets, nil when the
// shell took the file's own.
func (c *call) resume(path string) (*store.Workflow, error) {
	doc, err := readFile(path)
	if err != nil {
		return nil, err
	}
	saved := parseMachine(doc)
	w, err := c.named()
	if err != nil {
		return nil, err
	}
	if w == nil {
		c.takeMachine(saved)
		return nil, nil
	}
	cp, err := w.ReadCheckpoint()
	if err != nil || !pending(cp) {
		return w, err
	}
	cls := classify.Classification{WorkflowType: saved.scope, Reasoning: "resumed from " + path}
	ip := sm.InitParams{
		ID: w.ID, Description: firstNonEmpty(saved.description, cls.Reasoning), Command: firstNonEmpty(saved.command, commandOfID(w.ID)),
		Scope: saved.scope, Classification: cls, Machine: machine.Default(), Session: c.session(),
	}
	return w, begin(w, ip, &saved)
}

// takeMachine sets the shell's state machine variables to saved's, as
// the original's sm_load did; the terminal state is the scope's.
func (c *call) takeMachine(saved savedMachine) {
	m := machine.Default()
	terminal := final(m)
	if sc, err := m.Scope(saved.scope); err == nil {
		terminal = sc.Terminal
	}
	c.set("CURRENT_STATE", saved.current, true)
	c.set("WORKFLOW_SCOPE", saved.scope, true)
	c.set("WORKFLOW_DESCRIPTION", saved.description, true)
	c.set("COMMAND_NAME", saved.command, true)
	c.set("TERMINAL_STATE", terminal, true)
	c.setArray("COMPLETED_STATES", saved.completed)
}
