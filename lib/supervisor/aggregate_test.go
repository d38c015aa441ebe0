package supervisor

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

var researchReports = []struct{ id, topic, path string }{
	{"research_specialist_1", "authentication patterns", "reports/001_authentication_patterns.md"},
	{"research_specialist_2", "authorization patterns", "reports/002_authorization_patterns.md"},
	{"research_specialist_3", "session management", "reports/003_session_management.md"},
	{"research_specialist_4", "password security", "reports/004_password_security.md"},
}

// researchInputs returns four completed research records without metadata
// and the reports they point to, keyed by output_path.
func researchInputs(t *testing.T) ([]Record, inputs) {
	in := inputs{Outputs: map[string][]byte{}}
	var recs []Record
	for i, r := range researchReports {
		p := ".claude/specs/042_auth/" + r.path
		in.Outputs[p] = fixture(t, r.path)
		recs = append(recs, Record{WorkerID: r.id, Topic: r.topic, Status: checkpoint.WorkerCompleted, OutputPath: p, DurationMs: int64(10000 + 500*i)})
	}
	return recs, in
}

func TestAggregateResearchContextReduction(t *testing.T) {
	recs, in := researchInputs(t)
	out, err := aggregate(Research, recs, in)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, b := range in.Outputs {
		total += len(b)
	}
	ratio := float64(len(out)) / float64(total)
	t.Logf("context reduction: aggregate %d bytes / reports %d bytes = %.2f%% (%.1f%% reduction)", len(out), total, 100*ratio, 100*(1-ratio))
	if ratio > 0.05 {
		t.Errorf("aggregate is %.2f%% of the reports, more than 5%%:\n%s", 100*ratio, out)
	}
	var a ResearchAggregate
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	if a.ContextTokens != len(out)/4 {
		t.Errorf("context_tokens %d, want len/4 = %d", a.ContextTokens, len(out)/4)
	}
	if a.TopicsResearched != 4 || len(a.ReportsCreated) != 4 || a.TotalDurationMs != 10000+10500+11000+11500 {
		t.Errorf("counts: %+v", a)
	}
	if n := wordCount(a.Summary); n > AggregateSummaryWords {
		t.Errorf("summary of %d words", n)
	}
	for _, r := range researchReports {
		if !strings.Contains(a.Summary, r.topic+":") {
			t.Errorf("the summary should cover %q: %s", r.topic, a.Summary)
		}
	}
	if len(a.KeyFindings) < 4 || len(a.KeyFindings) > MaxFindings {
		t.Errorf("%d findings", len(a.KeyFindings))
	}
	if strings.Contains(string(out), "\n") {
		t.Error("the aggregate must be one line, to follow SUPERVISOR_COMPLETE:")
	}
}

// Metadata given, no report files needed (docs/supervisors.md).
func TestAggregateResearchSeedExample(t *testing.T) {
	recs, err := ParseRecords([]byte(`[
	  {"worker_id": "research_specialist_1", "topic": "authentication patterns", "status": "completed",
	   "output_path": "/r/001.md", "duration_ms": 12000,
	   "metadata": {"title": "Authentication Patterns Research", "summary": "Analysis of session-based auth, JWT tokens, OAuth2 flows with security trade-offs",
	     "key_findings": ["Session-based auth suitable for traditional web apps", "JWT tokens enable stateless authentication"]}},
	  {"worker_id": "research_specialist_2", "topic": "authorization patterns", "status": "completed",
	   "output_path": "/r/002.md", "duration_ms": 10500,
	   "metadata": {"summary": "RBAC, ABAC, policy-based access control comparison", "key_findings": ["RBAC simplest", "ABAC fine-grained", "Policies central", "fourth is dropped"]}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := aggregateResearch(recs, inputs{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Session-based auth suitable for traditional web apps", "JWT tokens enable stateless authentication", "RBAC simplest", "ABAC fine-grained", "Policies central"}
	if !reflect.DeepEqual(a.KeyFindings, want) {
		t.Errorf("findings %q", a.KeyFindings)
	}
	wantSummary := "authentication patterns: Analysis of session-based auth, JWT tokens, OAuth2 flows with security trade-offs. authorization patterns: RBAC, ABAC, policy-based access control comparison."
	if a.Summary != wantSummary {
		t.Errorf("summary\n got %q\nwant %q", a.Summary, wantSummary)
	}
	if a.TotalDurationMs != 22500 || !reflect.DeepEqual(a.ReportsCreated, []string{"/r/001.md", "/r/002.md"}) {
		t.Errorf("%+v", a)
	}
}

func TestAggregatePartialFailure(t *testing.T) {
	recs, in := researchInputs(t)
	recs[1] = Record{WorkerID: "research_specialist_2", Topic: "authorization patterns", Status: checkpoint.WorkerFailed, Error: "timeout after 300s"}
	recs[2].OutputPath = "/gone.md" // completed, but its report vanished
	recs = append(recs, Record{WorkerID: "research_specialist_5", Topic: "audit logging", Status: checkpoint.WorkerRunning})
	a, err := aggregateResearch(recs, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Failure{
		{WorkerID: "research_specialist_2", Topic: "authorization patterns", Error: "timeout after 300s"},
		{WorkerID: "research_specialist_3", Topic: "session management", Error: "output /gone.md is missing or unreadable"},
		{WorkerID: "research_specialist_5", Topic: "audit logging", Error: "no result recorded: the worker is still running"},
	}
	if !reflect.DeepEqual(a.PartialFailures, want) {
		t.Errorf("partial failures\n got %+v\nwant %+v", a.PartialFailures, want)
	}
	if a.TopicsResearched != 2 || len(a.ReportsCreated) != 2 {
		t.Errorf("only the two delivered topics count: %+v", a)
	}
}

func TestAggregateAllFailed(t *testing.T) {
	recs := []Record{
		{WorkerID: "w1", Topic: "a", Status: checkpoint.WorkerFailed, Error: "model refused"},
		{WorkerID: "w2", Topic: "b", Status: checkpoint.WorkerCompleted, OutputPath: "/r.md"},
		{WorkerID: "w3", Topic: "c", Status: checkpoint.WorkerFailed},
	}
	in := inputs{Outputs: map[string][]byte{"/r.md": fixture(t, "reports/no_h1.md")}}
	_, err := aggregate(Research, recs, in)
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FailedError, got %v", err)
	}
	wantCode(t, err, fail.Refused)
	line, ok := strings.CutPrefix(err.Error(), "SUPERVISOR_FAILED: ")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("the message must be one SUPERVISOR_FAILED line: %q", err.Error())
	}
	var body struct {
		Kind     string
		Error    string
		Failures []Failure
	}
	if err := json.Unmarshal([]byte(line), &body); err != nil {
		t.Fatal(err)
	}
	if body.Kind != "research" || body.Error != "all 3 research workers failed" || len(body.Failures) != 3 {
		t.Errorf("%+v", body)
	}
	if !strings.Contains(body.Failures[1].Error, "not a report") || body.Failures[2].Error != "failed without an error message" {
		t.Errorf("failures should say why: %+v", body.Failures)
	}
	// The failed-signal line parses back as a signal.
	sigs, err := ParseSignals([]byte(fe.Error()))
	if err != nil || sigs[0].Signal != SupervisorFailed {
		t.Errorf("ParseSignals(FailedError) = %v, %v", sigs, err)
	}
}

func TestAggregateRejects(t *testing.T) {
	_, err := aggregate(Research, nil, inputs{})
	wantCode(t, err, fail.Invalid)
	_, err = aggregate("docs", []Record{{WorkerID: "w", Status: checkpoint.WorkerCompleted}}, inputs{})
	wantCode(t, err, fail.Usage)
	_, err = aggregate(Testing, []Record{{WorkerID: "w", Status: "done"}}, inputs{})
	wantCode(t, err, fail.Invalid)
}

func TestAggregateErrorIsCapped(t *testing.T) {
	recs := []Record{
		{WorkerID: "w1", Status: checkpoint.WorkerFailed, Error: strings.Repeat("stack frame ", 500)},
		{WorkerID: "w2", Status: checkpoint.WorkerCompleted, Metadata: json.RawMessage(`{"summary":"s","key_findings":["f"]}`)},
	}
	a, err := aggregateResearch(recs, inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if n := wordCount(a.PartialFailures[0].Error); n != ErrorWords {
		t.Errorf("error of %d words, want %d", n, ErrorWords)
	}
}

// Many workers with long findings: the budget trims findings, then words.
func TestAggregateResearchBudget(t *testing.T) {
	long := strings.Repeat("finding words ", 10)
	var recs []Record
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"} {
		meta, _ := json.Marshal(map[string]any{"summary": strings.Repeat(id+" ", 60), "key_findings": []string{id + " " + long, id + " 2 " + long, id + " 3 " + long}})
		recs = append(recs, Record{WorkerID: "worker_" + id, Topic: "topic " + id, Status: checkpoint.WorkerCompleted, OutputPath: ".claude/specs/042/reports/" + id + ".md", Metadata: meta})
	}
	a, err := aggregateResearch(recs, inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if a.ContextTokens > ContextBudget {
		t.Errorf("context_tokens %d over the budget %d", a.ContextTokens, ContextBudget)
	}
	if len(a.ReportsCreated) != 16 {
		t.Error("paths are never trimmed")
	}
}

func TestPickFindingsRoundRobin(t *testing.T) {
	lists := [][]string{{"a1", "a2", "a3", "a4"}, {"b1", "A1"}, {}, {"c1", "c2", "c3"}}
	got := grouped(pickFindings(lists))
	want := []string{"a1", "a2", "a3", "b1", "c1", "c2", "c3"} // "A1" repeats "a1"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var many [][]string
	for i := 0; i < 8; i++ {
		many = append(many, []string{string(rune('a'+i)) + "1", string(rune('a'+i)) + "2", string(rune('a'+i)) + "3"})
	}
	picks := pickFindings(many)
	if len(picks) != MaxFindings {
		t.Fatalf("%d picks", len(picks))
	}
	for i, p := range picks[:8] {
		if p.w != i {
			t.Errorf("every worker gets a first finding before any gets a second: %v", picks)
		}
	}
}

func TestAggregateImplementation(t *testing.T) {
	recs, err := ParseRecords([]byte(`[
	  {"worker_id": "implementation_executor_1", "track": "frontend", "status": "completed", "output_path": "s/frontend.md", "duration_ms": 25000},
	  {"worker_id": "implementation_executor_2", "track": "backend", "status": "completed", "output_path": "s/backend.md", "duration_ms": 30000,
	   "metadata": {"total_lines": 680}},
	  {"worker_id": "implementation_executor_3", "track": "testing", "status": "completed", "duration_ms": 15000,
	   "files_modified": ["tests/integration/auth.test.ts"], "metadata": {"summary": "12 integration cases", "total_lines": 320, "test_cases": 12}},
	  {"worker_id": "implementation_executor_4", "track": "docs", "status": "failed", "error": "no write permission"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{"src/components/LoginForm.tsx": 200, "src/components/RegisterForm.tsx": 250, "src/hooks/useFormValidation.ts": 40}
	in := inputs{
		Outputs:   map[string][]byte{"s/frontend.md": fixture(t, "summaries/frontend.md"), "s/backend.md": fixture(t, "summaries/backend.md")},
		FileLines: func(p string) (int, bool) { n, ok := lines[p]; return n, ok },
	}
	a, err := aggregateImplementation(recs, in)
	if err != nil {
		t.Fatal(err)
	}
	// 3 frontend files + 2 backend (one shared with frontend) + 1 test file.
	if a.TracksCompleted != 3 || a.FilesModified != 6 || a.TotalLines != 490+680+320 {
		t.Errorf("counts: %+v", a)
	}
	if a.ParallelDurationMs != 30000 || a.SequentialDurationMs != 70000 || a.TimeSavingsPercent != 57.1 {
		t.Errorf("durations: %+v", a)
	}
	if !strings.HasPrefix(a.Summary, "Completed 3 of 4 tracks in parallel: 6 files modified, 1490 lines; 57.1% time saved") ||
		!strings.Contains(a.Summary, "frontend: Added the login") || wordCount(a.Summary) > AggregateSummaryWords {
		t.Errorf("summary %q", a.Summary)
	}
	if len(a.PartialFailures) != 1 || a.PartialFailures[0].Track != "docs" {
		t.Errorf("partial failures %+v", a.PartialFailures)
	}
}

func TestAggregateTesting(t *testing.T) {
	cov := 90.0
	meta, _ := json.Marshal(map[string]any{"total_tests": 4, "tests_passed": 4, "tests_failed": 0, "coverage_percent": cov})
	recs := []Record{
		{WorkerID: "unit", Stage: "execution", Status: checkpoint.WorkerCompleted, OutputPath: "unit.json", DurationMs: 8000},
		{WorkerID: "integration", Stage: "execution", Status: checkpoint.WorkerCompleted, OutputPath: "integration.json", DurationMs: 12000},
		{WorkerID: "e2e", Stage: "e2e", Status: checkpoint.WorkerCompleted, OutputPath: "e2e.json", DurationMs: 5000},
		{WorkerID: "lint", Stage: "e2e", Status: checkpoint.WorkerCompleted, Metadata: meta, DurationMs: 1000},
		{WorkerID: "bad", Stage: "e2e", Status: checkpoint.WorkerCompleted, OutputPath: "inconsistent.json"},
	}
	in := inputs{Outputs: map[string][]byte{}}
	for _, n := range []string{"unit", "integration", "e2e", "inconsistent"} {
		in.Outputs[n+".json"] = fixture(t, "results/"+n+".json")
	}
	a, err := aggregateTesting(recs, in)
	if err != nil {
		t.Fatal(err)
	}
	if a.TotalTests != 32 || a.TestsPassed != 30 || a.TestsFailed != 2 || a.CoveragePercent == nil || *a.CoveragePercent != 90 {
		t.Errorf("counts: %+v", a)
	}
	if a.TotalDurationMs != 12000+5000 {
		t.Errorf("stages run in sequence, workers of a stage in parallel: %d", a.TotalDurationMs)
	}
	want := "32 tests: 30 passed, 2 failed; coverage 90.0%. Failing: TestLogin (expected 200, got 500). TestRefreshRotation (refresh token reused without revocation)."
	if a.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", a.Summary, want)
	}
	if len(a.PartialFailures) != 1 || !strings.Contains(a.PartialFailures[0].Error, "exceed total_tests") {
		t.Errorf("inconsistent results are a worker failure: %+v", a.PartialFailures)
	}
}

func TestParseTestResultsNamesTheField(t *testing.T) {
	for in, field := range map[string]string{
		`{"total_tests": 2.5, "tests_passed": 2, "tests_failed": 0}`:                           "total_tests is 2.5, not a whole number",
		`{"total_tests": 2, "tests_passed": null, "tests_failed": 0}`:                          "tests_passed is null, not a number",
		`{"total_tests": 2, "tests_passed": 2}`:                                                "tests_failed is missing",
		`{"total_tests": 2, "tests_passed": 2, "tests_failed": 0, "coverage_percent": "high"}`: `coverage_percent is "high", not a number`,
	} {
		if _, err := ParseTestResults([]byte(in)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want it to say %q", in, err, field)
		}
	}
}

func TestParseTestResults(t *testing.T) {
	tests := []struct {
		in   string
		code int
	}{
		{`{"total_tests": 12, "tests_passed": 11, "tests_failed": 1, "coverage_percent": 81.5, "failures": [{"name": "TestLogin", "message": "expected 200, got 500"}]}`, 0},
		{`{"total_tests": 3, "tests_passed": 2, "tests_failed": 0, "skipped": 1}`, 0},
		{`{"total_tests": 3, "tests_passed": 3}`, fail.Invalid},
		{`{"total_tests": 3, "tests_passed": 3, "tests_failed": 0, "coverage_percent": 101}`, fail.Invalid},
		{`{"total_tests": -1, "tests_passed": 0, "tests_failed": 0}`, fail.Invalid},
		{`[1]`, fail.Invalid},
		// What a careful writer plausibly puts is taken...
		{`{"total_tests": 12.0, "tests_passed": 12.0, "tests_failed": 0}`, 0},
		{`{"total_tests": 2, "tests_passed": 2, "tests_failed": 0, "coverage_percent": null}`, 0},
		{`{"total_tests": 2, "tests_passed": 2, "tests_failed": 0, "coverage_percent": "N/A"}`, 0},
		// ...garbage is not.
		{`{"total_tests": 2.5, "tests_passed": 2, "tests_failed": 0}`, fail.Invalid},
		{`{"total_tests": "12", "tests_passed": 12, "tests_failed": 0}`, fail.Invalid},
		{`{"total_tests": 2, "tests_passed": null, "tests_failed": 0}`, fail.Invalid},
		{`{"total_tests": 2, "tests_passed": 2, "tests_failed": 0, "coverage_percent": "high"}`, fail.Invalid},
	}
	for _, tt := range tests {
		_, err := ParseTestResults([]byte(tt.in))
		if fail.Code(err) != tt.code {
			t.Errorf("%s: code %d, want %d (%v)", tt.in, fail.Code(err), tt.code, err)
		}
	}
}

func TestCompose(t *testing.T) {
	got := compose("Head two.", []string{"a b c d e f g h", "x y", "p q r s t u"}, 10)
	// 8 words left: "x y" keeps 2, the other two share 6.
	want := "Head two. a b c… x y. p q r…"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if s := share([]int{50, 50, 50}, 100); !reflect.DeepEqual(s, []int{33, 33, 34}) {
		t.Errorf("share = %v", s)
	}
	if s := share([]int{5}, -3); !reflect.DeepEqual(s, []int{0}) {
		t.Errorf("share with no budget = %v", s)
	}
}

func TestSavingsPercent(t *testing.T) {
	for _, tt := range []struct {
		par, seq int64
		want     float64
	}{{30000, 70000, 57.1}, {0, 0, 0}, {10, 10, 0}, {1, 3, 66.7}} {
		if got := savingsPercent(tt.par, tt.seq); got != tt.want {
			t.Errorf("savingsPercent(%d, %d) = %v, want %v", tt.par, tt.seq, got, tt.want)
		}
	}
}
