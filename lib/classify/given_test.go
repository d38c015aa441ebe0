package classify

import (
	"slices"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestGiven(t *testing.T) {
	tests := []struct {
		name       string
		complexity int
		topics     string
		want       int
		wantTopics []string
		code       int
	}{
		{"defaults", 0, "", 2, []string{}, 0},
		{"complexity from topics", 0, `["a","b","c"]`, 3, []string{"a", "b", "c"}, 0},
		{"many topics cap at 4", 0, `["a","b","c","d","e"]`, 4, []string{"a", "b", "c", "d", "e"}, 0},
		{"given complexity wins", 1, `["a","b"]`, 1, []string{"a", "b"}, 0},
		{"complexity too high", 5, "", 0, nil, fail.Invalid},
		{"negative complexity", -1, "", 0, nil, fail.Invalid},
		{"topics not an array", 0, `{"a":1}`, 0, nil, fail.Invalid},
		{"topics not strings", 0, `[1,2]`, 0, nil, fail.Invalid},
		{"topics null", 0, `null`, 0, nil, fail.Invalid},
		{"empty topic", 0, `["a"," "]`, 0, nil, fail.Invalid},
		{"malformed", 0, `["a"`, 0, nil, fail.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Given("research-only", tt.complexity, tt.topics)
			if fail.Code(err) != tt.code {
				t.Fatalf("err = %v, want code %d", err, tt.code)
			}
			if err != nil {
				return
			}
			if c.ResearchComplexity != tt.want || !slices.Equal(c.ResearchTopics, tt.wantTopics) ||
				c.WorkflowType != "research-only" || c.Confidence != 1 {
				t.Errorf("got %+v", c)
			}
		})
	}
}
