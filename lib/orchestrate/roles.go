package orchestrate

import (
	"strings"

	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// The roles of workflow states: which agents a state needs and where their
// records are kept. Pure: no I/O.

// Role is what one workflow state asks of agents.
type Role struct {
	State      string
	Agent      string          // the worker agent, e.g. research-specialist
	Supervisor string          // its sub-supervisor agent; "" when the state is always flat
	Kind       supervisor.Kind // aggregation kind; "" for single-agent states
	Key        string          // supervisor_state key that holds the workers
	Artifact   string          // what a worker writes, as its prompt names it
}

// roles lists the states that need agents. Other states (initialize,
// complete, states of custom machines) have no work and are passed through.
var roles = []Role{
	{"research", "research-specialist", "research-sub-supervisor", supervisor.Research, "research_supervisor", "research report"},
	{"plan", "plan-architect", "", "", "plan_architect", "plan"},
	{"implement", "implementation-executor", "implementation-sub-supervisor", supervisor.Implementation, "implementation_supervisor", "implementation summary"},
	{"test", "test-specialist", "testing-sub-supervisor", supervisor.Testing, "testing_supervisor", "test results JSON"},
	{"debug", "debug-analyst", "", "", "debug_analyst", "debug report"},
	{"document", "doc-writer", "", "", "doc_writer", "documentation summary"},
}

// Roles returns every state's role, in workflow order.
func Roles() []Role { return append([]Role(nil), roles...) }

// Classifier is the agent that classifies a request before its workflow
// exists.
const Classifier = "workflow-classifier"

// pluginPrefix is how Claude Code names a plugin's agents: the plugin's
// name, a colon, the agent's name.
const pluginPrefix = "flowstate:"

// OwnAgent reports whether an Agent call's subagent_type is one of
// flowstate's agents (flowstate:NAME from the plugin, NAME from a project
// install), and returns its NAME.
func OwnAgent(subagentType string) (string, bool) {
	name := strings.TrimPrefix(subagentType, pluginPrefix)
	if name == Classifier {
		return name, true
	}
	for _, r := range roles {
		if name == r.Agent || name != "" && name == r.Supervisor {
			return name, true
		}
	}
	return "", false
}

// RoleOf returns the role of state; ok is false for a state without work.
func RoleOf(state string) (Role, bool) {
	for _, r := range roles {
		if r.State == state {
			return r, true
		}
	}
	return Role{}, false
}

// RecordKeys names the supervisor_state keys a state's workers are
// recorded under: what a rewind past the state takes back with it.
func RecordKeys(state string) []string {
	if r, ok := RoleOf(state); ok {
		return []string{r.Key}
	}
	return nil
}
