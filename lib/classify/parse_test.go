package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

const good = `{"workflow_type": "research-and-plan", "confidence": 0.92, "research_complexity": 2,
  "research_topics": ["Auth patterns", "Session storage"], "reasoning": "plan requested"}`

func TestParseAccepts(t *testing.T) {
	want := Classification{
		WorkflowType:       "research-and-plan",
		Confidence:         0.92,
		ResearchComplexity: 2,
		ResearchTopics:     []string{"Auth patterns", "Session storage"},
		Reasoning:          "plan requested",
	}
	tests := []struct {
		name  string
		input string
		min   float64
		edit  func(*Classification)
	}{
		{"plain", good, 0.7, nil},
		{"surrounding whitespace", "\n\t  " + good + "  \n\n", 0.7, nil},
		{"json fence", "```json\n" + good + "\n```", 0.7, nil},
		{"JSON fence upper case", "```JSON\n" + good + "\n```\n", 0.7, nil},
		{"bare fence", "  ```\n" + good + "\n```  ", 0.7, nil},
		{"unknown fields ignored", `{"workflow_type":"debug-only","confidence":1,"research_complexity":1,"research_topics":["X"],"extra":{"a":[1]},"classified_at":"2025"}`, 0,
			func(c *Classification) {
				*c = Classification{WorkflowType: "debug-only", Confidence: 1, ResearchComplexity: 1, ResearchTopics: []string{"X"}}
			}},
		{"reasoning empty", `{"workflow_type":"debug-only","confidence":0.5,"research_complexity":1,"research_topics":["X"],"reasoning":""}`, 0.5,
			func(c *Classification) {
				*c = Classification{WorkflowType: "debug-only", Confidence: 0.5, ResearchComplexity: 1, ResearchTopics: []string{"X"}}
			}},
		{"reasoning null", `{"workflow_type":"debug-only","confidence":0,"research_complexity":1,"research_topics":["X"],"reasoning":null}`, 0,
			func(c *Classification) {
				*c = Classification{WorkflowType: "debug-only", ResearchComplexity: 1, ResearchTopics: []string{"X"}}
			}},
		{"confidence equal to minimum", strings.Replace(good, "0.92", "0.7", 1), 0.7,
			func(c *Classification) { c.Confidence = 0.7 }},
		{"complexity written as 2.0", strings.Replace(good, `"research_complexity": 2`, `"research_complexity": 2.0`, 1), 0.7, nil},
		{"complexity 4", `{"workflow_type":"full-implementation","confidence":0.8,"research_complexity":4,"research_topics":["A","B","C","D"]}`, 0.7,
			func(c *Classification) {
				*c = Classification{WorkflowType: "full-implementation", Confidence: 0.8, ResearchComplexity: 4, ResearchTopics: []string{"A", "B", "C", "D"}}
			}},
		{"the original design's signal", "CLASSIFICATION_COMPLETE: " + good, 0.7, nil},
		{"signal and fence", "CLASSIFICATION_COMPLETE:\n```json\n" + good + "\n```", 0.7, nil},
		{"topics as objects", `{"workflow_type":"research-and-plan","confidence":0.92,"research_complexity":2,"reasoning":"plan requested","research_topics":[` +
			`{"short_name":"Auth patterns","detailed_description":"Analyze current authentication","filename_slug":"auth_patterns","research_focus":"How is auth handled?"},` +
			`{"short_name":"Session storage"}]}`, 0.7, nil},
		{"duplicate key last wins", `{"workflow_type":"nope","workflow_type":"test-and-debug","confidence":0.9,"research_complexity":1,"research_topics":["T"]}`, 0,
			func(c *Classification) {
				*c = Classification{WorkflowType: "test-and-debug", Confidence: 0.9, ResearchComplexity: 1, ResearchTopics: []string{"T"}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.input), tt.min)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			w := want
			w.ResearchTopics = slices.Clone(want.ResearchTopics)
			if tt.edit != nil {
				tt.edit(&w)
			}
			if got.WorkflowType != w.WorkflowType || got.Confidence != w.Confidence ||
				got.ResearchComplexity != w.ResearchComplexity || !slices.Equal(got.ResearchTopics, w.ResearchTopics) ||
				got.Reasoning != w.Reasoning {
				t.Errorf("Parse = %+v, want %+v", got, w)
			}
		})
	}
}

func TestParseKeepsTopicDetails(t *testing.T) {
	got, err := Parse([]byte(`{"workflow_type":"research-only","confidence":1,"research_complexity":1,"research_topics":[{"short_name":"Auth","detailed_description":"How logins work"}]}`), 0.7)
	if err != nil || len(got.TopicDetails) != 1 || got.TopicDetails[0].DetailedDescription != "How logins work" || got.ResearchTopics[0] != "Auth" {
		t.Errorf("Parse = %+v, %v", got, err)
	}
	for _, bad := range []string{`[{"detailed_description":"no name"}]`, `[{"short_name":""}]`, `[1]`, `[{"short_name":"A"},"B"]`} {
		in := `{"workflow_type":"research-only","confidence":1,"research_complexity":` + map[bool]string{true: "2", false: "1"}[strings.Count(bad, "{")+strings.Count(bad, `"B"`) == 2] + `,"research_topics":` + bad + `}`
		if _, err := Parse([]byte(in), 0.7); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestParseRejects(t *testing.T) {
	field := func(old, repl string) string {
		if !strings.Contains(good, old) {
			panic(old)
		}
		return strings.Replace(good, old, repl, 1)
	}
	tests := []struct {
		name  string
		input string
		min   float64
		want  []string // substrings of the message
	}{
		{"empty", "", 0, []string{"not valid JSON", "nothing else"}},
		{"whitespace only", " \n ", 0, []string{"not valid JSON"}},
		{"truncated", good[:40], 0, []string{"not valid JSON"}},
		{"array", `[` + good + `]`, 0, []string{"not valid JSON"}},
		{"null", `null`, 0, []string{"not a JSON object"}},
		{"prose before", "Here is the classification:\n" + good, 0, []string{"not valid JSON"}},
		{"prose after", good + "\nHope this helps", 0, []string{"not valid JSON"}},
		{"two objects", good + good, 0, []string{"not valid JSON"}},
		{"other fence language", "```yaml\n" + good + "\n```", 0, []string{"not valid JSON"}},
		{"unclosed fence", "```json\n" + good, 0, []string{"not valid JSON"}},
		{"text after fence", "```json\n" + good + "\n```\nDone.", 0, []string{"not valid JSON"}},
		{"one-line fence", "```" + good + "```", 0, []string{"not valid JSON"}},
		{"double fence", "```json\n```json\n" + good + "\n```\n```", 0, []string{"not valid JSON"}},

		{"unknown workflow_type", field(`"research-and-plan"`, `"research"`), 0,
			[]string{`workflow_type "research"`, strings.Join(machine.DefaultScopes(), ", ")}},
		{"workflow_type wrong case", field(`"research-and-plan"`, `"Research-And-Plan"`), 0, []string{"workflow_type"}},
		{"workflow_type padded", field(`"research-and-plan"`, `" research-and-plan"`), 0, []string{"workflow_type"}},
		{"workflow_type missing", field(`"workflow_type": "research-and-plan", `, ``), 0, []string{"workflow_type (missing)"}},
		{"workflow_type number", field(`"research-and-plan"`, `3`), 0, []string{"workflow_type 3"}},

		{"confidence missing", field(`"confidence": 0.92, `, ``), 0, []string{"confidence (missing)", "number from 0 to 1"}},
		{"confidence string", field(`0.92`, `"0.92"`), 0, []string{`confidence "0.92" is not a number`}},
		{"confidence null", field(`0.92`, `null`), 0, []string{"confidence null is not a number"}},
		{"confidence bool", field(`0.92`, `true`), 0, []string{"not a number"}},
		{"confidence above 1", field(`0.92`, `1.5`), 0, []string{"confidence 1.5 is outside 0-1"}},
		{"confidence percent", field(`0.92`, `92`), 0, []string{"outside 0-1"}},
		{"confidence negative", field(`0.92`, `-0.1`), 0, []string{"outside 0-1"}},
		{"confidence overflows", field(`0.92`, `1e400`), 0, []string{"not a number"}},
		{"confidence below minimum", field(`0.92`, `0.69`), 0.7, []string{"0.69 is below the minimum 0.7", "--min-confidence"}},

		{"complexity missing", field(`"research_complexity": 2,`, ``), 0, []string{"research_complexity (missing)", "integer from 1 to 4"}},
		{"complexity zero", field(`"research_complexity": 2`, `"research_complexity": 0`), 0, []string{"research_complexity 0"}},
		{"complexity five", field(`"research_complexity": 2`, `"research_complexity": 5`), 0, []string{"research_complexity 5"}},
		{"complexity fraction", field(`"research_complexity": 2`, `"research_complexity": 2.5`), 0, []string{"research_complexity 2.5"}},
		{"complexity string", field(`"research_complexity": 2`, `"research_complexity": "2"`), 0, []string{`research_complexity "2"`}},
		{"complexity negative", field(`"research_complexity": 2`, `"research_complexity": -1`), 0, []string{"research_complexity -1"}},

		{"topics missing", field(`"research_topics": ["Auth patterns", "Session storage"], `, ``), 0,
			[]string{"research_topics (missing)", "exactly 2 non-empty strings"}},
		{"topics too few", field(`["Auth patterns", "Session storage"]`, `["Auth patterns"]`), 0, []string{"exactly 2"}},
		{"topics too many", field(`["Auth patterns", "Session storage"]`, `["A", "B", "C"]`), 0, []string{"exactly 2"}},
		{"topics not strings", field(`["Auth patterns", "Session storage"]`, `[1, 2]`), 0, []string{"research_topics [1, 2]"}},
		{"topics a string", field(`["Auth patterns", "Session storage"]`, `"Auth patterns, Session storage"`), 0, []string{"research_topics"}},
		{"topics null", field(`["Auth patterns", "Session storage"]`, `null`), 0, []string{"research_topics null"}},
		{"topic empty", field(`["Auth patterns", "Session storage"]`, `["Auth patterns", ""]`), 0, []string{"non-empty"}},
		{"topic blank", field(`["Auth patterns", "Session storage"]`, `["Auth patterns", " \t"]`), 0, []string{"non-empty"}},
		{"topic with NUL", field(`["Auth patterns", "Session storage"]`, `["Auth patterns", "a\u0000b"]`), 0, []string{"research_topics"}},

		{"reasoning number", field(`"plan requested"`, `42`), 0, []string{"reasoning 42 is not a string"}},
		{"reasoning array", field(`"plan requested"`, `["a"]`), 0, []string{"reasoning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.input), tt.min)
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.input)
			}
			if code := fail.Code(err); code != fail.Invalid {
				t.Errorf("exit code %d, want %d (%v)", code, fail.Invalid, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseLongValueIsShortened(t *testing.T) {
	long := strings.Repeat("é", 100)
	_, err := Parse([]byte(strings.Replace(good, `"research-and-plan"`, `"`+long+`"`, 1)), 0)
	if err == nil || strings.Contains(err.Error(), long) || !strings.Contains(err.Error(), "...") {
		t.Errorf("error = %v, want the value shortened", err)
	}
}

func TestParseBadMinConfidenceIsUsage(t *testing.T) {
	for _, min := range []float64{-0.1, 1.1} {
		_, err := Parse([]byte(good), min)
		if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), "--min-confidence") {
			t.Errorf("Parse(good, %v) = %v, want a usage error naming --min-confidence", min, err)
		}
	}
}

// ParseFor takes a definition's own scopes, and only those.
func TestParseForOwnScopes(t *testing.T) {
	answer := func(scope string) []byte {
		return []byte(`{"workflow_type": "` + scope + `", "confidence": 0.9, "research_complexity": 1, "research_topics": ["a"]}`)
	}
	if c, err := ParseFor(answer("deep"), MinConfidence, []string{"deep", "quick"}); err != nil || c.WorkflowType != "deep" {
		t.Errorf("ParseFor(deep) = %+v, %v", c, err)
	}
	if _, err := ParseFor(answer("research-only"), MinConfidence, []string{"deep", "quick"}); err == nil || !strings.Contains(err.Error(), "is not one of deep, quick") {
		t.Errorf("ParseFor(research-only) = %v, want it refused naming deep, quick", err)
	}
}
