package orchestrate

import (
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// The roles of workflow states: what the workflow's definition asks of
// agents in each state. Pure: no I/O. Nothing here knows the plugin's own
// commands; the default machine's roles are data (lib/machine/default.json)
// as a user's are.

// Role is what one workflow state asks of agents: the state's Work in
// the workflow's definition.
type Role struct {
	State string
	machine.Work
}

// RoleOf returns the role of state in m; ok is false for a state without
// work (initialize, complete, a custom machine's bookkeeping states).
func RoleOf(m *machine.Machine, state string) (Role, bool) {
	w, ok := m.WorkOf(state)
	return Role{State: state, Work: w}, ok
}

// Roles returns every role of m, in the machine's state order.
func Roles(m *machine.Machine) []Role {
	var out []Role
	for _, s := range m.WorkStates() {
		r, _ := RoleOf(m, s)
		out = append(out, r)
	}
	return out
}

// Kind is the aggregation of the role's results; "" for none.
func (r Role) Kind() supervisor.Kind { return supervisor.Kind(r.Aggregate) }

// Key is the supervisor_state key its workers are recorded under.
func (r Role) Key() string { return r.RecordsKey(r.State) }

// SupervisorAgent is the role's sub-supervisor agent, "" when the state is
// always flat.
func (r Role) SupervisorAgent() string {
	if r.Supervisor == nil {
		return ""
	}
	return r.Supervisor.Agent
}
