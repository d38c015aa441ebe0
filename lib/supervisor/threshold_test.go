package supervisor

import (
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestDecide: every count should-supervise takes reaches the threshold of
// the kind that reads it, and only that kind takes it.
func TestDecide(t *testing.T) {
	mins := map[string]int{"topics": ResearchTopics, "domains": ImplementationDomains,
		"complexity": ImplementationComplexity, "tests": TestingTests, "test-types": TestingTypes}
	if got := AllCountNames(); len(got) != len(mins) {
		t.Fatalf("AllCountNames() = %q, want the %d counts of %v", got, len(mins), mins)
	}
	for _, kind := range kinds {
		for _, n := range CountNames(kind) {
			for value, want := range map[int]bool{mins[n] - 1: false, mins[n]: true} {
				if got, err := Decide(kind, map[string]int{n: value}); err != nil || got != want {
					t.Errorf("Decide(%s, %s=%d) = %v, %v; want %v", kind, n, value, got, err, want)
				}
			}
			for _, other := range kinds {
				if other == kind {
					continue
				}
				if _, err := Decide(other, map[string]int{n: 1}); fail.Code(err) != fail.Usage {
					t.Errorf("Decide(%s, %s=1): %v; want a usage error (%s is not its count)", other, n, err, n)
				}
			}
		}
		if _, err := Decide(kind, nil); fail.Code(err) != fail.Usage {
			t.Errorf("Decide(%s) without counts: %v; want a usage error", kind, err)
		}
	}
	if _, err := Decide("docs", map[string]int{"topics": 9}); fail.Code(err) != fail.Usage {
		t.Errorf("Decide(docs): %v; want a usage error", err)
	}
}
