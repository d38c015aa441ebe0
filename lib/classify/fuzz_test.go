package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// satisfies the invariants callers rely on. Seeds are in testdata/fuzz.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good), 0.7)
	f.Fuzz(func(t *testing.T, data []byte, min float64) {
		c, err := Parse(data, min)
		if err != nil {
			return
		}
		if !slices.Contains(machine.DefaultScopes(), c.WorkflowType) {
			t.Errorf("accepted workflow_type %q", c.WorkflowType)
		}
		if c.Confidence < 0 || c.Confidence > 1 || c.Confidence < min {
			t.Errorf("accepted confidence %v with minimum %v", c.Confidence, min)
		}
		if c.ResearchComplexity < 1 || c.ResearchComplexity > MaxComplexity {
			t.Errorf("accepted research_complexity %d", c.ResearchComplexity)
		}
		if len(c.ResearchTopics) != c.ResearchComplexity {
			t.Errorf("accepted %d topics for complexity %d", len(c.ResearchTopics), c.ResearchComplexity)
		}
		for _, topic := range c.ResearchTopics {
			if strings.TrimSpace(topic) == "" || strings.ContainsRune(topic, 0) {
				t.Errorf("accepted topic %q", topic)
			}
		}
	})
}
