package machine

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// The default machine is read without the checks of a user's
// definition (every process reads it): it passes them here.
func TestDefaultIsValid(t *testing.T) {
	if _, err := Parse(defaultJSON); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultScopesTerminals(t *testing.T) {
	want := map[string]string{
		"research-only": "research", "research-and-plan": "plan", "research-and-revise": "plan",
		"full-implementation": "complete", "debug-only": "debug", "implement-only": "implement",
		"test-and-debug": "complete",
	}
	m := Default()
	if len(m.Scopes) != len(want) {
		t.Fatalf("got %d scopes, want %d", len(m.Scopes), len(want))
	}
	for scope, term := range want {
		s, err := m.Scope(scope)
		if err != nil || s.Terminal != term {
			t.Errorf("scope %s: terminal %q err %v, want %q", scope, s.Terminal, err, term)
		}
	}
}

// DefaultScopes and Default's scopes are one list: the classifier offers
// exactly the scopes the machine runs.
func TestDefaultScopesList(t *testing.T) {
	got := DefaultScopes()
	if want := Default().ScopeNames(); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("DefaultScopes() = %v, want the scopes of Default: %v", got, want)
	}
	got[0] = "changed"
	if DefaultScopes()[0] != ResearchOnly {
		t.Error("DefaultScopes shares its slice with callers")
	}
}

// Every ordered pair of default states, checked against the table itself.
func TestCheckEveryPair(t *testing.T) {
	m := Default()
	allowed := map[[2]string]bool{}
	for _, p := range [][2]string{
		{"initialize", "research"}, {"initialize", "implement"},
		{"research", "plan"}, {"research", "complete"},
		{"plan", "implement"}, {"plan", "complete"}, {"plan", "debug"},
		{"implement", "test"}, {"implement", "complete"},
		{"test", "debug"}, {"test", "document"}, {"test", "complete"},
		{"debug", "test"}, {"debug", "document"}, {"debug", "complete"},
		{"document", "complete"},
	} {
		allowed[p] = true
	}
	for _, from := range m.States() {
		for _, to := range m.States() {
			same, err := m.Check("full-implementation", from, to, "complete")
			switch {
			case from == to:
				if !same || err != nil {
					t.Errorf("%s -> %s: want idempotent, got same=%v err=%v", from, to, same, err)
				}
			case allowed[[2]string{from, to}]:
				if err != nil {
					t.Errorf("%s -> %s: want allowed, got %v", from, to, err)
				}
			default:
				if fail.Code(err) != fail.Refused {
					t.Errorf("%s -> %s: want refused (3), got %v", from, to, err)
				}
			}
		}
	}
}

func TestCheckTerminalOfScope(t *testing.T) {
	m := Default()
	_, err := m.Check("research-and-plan", "plan", "research", "plan")
	if fail.Code(err) != fail.Refused || !strings.Contains(err.Error(), "terminal state") {
		t.Fatalf("leaving the scope's terminal state: got %v", err)
	}
	_, err = m.Check("full-implementation", "research", "plan", "research")
	if fail.Code(err) != fail.Refused {
		t.Fatalf("leaving the scope's terminal state: got %v", err)
	}
	_, err = m.Check("full-implementation", "plan", "nowhere", "complete")
	if fail.Code(err) != fail.Refused {
		t.Fatalf("unknown state: got %v", err)
	}
}

// TestCheckScopeRoutes: a state off the workflow's scope route is refused
// even where the table has the step; the recovery loop of a state on the
// route is allowed; the message names the scope and its route.
func TestCheckScopeRoutes(t *testing.T) {
	m := Default()
	tests := []struct {
		scope, from, to string
		ok              bool
	}{
		{"research-only", "initialize", "research", true},
		{"research-only", "initialize", "implement", false},
		{"research-and-plan", "plan", "implement", false},
		{"research-and-plan", "plan", "debug", false},
		{"debug-only", "plan", "debug", true},
		{"debug-only", "plan", "implement", false},
		{"implement-only", "initialize", "research", false},
		{"implement-only", "implement", "test", false},
		{"test-and-debug", "test", "debug", true},
		{"test-and-debug", "debug", "test", true},
		{"test-and-debug", "test", "document", false},
		{"full-implementation", "test", "debug", true},
		{"full-implementation", "debug", "document", true},
	}
	for _, tt := range tests {
		_, err := m.Check(tt.scope, tt.from, tt.to, m.Scopes[tt.scope].Terminal)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: %s -> %s: want allowed, got %v", tt.scope, tt.from, tt.to, err)
		case !tt.ok && (fail.Code(err) != fail.Refused || !strings.Contains(err.Error(), "not on the route of scope "+tt.scope+": ")):
			t.Errorf("%s: %s -> %s: want refused naming the scope, got %v", tt.scope, tt.from, tt.to, err)
		}
	}
	_, err := m.Check("research-only", "initialize", "implement", "research")
	if want := "state implement is not on the route of scope research-only: initialize -> research; start a new workflow with a scope that includes implement"; err == nil || err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	_, err = m.Check("test-and-debug", "test", "document", "complete")
	if err == nil || !strings.Contains(err.Error(), "initialize -> implement -> test -> complete (debug after a failed test)") {
		t.Errorf("message without the recovery loop: %v", err)
	}
	if _, err := m.Check("no-such-scope", "initialize", "research", "research"); fail.Code(err) != fail.Invalid {
		t.Errorf("unknown scope: %v", err)
	}
}

func TestNextWalksEveryRoute(t *testing.T) {
	m := Default()
	for _, name := range m.ScopeNames() {
		s := m.Scopes[name]
		var walked []string
		cur := m.Initial
		for cur != "" {
			walked = append(walked, cur)
			next, err := m.Next(s, cur, false, "")
			if err != nil {
				t.Fatalf("%s at %s: %v", name, cur, err)
			}
			cur = next
		}
		if !slices.Equal(walked, s.Route) {
			t.Errorf("%s walked %v, want %v", name, walked, s.Route)
		}
	}
}

func TestNextRecovery(t *testing.T) {
	m := Default()
	full := m.Scopes["full-implementation"]
	tests := []struct {
		cur, failedState string
		failed           bool
		want             string
		code             int
	}{
		{"test", "", true, "debug", 0},
		{"debug", "test", false, "test", 0},
		{"plan", "", true, "", fail.Refused},
		{"debug", "", false, "", fail.Unexpected},
	}
	for _, tt := range tests {
		got, err := m.Next(full, tt.cur, tt.failed, tt.failedState)
		if got != tt.want || fail.Code(err) != tt.code {
			t.Errorf("Next(%s, failed=%v, from %q) = %q, %v; want %q code %d", tt.cur, tt.failed, tt.failedState, got, err, tt.want, tt.code)
		}
	}
	// debug-only ends at debug: debug is on its route, so it is terminal.
	if got, _ := m.Next(m.Scopes["debug-only"], "debug", false, ""); got != "" {
		t.Errorf("debug-only at debug: got %q, want done", got)
	}
}

const minimal = `{"name":"review","initial":"start","transitions":{"start":["review"],"review":["done","start"],"done":[]},"scopes":{"quick":{"terminal":"done","route":["start","review","done"]}}}`

// gated is the minimal machine with gates.
func gated(gates string) string { return strings.TrimSuffix(minimal, "}") + `,"gates":` + gates + `}` }

func TestParse(t *testing.T) {
	tests := []struct {
		name, json string
		ok         bool
	}{
		{"minimal", minimal, true},
		{"unknown field", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"]}},"extra":1}`, false},
		{"not json", `{`, false},
		{"dangling transition", `{"name":"x","initial":"a","transitions":{"a":["b"]},"scopes":{"s":{"terminal":"a","route":["a"]}}}`, false},
		{"route skips", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":["c"],"c":[]},"scopes":{"s":{"terminal":"c","route":["a","c"]}}}`, false},
		{"no scopes", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{}}`, false},
		{"bad state name", `{"name":"x","initial":"A b","transitions":{"A b":[]},"scopes":{"s":{"terminal":"A b","route":["A b"]}}}`, false},
		{"one-way recovery", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":[]},"scopes":{"s":{"terminal":"b","route":["a","b"]}},"recovery":{"a":"b"}}`, false},
		{"trailing space", minimal + " \n\t\n", true},
		{"a second object after it", minimal + `{}`, false},
		{"a stray brace after it", minimal + "\n}", false},
		{"garbage after it", minimal + " x", false},
		{"gate as a message", gated(`{"review":"Approve the draft"}`), true},
		{"gate as an object", gated(`{"done":{"message":"Sign off","reject_to":"start"}}`), true},
		{"gate on an unknown state", gated(`{"deploy":"x"}`), false},
		{"gate on the initial state", gated(`{"start":"x"}`), false},
		{"gate rejecting to an unknown state", gated(`{"done":{"message":"x","reject_to":"nowhere"}}`), false},
		{"gate with an unknown field", gated(`{"done":{"message":"x","to":"start"}}`), false},
		{"gate that is a number", gated(`{"done":1}`), false},
		{"engine steps", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"]}},"engine":"steps"}`, true},
		{"engine workflow", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"]}},"engine":"workflow"}`, true},
		{"an unknown engine", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"]}},"engine":"fast"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if tt.ok && err != nil {
				t.Fatalf("want ok, got %v", err)
			}
			if !tt.ok && fail.Code(err) != fail.Invalid {
				t.Fatalf("want invalid (4), got %v", err)
			}
		})
	}
}

func TestGates(t *testing.T) {
	m, err := Parse([]byte(gated(`{"review":"Approve the draft","done":{"message":"Sign off","reject_to":"start"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Gate{"review": {Message: "Approve the draft"}, "done": {Message: "Sign off", RejectTo: "start"}}
	if !maps.Equal(m.Gates, want) {
		t.Errorf("gates %v, want %v", m.Gates, want)
	}
	for _, tt := range []struct {
		spec, state string
		gate        Gate
		err         bool
	}{
		{"implement", "implement", Gate{Message: "Approve entering implement"}, false},
		{"implement=Approve the plan, then build", "implement", Gate{Message: "Approve the plan, then build"}, false},
		{" test = Check the fixtures ", "test", Gate{Message: "Check the fixtures"}, false},
		{"=no state", "", Gate{}, true},
		{"Not A State", "", Gate{}, true},
	} {
		state, g, err := ParseGate(tt.spec)
		if tt.err {
			if fail.Code(err) != fail.Usage {
				t.Errorf("ParseGate(%q): err %v, want a usage error", tt.spec, err)
			}
			continue
		}
		if err != nil || state != tt.state || g != tt.gate {
			t.Errorf("ParseGate(%q) = %q, %+v, %v; want %q, %+v", tt.spec, state, g, err, tt.state, tt.gate)
		}
	}
	if err := Default().CheckGates(map[string]Gate{"initialize": {Message: "x"}}); fail.Code(err) != fail.Invalid {
		t.Errorf("a gate on the initial state: %v, want invalid", err)
	}
}
