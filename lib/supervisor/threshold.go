package supervisor

import (
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

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

// kinds are the supervisor kinds, in the order should-supervise lists
// their counts.
var kinds = []Kind{Research, Implementation, Testing}

// AllCountNames are the counts of every kind, named as should-supervise's
// flags.
func AllCountNames() []string {
	var names []string
	for _, k := range kinds {
		names = append(names, CountNames(k)...)
	}
	return names
}

// Decide is ShouldSupervise for the counts should-supervise was given, by
// flag name: a count kind does not read, or none of those it reads, is a
// usage error that names what it reads.
func Decide(kind Kind, given map[string]int) (bool, error) {
	if _, err := ParseKind(string(kind)); err != nil {
		return false, err
	}
	reads := CountNames(kind)
	applies := strings.Join(reads, " or --")
	read := false
	for _, n := range AllCountNames() {
		if _, ok := given[n]; !ok {
			continue
		}
		if !slices.Contains(reads, n) {
			return false, fail.Usagef("--%s does not apply to --kind %s (it reads --%s)", n, kind, applies)
		}
		read = true
	}
	if !read {
		return false, fail.Usagef("should-supervise --kind %s needs --%s", kind, applies)
	}
	return ShouldSupervise(kind, Counts{
		Topics: given["topics"], Domains: given["domains"], Complexity: given["complexity"],
		Tests: given["tests"], TestTypes: given["test-types"],
	})
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
