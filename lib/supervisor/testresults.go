package supervisor

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

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
// required whole numbers; what a careful writer plausibly puts is taken
// (12.0 for 12; coverage_percent null, "" or "N/A" for not measured, like
// leaving it out), anything else is refused naming the field. Other
// fields a test runner adds are ignored.
func ParseTestResults(data []byte) (TestResults, error) {
	const want = `expected {"total_tests": N, "tests_passed": N, "tests_failed": N, "coverage_percent": P, "failures": [...]}`
	var in struct {
		TotalTests      json.RawMessage `json:"total_tests"`
		TestsPassed     json.RawMessage `json:"tests_passed"`
		TestsFailed     json.RawMessage `json:"tests_failed"`
		CoveragePercent json.RawMessage `json:"coverage_percent"`
		Failures        []Failing       `json:"failures"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return TestResults{}, fail.Invalidf("test results: %v; %s", err, want)
	}
	var r TestResults
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *int64
	}{{"total_tests", in.TotalTests, &r.TotalTests}, {"tests_passed", in.TestsPassed, &r.TestsPassed}, {"tests_failed", in.TestsFailed, &r.TestsFailed}} {
		n, err := count(f.raw)
		if err != nil {
			return TestResults{}, fail.Invalidf("test results: %s %v; %s", f.name, err, want)
		}
		*f.dst = n
	}
	cov, err := coverage(in.CoveragePercent)
	if err != nil {
		return TestResults{}, fail.Invalidf("test results: coverage_percent %v; leave it out when coverage was not measured", err)
	}
	r.CoveragePercent, r.Failures = cov, in.Failures
	return r, r.check()
}

// count reads a required whole number, which JSON may spell 12 or 12.0.
func count(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("is missing; it is required")
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || string(raw) == "null" {
		return 0, fmt.Errorf("is %s, not a number", raw)
	}
	if f != math.Trunc(f) || math.Abs(f) > maxCount {
		return 0, fmt.Errorf("is %s, not a whole number", raw)
	}
	return int64(f), nil
}

// coverage reads the optional coverage percentage; nil when it was not
// measured.
func coverage(raw json.RawMessage) (*float64, error) {
	var s string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case json.Unmarshal(raw, &s) == nil:
		if t := strings.TrimSpace(s); t == "" || strings.EqualFold(t, "n/a") || strings.EqualFold(t, "na") {
			return nil, nil
		}
		return nil, fmt.Errorf("is %s, not a number", raw)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("is %s, not a number", raw)
	}
	return &f, nil
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
