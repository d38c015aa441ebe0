package orchestrate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
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
		{"implement", nil, "phase_1@1:Build login now>summaries/001_phase_1.md"},
		{"implement", func(f *Facts) { f.Plan = diamond },
			"phase_1@1:Phase 1: Foundation>summaries/001_phase_1.md phase_2@2:Phase 2: Core>summaries/002_phase_2.md " +
				"phase_3@2:Phase 3>summaries/003_phase_3.md phase_4@3:Phase 4: Integration>summaries/004_phase_4.md"},
		{"test", nil, "test_unit_r1@1:unit tests>tests/r1_unit_results.json"},
		{"test", func(f *Facts) { f.Plan, f.Loop = diamond, testLoop(1, 1) },
			"test_unit_r2@1:unit tests>tests/r2_unit_results.json test_integration_r2@1:integration tests>tests/r2_integration_results.json"},
		{"debug", func(f *Facts) { f.Loop = testLoop(0, 0) }, "debug_1@1:Build login now>debug/001_debug.md"},
		{"debug", func(f *Facts) {
			f.Loop, f.Failures = testLoop(2, 1), "1 failing\ntests"
		},
			"debug_2@1:1 failing tests>debug/002_debug.md"},
		{"document", nil, "document_1@1:Build login now>summaries/workflow_summary.md"},
	}
	for _, tt := range tests {
		f := base
		if tt.f != nil {
			tt.f(&f)
		}
		if tt.state == "test" || tt.state == "debug" {
			f.Loop.Checked, f.Loop.Recovery = "test", "debug"
		}
		ws, err := Workers(role(tt.state), f)
		if err != nil {
			t.Fatalf("%s: %v", tt.state, err)
		}
		if got := ids(ws); got != tt.want {
			t.Errorf("Workers(%s):\n got %s\nwant %s", tt.state, got, tt.want)
		}
	}
	cycle := []supervisor.Phase{{Number: 1, Dependencies: []int{2}}, {Number: 2, Dependencies: []int{1}}}
	if _, err := Workers(role("implement"), Facts{Plan: cycle}); fail.Code(err) != fail.Invalid {
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
		"implement": "/p/s/summaries/001_phase_1.v3.md",
		"test":      "/p/s/tests/r1_unit_results.v3.json",
		"document":  "/p/s/summaries/workflow_summary.v3.md",
	} {
		ws, err := Workers(role(state), f)
		if err != nil || len(ws) != 1 || ws[0].Output != want {
			t.Errorf("Workers(%s) = %+v, %v; want one writing %s", state, ws, err, want)
		}
	}
	if ws, _ := Workers(role("plan"), Facts{SpecDir: "/p/s", Description: "Add login", Version: 1}); ws[0].Output != "/p/s/plans/001_add_login.md" || ws[0].ID != "plan_1" {
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
	research, implement, test, plan := role("research"), role("implement"), role("test"), role("plan")
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
		if got := Supervise(tt.role, n(tt.workers), tt.sequential); got != tt.want {
			t.Errorf("Supervise(%s, %d workers, sequential %v) = %v; want %v", tt.role.State, tt.workers, tt.sequential, got, tt.want)
		}
	}
}

// testLoop is the default machine's test/debug loop with retries spent
// and debug runs done.
func testLoop(retries, done int) Loop {
	l := Loop{Checked: "test", Recovery: "debug", Retries: retries, RecoveryDone: done}
	if retries > 0 {
		l.FailedState = "test"
	}
	return l
}

// TestLoop walks the check-and-recover loop: run 1 fails, recovery 1, run
// 2 fails, recovery 2, run 3; a state outside it runs once.
func TestLoop(t *testing.T) {
	tests := []struct {
		loop          Loop
		run, recovery int
		owes          bool
	}{
		{testLoop(0, 0), 1, 1, false},
		{testLoop(1, 0), 1, 1, true},
		{testLoop(1, 1), 2, 1, false},
		{testLoop(2, 1), 2, 2, true},
		{testLoop(2, 2), 3, 2, false},
		{Loop{Checked: "test", Recovery: "debug", FailedState: "research", Retries: 1}, 2, 1, false},
	}
	for _, tt := range tests {
		if run, rec, owes := tt.loop.RunOf("test"), tt.loop.RunOf("debug"), tt.loop.OwesRecovery(); run != tt.run || rec != tt.recovery || owes != tt.owes {
			t.Errorf("%+v: run %d, recovery %d, owes %v; want %d, %d, %v", tt.loop, run, rec, owes, tt.run, tt.recovery, tt.owes)
		}
		if got := tt.loop.RunOf("plan"); got != 1 {
			t.Errorf("%+v: RunOf(plan) = %d, want 1", tt.loop, got)
		}
	}
}

// TestWorkersOfADefinition: a user's fan-outs, a fixed list and the items
// of the request, named by their templates; workers that would share a
// file are an error naming both.
func TestWorkersOfADefinition(t *testing.T) {
	lenses := Role{State: "review", Work: machine.Work{Each: machine.Each{Source: machine.SourceItems, Items: []machine.Item{{Name: "Security"}, {Name: "Speed"}}},
		Output: "reviews/{n:2}_{item}.md"}}
	files := Role{State: "check", Work: machine.Work{Each: machine.Each{Source: machine.SourceArguments}, ID: "file_{n}", Label: "File {text}", Output: "checks/{item}.json"}}
	f := Facts{SpecDir: "/s", Description: "a.go, lib/b.go"}
	for _, tt := range []struct {
		r    Role
		f    Facts
		want string
	}{
		{lenses, f, "review_1@1:Security>reviews/01_security.md review_2@1:Speed>reviews/02_speed.md"},
		{files, f, "file_1@1:File a.go>checks/a_go.json file_2@1:File lib/b.go>checks/lib_b_go.json"},
		{files, Facts{SpecDir: "/s", Description: "x.go y.go"}, "file_1@1:File x.go>checks/x_go.json file_2@1:File y.go>checks/y_go.json"},
	} {
		ws, err := Workers(tt.r, tt.f)
		if err != nil || ids(ws) != tt.want {
			t.Errorf("Workers(%s, %q):\n got %s, %v\nwant %s", tt.r.State, tt.f.Description, ids(ws), err, tt.want)
		}
	}
	if _, err := Workers(files, Facts{SpecDir: "/s", Description: "a.go a-go"}); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "workers 1 (a.go) and 2 (a-go) get the same output /s/checks/a_go.json") {
		t.Errorf("two workers writing one file: %v", err)
	}
}

func TestArgumentItems(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"a.go b.go", []string{"a.go", "b.go"}},
		{"a b, c d", []string{"a b", "c d"}},
		{"one\ntwo words\n\n", []string{"one", "two words"}},
		{"  ", nil},
	} {
		if got := ArgumentItems(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ArgumentItems(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWorkerIn: the worker an agent's prompt is for, found by its
// artifact's path, absolute or project-relative; a " to:" line wins.
// Many workers and a long prompt cost one pass, not their product.
func TestWorkerIn(t *testing.T) {
	const specDir, rel = "/p/.flowstate/specs/w1", ".flowstate/specs/w1"
	ws, err := Workers(role("research"), Facts{SpecDir: specDir, Topics: []string{"Alpha", "Beta", "Gamma"}})
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
	// More workers than a state may have (limit.MaxWorkers): workerIn
	// stays fast whatever the list, so the list is made here, as Workers
	// would name them.
	many := make([]Worker, 200_000)
	for i := range many {
		many[i] = Worker{ID: fmt.Sprintf("research_%d", i+1), Output: filepath.Join(specDir, fmt.Sprintf("reports/%03d_topic_%d.md", i+1, i)), Batch: 1}
	}
	long := strings.Repeat("x "+rel+"/reports/\n", 50_000) + "Write to: " + many[len(many)-1].Output + "\n"
	if got := workerIn(many, specDir, rel, long); got != many[len(many)-1].ID {
		t.Errorf("among %d workers: %q", len(many), got)
	}
}

// TestWorkersCapped: a fan-out of more than limit.MaxWorkers items (one
// per word of a long request) is refused, naming the state and the
// count; limit.MaxWorkers items are not.
func TestWorkersCapped(t *testing.T) {
	files := Role{State: "check", Work: machine.Work{Each: machine.Each{Source: machine.SourceArguments}, ID: "file_{n}", Output: "checks/{n}.json"}}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", i)
		}
		return strings.Join(w, " ")
	}
	if ws, err := Workers(files, Facts{SpecDir: "/s", Description: words(limit.MaxWorkers)}); err != nil || len(ws) != limit.MaxWorkers {
		t.Errorf("%d items: %d workers, %v", limit.MaxWorkers, len(ws), err)
	}
	_, err := Workers(files, Facts{SpecDir: "/s", Description: words(limit.MaxWorkers + 1)})
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), fmt.Sprintf("state check: %d workers", limit.MaxWorkers+1)) {
		t.Errorf("%d items: %v, want exit 4 naming the state and the count", limit.MaxWorkers+1, err)
	}
}
