package supervisor

import (
	"encoding/json"
	"fmt"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Failing is one failing test in test results.
type Failing struct {
	Name    string `json:"name"`
	Message string `json:"message,omitempty"`
}

// TestResults is the protocol's test results JSON (section 6).
type TestResults struct {
	TotalTests      int64     `json:"total_tests"`
	TestsPassed     int64     `json:"tests_passed"`
	TestsFailed     int64     `json:"tests_failed"`
	CoveragePercent *float64  `json:"coverage_percent,omitempty"`
	Failures        []Failing `json:"failures,omitempty"`
}

// ParseTestResults decodes and checks test results. The three counts are
// required; other fields a test runner adds are ignored.
func ParseTestResults(data []byte) (TestResults, error) {
	var in struct { // pointers tell a missing count from a zero
		TotalTests      *int64    `json:"total_tests"`
		TestsPassed     *int64    `json:"tests_passed"`
		TestsFailed     *int64    `json:"tests_failed"`
		CoveragePercent *float64  `json:"coverage_percent"`
		Failures        []Failing `json:"failures"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return TestResults{}, fail.Invalidf("test results: %v; expected {\"total_tests\": N, \"tests_passed\": N, \"tests_failed\": N, \"coverage_percent\": P, \"failures\": [...]}", err)
	}
	if in.TotalTests == nil || in.TestsPassed == nil || in.TestsFailed == nil {
		return TestResults{}, fail.Invalidf("test results: total_tests, tests_passed and tests_failed are all required")
	}
	r := TestResults{*in.TotalTests, *in.TestsPassed, *in.TestsFailed, in.CoveragePercent, in.Failures}
	return r, r.check()
}

// check rejects counts that cannot be true; skipped tests make passed +
// failed less than total, never more.
func (r TestResults) check() error {
	switch {
	case r.TotalTests < 0 || r.TestsPassed < 0 || r.TestsFailed < 0 || r.TotalTests > maxCount:
		return fail.Invalidf("test results: counts must be within 0-%d", int64(maxCount))
	case r.TestsPassed+r.TestsFailed > r.TotalTests:
		return fail.Invalidf("test results: tests_passed %d + tests_failed %d exceed total_tests %d", r.TestsPassed, r.TestsFailed, r.TotalTests)
	case r.CoveragePercent != nil && (*r.CoveragePercent < 0 || *r.CoveragePercent > 100):
		return fail.Invalidf("test results: coverage_percent %v is not within 0-100", *r.CoveragePercent)
	}
	return nil
}

// String renders a failing test for a summary.
func (f Failing) String() string {
	if f.Message == "" {
		return f.Name
	}
	return fmt.Sprintf("%s (%s)", f.Name, f.Message)
}
