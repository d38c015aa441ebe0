package intent

import (
	"slices"
	"testing"
)

// clauseOf is the only clause of s.
func clauseOf(t *testing.T, s string) clause {
	t.Helper()
	cs := splitClauses(tokenize(s))
	if len(cs) != 1 {
		t.Fatalf("%q has %d clauses, want 1", s, len(cs))
	}
	return cs[0]
}

// TestLeadingVerb: fillers and negation before the verb are skipped, and
// a "go" that leads a verb.
func TestLeadingVerb(t *testing.T) {
	for _, tc := range []struct {
		text    string
		verb    string // "" when the clause has none
		negated bool
	}{
		{"research the cache", "research", false},
		{"please just research the cache", "research", false},
		{"don't implement the cache", "implement", true},
		{"do not implement the cache", "implement", true},
		{"no plan needed", "plan", true},
		{"go build it", "build", false},
		{"go home", "go", false},
		{"please", "", false},
	} {
		toks := clauseOf(t, tc.text).toks
		i, negated := leadingVerb(toks)
		verb := ""
		if i < len(toks) {
			verb = toks[i].text
		}
		if verb != tc.verb || negated != tc.negated {
			t.Errorf("leadingVerb(%q) = %q, %v; want %q, %v", tc.text, verb, negated, tc.verb, tc.negated)
		}
	}
}

// TestReadClauseIntent: what each verb class asks for, by its object.
func TestReadClauseIntent(t *testing.T) {
	for _, tc := range []struct {
		text          string
		planMentioned bool
		want          intent
		has           bool
	}{
		{"research the cache", false, intentResearch, true},
		{"plan the cache", false, intentPlan, true},
		{"create a plan for the cache", false, intentPlan, true},
		{"write tests for the parser", false, intentTest, true},
		{"write the code for the plan", false, intentExecutePlan, true},
		{"add a phase to the plan", false, intentRevise, true},
		{"add a cache", false, intentImplement, true},
		{"refresh the plan", false, intentRevise, true},
		{"refresh the cache", false, intentImplement, true},
		{"build it", true, intentExecutePlan, true},
		{"build the cache", false, intentImplement, true},
		{"execute the tests", false, intentTest, true},
		{"fix the parser", false, intentFix, true},
		{"test the parser", false, intentTest, true},
		{"run the tests", false, intentTest, true},
		{"run the linter", false, intentResearch, false},
		{"improve the cache", false, intentImplement, true},
		{"make them pass", false, intentFix, true},
		{"what does the cache hold", false, intentResearch, true},
		{"the cache", false, intentResearch, false},
	} {
		a := readClause(clauseOf(t, tc.text), tc.planMentioned)
		if a.intent != tc.want || a.has != tc.has {
			t.Errorf("readClause(%q, %v) = intent %d, has %v; want %d, %v", tc.text, tc.planMentioned, a.intent, a.has, tc.want, tc.has)
		}
	}
}

// TestCleanPhrase: a topic is the subject of an object, title-cased.
func TestCleanPhrase(t *testing.T) {
	for _, tc := range []struct{ object, want string }{
		{"the config loader", "Config Loader"},
		{"the tests for the config loader", "Config Loader"},
		{"just the OAuth providers", "OAuth Providers"},
		{"the cache of the importer", "Cache of Importer"},
		{"the cache that the importer fills", "Cache"},
		{"one two three four five six seven", "One Two Three Four Five Six"},
		{"the tests", ""},
		{"2.1", ""}, {"50%", ""},
		{"", ""},
	} {
		if got := cleanPhrase(tokenize(tc.object)); got != tc.want {
			t.Errorf("cleanPhrase(%q) = %q, want %q", tc.object, got, tc.want)
		}
	}
}

// TestResearchTopicsPadding: fewer subjects than a broad request asks for
// are padded with aspects of the first.
func TestResearchTopicsPadding(t *testing.T) {
	clauses := splitClauses(tokenize("a thorough review of the importer"))
	got := researchTopics(clauses, read(clauses).acts, "research-only")
	if want := []string{"Importer", "Importer current state"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
