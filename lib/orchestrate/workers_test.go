package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

var diamond = []supervisor.Phase{
	{Number: 1, Name: "Foundation", Dependencies: []int{}},
	{Number: 2, Name: "Core", Dependencies: []int{1}},
	{Number: 3, Name: "", Dependencies: []int{1}},
	{Number: 4, Name: "Integration", Dependencies: []int{2, 3}},
}

func ids(ws []Worker) string {
	var s []string
	for _, w := range ws {
		s = append(s, fmt.Sprintf("%s@%d:%s>%s", w.ID, w.Batch, w.Label, strings.TrimPrefix(w.Output, "/s/")))
	}
	return strings.Join(s, " ")
}

func TestWorkers(t *testing.T) {
	base := Facts{SpecDir: "/s", Description: "Build\nlogin  now"}
	tests := []struct {
		state string
		f     func(f *Facts)
		want  string
	}{
		{"research", func(f *Facts) { f.Topics = []string{"Auth patterns", "Session/Storage"} },
			"research_1@1:Auth patterns>reports/001_auth_patterns.md research_2@1:Session/Storage>reports/002_session_storage.md"},
		{"research", nil, "research_1@1:Build login now>reports/001_build_login_now.md"},
		{"plan", nil, "plan_1@1:Build login now>plans/001_build_login_now.md"},
		{"implement", nil, "implement_1@1:Build login now>summaries/001_implementation.md"},
		{"implement", func(f *Facts) { f.Plan = diamond },
			"phase_1@1:Phase 1: Foundation>summaries/001_phase_1.md phase_2@2:Phase 2: Core>summaries/002_phase_2.md " +
				"phase_3@2:Phase 3>summaries/003_phase_3.md phase_4@3:Phase 4: Integration>summaries/004_phase_4.md"},
		{"test", nil, "test_unit_r1@1:unit tests>tests/r1_unit_results.json"},
		{"test", func(f *Facts) { f.Plan, f.Loop = diamond, Loop{Retries: 1, DebugDone: 1, FailedState: "test"} },
			"test_unit_r2@1:unit tests>tests/r2_unit_results.json test_integration_r2@1:integration tests>tests/r2_integration_results.json"},
		{"debug", nil, "debug_1@1:Build login now>debug/001_debug.md"},
		{"debug", func(f *Facts) {
			f.Loop, f.Failures = Loop{Retries: 2, DebugDone: 1, FailedState: "test"}, "1 failing\ntests"
		},
			"debug_2@1:1 failing tests>debug/002_debug.md"},
		{"document", nil, "document_1@1:Build login now>summaries/workflow_summary.md"},
		{"initialize", nil, ""},
		{"complete", nil, ""},
	}
	for _, tt := range tests {
		f := base
		if tt.f != nil {
			tt.f(&f)
		}
		ws, err := Workers(tt.state, f)
		if err != nil {
			t.Fatalf("%s: %v", tt.state, err)
		}
		if got := ids(ws); got != tt.want {
			t.Errorf("Workers(%s):\n got %s\nwant %s", tt.state, got, tt.want)
		}
	}
	cycle := []supervisor.Phase{{Number: 1, Dependencies: []int{2}}, {Number: 2, Dependencies: []int{1}}}
	if _, err := Workers("implement", Facts{Plan: cycle}); fail.Code(err) != fail.Invalid {
		t.Errorf("a plan with a cycle: got %v, want invalid data", err)
	}
}

// TestWorkersAfterARewind: after a rewind, workers write new files beside
// those of the work taken back; ids stay, so records still match.
func TestWorkersAfterARewind(t *testing.T) {
	f := Facts{SpecDir: "/p/s", Description: "Add login", Version: 3}
	for state, want := range map[string]string{
		"research":  "/p/s/reports/001_add_login.v3.md",
		"plan":      "/p/s/plans/001_add_login.v3.md",
		"implement": "/p/s/summaries/001_implementation.v3.md",
		"test":      "/p/s/tests/r1_unit_results.v3.json",
		"document":  "/p/s/summaries/workflow_summary.v3.md",
	} {
		ws, err := Workers(state, f)
		if err != nil || len(ws) != 1 || ws[0].Output != want {
			t.Errorf("Workers(%s) = %+v, %v; want one writing %s", state, ws, err, want)
		}
	}
	if ws, _ := Workers("plan", Facts{SpecDir: "/p/s", Description: "Add login", Version: 1}); ws[0].Output != "/p/s/plans/001_add_login.md" || ws[0].ID != PlanID {
		t.Errorf("version 1 writes %s as %s, want the plain name", ws[0].Output, ws[0].ID)
	}
}

func TestPending(t *testing.T) {
	ws := []Worker{{ID: "a", Batch: 1}, {ID: "b", Batch: 1}, {ID: "c", Batch: 2}, {ID: "d", Batch: 2}, {ID: "e", Batch: 3}}
	tests := []struct {
		done       string
		sequential bool
		want       string
		remaining  int
	}{
		{"", false, "a b", 5},
		{"", true, "a", 5},
		{"a", false, "b", 4},
		{"a b", false, "c d", 3},
		{"a b d", true, "c", 2},
		{"b", false, "a", 4}, // a wave waits for its stragglers
		{"a b c d e", false, "", 0},
	}
	for _, tt := range tests {
		done := func(id string) bool { return strings.Contains(" "+tt.done+" ", " "+id+" ") }
		batch, remaining := Pending(ws, done, tt.sequential)
		var got []string
		for _, w := range batch {
			got = append(got, w.ID)
		}
		if strings.Join(got, " ") != tt.want || remaining != tt.remaining {
			t.Errorf("Pending(done %q, sequential %v) = %v, %d; want %s, %d", tt.done, tt.sequential, got, remaining, tt.want, tt.remaining)
		}
	}
}

func TestSupervise(t *testing.T) {
	n := func(k int) []Worker { return make([]Worker, k) }
	research, _ := RoleOf("research")
	implement, _ := RoleOf("implement")
	test, _ := RoleOf("test")
	plan, _ := RoleOf("plan")
	tests := []struct {
		role       Role
		workers    int
		sequential bool
		want       bool
	}{
		{research, 3, false, false},
		{research, 4, false, true},
		{research, 4, true, false},
		{implement, 2, false, false},
		{implement, 3, false, true},
		{test, 1, false, false},
		{test, 2, false, true},
		{plan, 9, false, false},
	}
	for _, tt := range tests {
		if got, err := Supervise(tt.role, n(tt.workers), tt.sequential); err != nil || got != tt.want {
			t.Errorf("Supervise(%s, %d workers, sequential %v) = %v, %v; want %v", tt.role.State, tt.workers, tt.sequential, got, err, tt.want)
		}
	}
}

// TestLoop walks the test/debug loop: run 1 fails, debug 1, run 2 fails,
// debug 2, run 3.
func TestLoop(t *testing.T) {
	tests := []struct {
		loop         Loop
		run, attempt int
		owesDebug    bool
	}{
		{Loop{}, 1, 1, false},
		{Loop{FailedState: "test", Retries: 1}, 1, 1, true},
		{Loop{FailedState: "test", Retries: 1, DebugDone: 1}, 2, 1, false},
		{Loop{FailedState: "test", Retries: 2, DebugDone: 1}, 2, 2, true},
		{Loop{FailedState: "test", Retries: 2, DebugDone: 2}, 3, 2, false},
		{Loop{FailedState: "research", Retries: 1}, 2, 1, false},
	}
	for _, tt := range tests {
		if run, attempt, owes := tt.loop.TestRun(), tt.loop.DebugAttempt(), tt.loop.OwesDebug(); run != tt.run || attempt != tt.attempt || owes != tt.owesDebug {
			t.Errorf("%+v: run %d, attempt %d, owes %v; want %d, %d, %v", tt.loop, run, attempt, owes, tt.run, tt.attempt, tt.owesDebug)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Auth Patterns (JWT/OAuth2)!": "auth_patterns_jwt_oauth2",
		"$(rm -rf /)":                 "rm_rf",
		"日本語":                         "untitled",
		strings.Repeat("ab ", 30):     "ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_a",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWorkerIn: the worker an agent's prompt is for, found by its
// artifact's path, absolute or project-relative; a " to:" line wins.
// Many workers and a long prompt cost one pass, not their product.
func TestWorkerIn(t *testing.T) {
	const specDir, rel = "/p/.flowstate/specs/w1", ".flowstate/specs/w1"
	ws, err := Workers("research", Facts{SpecDir: specDir, Topics: []string{"Alpha", "Beta", "Gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ prompt, want string }{
		{"Write your report to: /p/.flowstate/specs/w1/reports/002_beta.md\n", "research_2"},
		{"Read .flowstate/specs/w1/reports/001_alpha.md.\n", "research_1"},
		{"See /p/.flowstate/specs/w1/reports/001_alpha.md\nWrite to: `.flowstate/specs/w1/reports/003_gamma.md`\n", "research_3"},
		{"Earlier: /p/.flowstate/specs/w1/reports/003_gamma.md and .flowstate/specs/w1/reports/002_beta.md\n", "research_2"},
		{"Write to: /p/.flowstate/specs/w1/reports/009_other.md\n", ""},
		{"Write to: /p/.flowstate/specs/w2/reports/001_alpha.md\n", ""},
		{"", ""},
	} {
		if got := workerIn(ws, specDir, rel, tt.prompt); got != tt.want {
			t.Errorf("workerIn(%q) = %q, want %q", tt.prompt, got, tt.want)
		}
	}
	topics := make([]string, 200_000)
	for i := range topics {
		topics[i] = fmt.Sprintf("topic %d", i)
	}
	many, err := Workers("research", Facts{SpecDir: specDir, Topics: topics})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x "+rel+"/reports/\n", 50_000) + "Write to: " + many[len(many)-1].Output + "\n"
	if got := workerIn(many, specDir, rel, long); got != many[len(many)-1].ID {
		t.Errorf("among %d workers: %q", len(many), got)
	}
}
