package supervisor

import "github.com/flowstate-dev/flowstate/lib/fail"

// Thresholds of the decision matrix (docs/supervisors.md, "When to use
// one"): at or above any of them a
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

// threshold is one count a kind weighs, named as should-supervise's flag.
type threshold struct {
	name  string
	count func(Counts) int
	min   int
}

// thresholds is the decision matrix, per kind: the one place that says
// which counts a kind reads.
var thresholds = map[Kind][]threshold{
	Research: {{"topics", func(c Counts) int { return c.Topics }, ResearchTopics}},
	Implementation: {
		{"domains", func(c Counts) int { return c.Domains }, ImplementationDomains},
		{"complexity", func(c Counts) int { return c.Complexity }, ImplementationComplexity},
	},
	Testing: {
		{"tests", func(c Counts) int { return c.Tests }, TestingTests},
		{"test-types", func(c Counts) int { return c.TestTypes }, TestingTypes},
	},
}

// CountNames are the counts ShouldSupervise reads for kind, named as
// should-supervise's flags; none for an unknown kind.
func CountNames(kind Kind) []string {
	var names []string
	for _, t := range thresholds[kind] {
		names = append(names, t.name)
	}
	return names
}

// ShouldSupervise reports whether kind's work is large enough for a
// hierarchical supervisor. Negative counts are a usage error.
func ShouldSupervise(kind Kind, c Counts) (bool, error) {
	if c.Topics < 0 || c.Domains < 0 || c.Complexity < 0 || c.Tests < 0 || c.TestTypes < 0 {
		return false, fail.Usagef("counts must not be negative: %+v", c)
	}
	ts, ok := thresholds[kind]
	if !ok {
		_, err := ParseKind(string(kind))
		return false, err
	}
	for _, t := range ts {
		if t.count(c) >= t.min {
			return true, nil
		}
	}
	return false, nil
}
