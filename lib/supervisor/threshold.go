package supervisor

import "github.com/flowstate-dev/flowstate/lib/fail"

// Thresholds of seed 002's decision matrix: at or above any of them a
// supervisor coordinates the workers (hierarchical), below all of them the
// command invokes the workers itself (flat).
const (
	ResearchTopics           = 4  // research: topics
	ImplementationDomains    = 3  // implementation: domains ...
	ImplementationComplexity = 10 // ... or complexity
	TestingTests             = 20 // testing: tests ...
	TestingTypes             = 2  // ... or test types
)

// Counts are the sizes ShouldSupervise weighs; each kind reads its own.
type Counts struct {
	Topics     int // research
	Domains    int // implementation
	Complexity int // implementation
	Tests      int // testing
	TestTypes  int // testing
}

// ShouldSupervise reports whether kind's work is large enough for a
// hierarchical supervisor. Negative counts are a usage error.
func ShouldSupervise(kind Kind, c Counts) (bool, error) {
	if c.Topics < 0 || c.Domains < 0 || c.Complexity < 0 || c.Tests < 0 || c.TestTypes < 0 {
		return false, fail.Usagef("counts must not be negative: %+v", c)
	}
	switch kind {
	case Research:
		return c.Topics >= ResearchTopics, nil
	case Implementation:
		return c.Domains >= ImplementationDomains || c.Complexity >= ImplementationComplexity, nil
	case Testing:
		return c.Tests >= TestingTests || c.TestTypes >= TestingTypes, nil
	}
	_, err := ParseKind(string(kind))
	return false, err
}
