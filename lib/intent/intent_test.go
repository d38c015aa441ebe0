package intent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

type labelled struct {
	Description  string `json:"description"`
	WorkflowType string `json:"workflow_type"`
	Tag          string `json:"tag"` // "adversarial" for inputs that trap a keyword matcher
}

func loadLabelled(t *testing.T) []labelled { return loadSet(t, "testdata/labelled.jsonl") }

func loadSet(t *testing.T, name string) []labelled {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		if !slices.Contains(machine.DefaultScopes(), l.WorkflowType) {
			t.Fatalf("%s:%d: unknown workflow_type %q", name, line, l.WorkflowType)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLabelledSetShape keeps the sets that are not tuning leftovers as big
// and varied as a fair measure needs: every scope, and inputs that trap a
// keyword matcher.
func TestLabelledSetShape(t *testing.T) {
	for _, name := range []string{"testdata/labelled.jsonl", "testdata/unseen.jsonl"} {
		set := loadSet(t, name)
		perScope := map[string]int{}
		adversarial := 0
		for _, l := range set {
			perScope[l.WorkflowType]++
			if l.Tag == "adversarial" {
				adversarial++
			}
		}
		if len(set) < 70 {
			t.Errorf("%s: %d labelled descriptions, want at least 70", name, len(set))
		}
		for _, s := range machine.DefaultScopes() {
			if perScope[s] < 8 {
				t.Errorf("%s: %d labelled descriptions for %s, want at least 8", name, perScope[s], s)
			}
		}
		if adversarial < 10 {
			t.Errorf("%s: %d adversarial descriptions, want at least 10", name, adversarial)
		}
	}
}

// accuracy classifies set and logs the misses and the confusion pairs.
func accuracy(t *testing.T, name string, set []labelled) float64 {
	right := 0
	confusion := map[string]int{}
	for _, l := range set {
		got := Classify(l.Description)
		if got.WorkflowType == l.WorkflowType {
			right++
			continue
		}
		confusion[l.WorkflowType+" -> "+got.WorkflowType]++
		t.Logf("%s miss: %q: want %s, got %s (%s)", name, l.Description, l.WorkflowType, got.WorkflowType, got.Reasoning)
	}
	acc := float64(right) / float64(len(set))
	t.Logf("%s accuracy: %d/%d = %.3f", name, right, len(set), acc)
	pairs := make([]string, 0, len(confusion))
	for p, n := range confusion {
		pairs = append(pairs, fmt.Sprintf("%s: %d", p, n))
	}
	sort.Strings(pairs)
	for _, p := range pairs {
		t.Logf("%s confusion (want -> got) %s", name, p)
	}
	return acc
}

// accuracySets are the labelled sets Classify is measured on, oldest first,
// each with the accuracy it must keep. Each floor sits two descriptions
// under what was measured, so a change to the tables that loses three
// descriptions of any set fails here.
var accuracySets = []struct {
	file string
	min  float64
}{
	// Written before the rules, which were designed against it: in-sample.
	// Measured 89/89 = 1.000 (the rules were built to reach 0.90).
	{"labelled.jsonl", 0.97},
	// Written after the first rules and held out then (0.74); its misses
	// drove the second round of rules, so it is in-sample. Measured 35/35.
	{"heldout.jsonl", 0.94},
	// Written before the second round of rules and never edited, but
	// committed by that round's author minutes before it, so whether its
	// misses shaped the round is not known: not a clean out-of-sample
	// figure. Measured 55/62 = 0.887.
	{"heldout2.jsonl", 0.85},
	// The out-of-sample set: 84 descriptions (12 a scope) labelled from the
	// scope definitions in agents/workflow-classifier.md and committed
	// before Classify was ever run on them; no table has changed because of
	// them. Measured 72/84 = 0.857.
	// Never tune the tables on its misses: the set would then be in-sample,
	// and a new unseen set must replace it before the floor means anything.
	{"unseen.jsonl", 0.83},
}

// TestClassifyAccuracy fails when Classify's accuracy on any labelled set
// falls below that set's floor, logging each miss and the confusion pairs.
func TestClassifyAccuracy(t *testing.T) {
	for _, set := range accuracySets {
		t.Run(set.file, func(t *testing.T) {
			if acc := accuracy(t, set.file, loadSet(t, "testdata/"+set.file)); acc < set.min {
				t.Errorf("offline accuracy %.3f on %s is below its floor %.2f", acc, set.file, set.min)
			}
		})
	}
}

// TestClassifyRules pins the intent rules the issue calls out, one per case.
func TestClassifyRules(t *testing.T) {
	tests := []struct {
		desc string
		want string
	}{
		{"research the research-and-revise workflow", "research-and-plan"},
		{"research the implement-only scope", "research-and-plan"},
		{"just research the implement-only scope, no plan", "research-only"},
		{"plan how to debug the login crash", "research-and-plan"},
		{"don't implement yet, just research and plan the cache", "research-and-plan"},
		{"research the cache, then implement it", "full-implementation"},
		{"investigate how sessions are stored", "research-only"},
		{"investigate why sessions are lost", "debug-only"},
		{"don't fix anything, investigate why the build fails", "research-only"},
		{"revise `plans/001_x.md`", "research-and-revise"},
		{"research `plans/001_x.md`", "research-only"},
		{"the plan is approved; implement it", "implement-only"},
		{"implement it", "full-implementation"},
		{"add a phase for logging to the plan", "research-and-revise"},
		{"add tests for the parser", "test-and-debug"},
		{"fix the parser", "debug-only"},
		{"fix the failing parser tests", "test-and-debug"},
		{"debug the research-only scope: it transitions to plan", "debug-only"},
		{`research "fix" and "debug" as command names`, "research-only"},
		{"analyze the logs to plan a cleanup", "research-and-plan"},
		// A verb inside a "what/how/whether ..." object is part of the object.
		{"figure out what it would take to support ARM", "research-only"},
		{"find out how we could migrate to Postgres", "research-only"},
		// A negated infinitive stays negated: "no need to research".
		{"no need to research, just implement the plan", "implement-only"},
		// A requested noun is the request: "I need a summary of X".
		{"I need a summary of the retry logic", "research-only"},
		{"give me an overview of the hooks", "research-only"},
		{"we'd like a proposal for the cache", "research-and-plan"},
		{"a plan was approved yesterday, implement it", "implement-only"},
		// Change verbs act on the plan when the plan is their object.
		{"refresh the plan with the new limits", "research-and-revise"},
		{"incorporate the feedback into plans/007_importer.md", "research-and-revise"},
		{"extend the plan with a rollback phase", "research-and-revise"},
		{"remove the legacy parser", "full-implementation"},
		// A phase refers to the plan mentioned elsewhere.
		{"the plan is approved, start building phase 1", "implement-only"},
		{"go build it", "full-implementation"},
		{"write the code for the approved plan", "implement-only"},
		// Test-suite nouns and reaching a passing state.
		{"run the e2e suite and fix the failures", "test-and-debug"},
		{"get the test suite green again", "test-and-debug"},
		{"make the build pass", "debug-only"},
		// A cause to find is a failure to debug.
		{"the importer drops rows, find the root cause", "debug-only"},
		{"nothing to build, just explain the importer", "research-only"},
	}
	for _, tt := range tests {
		if got := Classify(tt.desc); got.WorkflowType != tt.want {
			t.Errorf("Classify(%q) = %s, want %s (%s)", tt.desc, got.WorkflowType, tt.want, got.Reasoning)
		}
	}
}

func TestClassifyTopics(t *testing.T) {
	tests := []struct {
		desc   string
		topics []string
	}{
		{"research caching", []string{"Caching"}},
		{"research OAuth providers and plan the migration to SSO", []string{"OAuth Providers", "Migration"}},
		{"write tests for the checkpoint package and fix any bugs they find", []string{"Checkpoint Package"}},
		{"investigate how auth works across the web app, the CLI and the docs",
			[]string{"Auth", "Web App", "CLI", "Docs"}},
		{"do a comprehensive review of the config loader",
			[]string{"Config Loader", "Config Loader current state"}},
		{"amend plans/002_api_redesign.md", []string{"API Redesign"}},
		{"update the plan", []string{"Existing plan"}},
		{"memory leak in the hook handler", []string{"Memory Leak"}},
	}
	for _, tt := range tests {
		got := Classify(tt.desc)
		if !slices.Equal(got.ResearchTopics, tt.topics) || got.ResearchComplexity != len(tt.topics) {
			t.Errorf("Classify(%q) topics = %d %q, want %q", tt.desc, got.ResearchComplexity, got.ResearchTopics, tt.topics)
		}
	}
}

func TestClassifyConfidence(t *testing.T) {
	if c := Classify("dark mode"); c.Confidence >= 0.7 {
		t.Errorf("no rule matched but confidence is %v (%s)", c.Confidence, c.Reasoning)
	}
	if c := Classify("fix the crash on startup"); c.Confidence < 0.9 {
		t.Errorf("a plain fix request has confidence %v", c.Confidence)
	}
}

func descriptions(t *testing.T) []string {
	var out []string
	for _, l := range loadLabelled(t) {
		out = append(out, l.Description)
	}
	return append(out, "", "   ", "\x00", "``", `"`, "'", "and and and", "to plan", "plan",
		"don't", "no", strings.Repeat("research the cache and ", 200),
		"```json\n{}\n```", "\"research-only\"", "/implement", "plans/", "a/b/c.md",
		"Ünïcödé ресёрч 研究 and 修正", "research \"\x00\" and `\t`", "fix \xff\xfe bugs")
}

// TestClassifyPassesParse is the property the sm-init path relies on: every
// offline answer is a valid classification.
func TestClassifyPassesParse(t *testing.T) {
	for _, d := range descriptions(t) {
		c := Classify(d)
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := classify.Parse(data, 0)
		if err != nil {
			t.Errorf("Classify(%q) = %s fails Parse: %v", d, data, err)
			continue
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("Classify(%q) does not round-trip: %+v != %+v", d, back, c)
		}
		if c.Reasoning == "" {
			t.Errorf("Classify(%q) has no reasoning", d)
		}
	}
}

func TestClassifyDeterministic(t *testing.T) {
	for _, d := range descriptions(t) {
		first, _ := json.Marshal(Classify(d))
		for range 5 {
			if again, _ := json.Marshal(Classify(d)); string(again) != string(first) {
				t.Fatalf("Classify(%q) changed: %s then %s", d, first, again)
			}
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add("research the research-and-revise workflow")
	f.Fuzz(func(t *testing.T, d string) {
		data, _ := json.Marshal(Classify(d))
		if _, err := classify.Parse(data, 0); err != nil {
			t.Errorf("Classify(%q) = %s fails Parse: %v", d, data, err)
		}
	})
}
