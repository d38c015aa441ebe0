package orchestrate

import "testing"

func TestRolesHaveAgents(t *testing.T) {
	for _, r := range Roles() {
		if r.Agent == "" || r.Key == "" || r.Artifact == "" || (r.Supervisor == "") != (r.Kind == "") {
			t.Errorf("incomplete role %+v", r)
		}
	}
	if _, ok := RoleOf("initialize"); ok {
		t.Error("initialize has no agents")
	}
}
