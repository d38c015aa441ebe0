package orchestrate

import (
	"testing"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// The default machine's roles are complete, as the plugin's commands and
// agents need them: every aggregating state records its workers under a
// key and names its artifact.
func TestRolesHaveAgents(t *testing.T) {
	m := machine.Default()
	for _, r := range Roles(m) {
		if r.Agent == "" || r.Key() == "" || r.Artifact == "" || r.Kind() != "" && r.SupervisorAgent() == "" {
			t.Errorf("incomplete role %+v", r)
		}
	}
	if _, ok := RoleOf(m, "initialize"); ok {
		t.Error("initialize has no agents")
	}
}
