package classify

import (
	"encoding/json"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Given builds the classification of a workflow whose scope the user gave
// (sm-init --scope), so no classifier ran: confidence 1. complexity 0
// means not given: the number of topics, else 2. Unlike a classifier's
// answer, the topics need not number the complexity level, as the
// original sm_init allowed. The scope is checked against the machine by
// the caller, since a custom machine has its own scopes.
func Given(scope string, complexity int, topicsJSON string) (Classification, error) {
	c := Classification{WorkflowType: scope, Confidence: 1, Reasoning: "scope given by the user", ResearchTopics: []string{}}
	if topicsJSON != "" {
		if err := limit.JSON([]byte(topicsJSON), "--topics"); err != nil {
			return c, err
		}
		if err := json.Unmarshal([]byte(topicsJSON), &c.ResearchTopics); err != nil || c.ResearchTopics == nil {
			return c, fail.Invalidf("--topics must be a JSON array of strings, e.g. '[\"auth\",\"sessions\"]'")
		}
	}
	for i, t := range c.ResearchTopics {
		if strings.TrimSpace(t) == "" {
			return c, fail.Invalidf("--topics: topic %d is empty", i+1)
		}
	}
	c.ResearchComplexity = complexity
	if complexity == 0 {
		c.ResearchComplexity = 2
		if n := len(c.ResearchTopics); n > 0 {
			c.ResearchComplexity = min(n, MaxComplexity)
		}
	}
	if c.ResearchComplexity < 1 || c.ResearchComplexity > MaxComplexity {
		return c, fail.Invalidf("--complexity %d is outside 1-%d", c.ResearchComplexity, MaxComplexity)
	}
	return c, nil
}
