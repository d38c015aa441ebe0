package supervisor

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestWavesFixtures(t *testing.T) {
	tests := []struct {
		file     string
		waves    [][]int
		estimate Estimate
	}{
		{"plans/linear.md", [][]int{{1}, {2}, {3}}, Estimate{270000, 270000, 0}},
		{"plans/diamond.md", [][]int{{1}, {2, 3}, {4}}, Estimate{210000, 300000, 30}},
		{"plans/fanout.md", [][]int{{1}, {2, 3, 4, 5}}, Estimate{70000, 185000, 62.2}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			phases, err := ParsePlan(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			waves, err := Waves(phases)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(waves, tt.waves) {
				t.Errorf("waves %v, want %v", waves, tt.waves)
			}
			e, err := EstimateWaves(phases, waves)
			if err != nil || e != tt.estimate {
				t.Errorf("estimate %+v, %v; want %+v", e, err, tt.estimate)
			}
		})
	}
}

func TestParsePlanDiamondDetails(t *testing.T) {
	phases, err := ParsePlan(fixture(t, "plans/diamond.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Phase{
		{1, "Data model", []int{}, 60000},
		{2, "Session API", []int{1}, 120000},
		{3, "Token API", []int{1}, 90000}, // "**Dependencies**: [Phase 1]"; the fenced "Phase 9" is code
		{4, "Gateway integration", []int{2, 3}, 30000},
	}
	if !reflect.DeepEqual(phases, want) {
		t.Errorf("got  %+v\nwant %+v", phases, want)
	}
}

func TestDepsJSONMatchesPlan(t *testing.T) {
	fromJSON, err := parseDeps(fixture(t, "plans/deps.json"))
	if err != nil {
		t.Fatal(err)
	}
	fromMD, _ := ParsePlan(fixture(t, "plans/diamond.md"))
	if !reflect.DeepEqual(fromJSON, fromMD) {
		t.Errorf("deps.json and diamond.md describe the same plan:\n%+v\n%+v", fromJSON, fromMD)
	}
	m, err := parseDeps([]byte(`{"3": [1, 2], "1": [], "2": null}`))
	if err != nil {
		t.Fatal(err)
	}
	waves, _ := Waves(m)
	if !reflect.DeepEqual(waves, [][]int{{1, 2}, {3}}) {
		t.Errorf("map form: %v", waves)
	}
}

func TestWavesCycle(t *testing.T) {
	phases, err := ParsePlan(fixture(t, "plans/cyclic.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Waves(phases)
	wantCode(t, err, fail.Invalid)
	if !strings.Contains(err.Error(), "cycle: phase 2 -> 3 -> 2") {
		t.Errorf("the error should name the cycle: %v", err)
	}
	for _, tt := range []struct {
		phases []Phase
		cycle  string
	}{
		{[]Phase{{Number: 1, Dependencies: []int{1}}}, "1 -> 1"},
		{[]Phase{{Number: 1, Dependencies: []int{5}}, {Number: 5, Dependencies: []int{6}}, {Number: 6, Dependencies: []int{7}}, {Number: 7, Dependencies: []int{5}}}, "5 -> 6 -> 7 -> 5"},
		{[]Phase{{Number: 3, Dependencies: []int{1}}, {Number: 1, Dependencies: []int{2}}, {Number: 2, Dependencies: []int{3}}}, "1 -> 2 -> 3 -> 1"},
	} {
		_, err := Waves(tt.phases)
		if err == nil || !strings.Contains(err.Error(), "phase "+tt.cycle+" ") {
			t.Errorf("want cycle %q, got %v", tt.cycle, err)
		}
	}
}

func TestParsePlanInvalid(t *testing.T) {
	tests := []struct{ name, md, msg string }{
		{"missing dependency", string(fixture(t, "plans/missing_dep.md")), "phase 2 depends on phase 7"},
		{"no phases", "# Plan\n\n## Overview\ntext\n", "no phases"},
		{"duplicate", "### Phase 1: a\ndependencies: []\n### Phase 1: b\ndependencies: []\n", "appears twice"},
		{"some without dependencies", "### Phase 1: a\ndependencies: []\n### Phase 2: b\n### Phase 3: c\n", "phases 2, 3 have no"},
		{"bad item", "### Phase 1: a\ndependencies: [x]\n", `"x" is not a phase number`},
		{"prose", "### Phase 1: a\ndependencies: []\n### Phase 2: b\ndependencies: the model phase\n", `"the model phase" is not a phase number`},
		{"words after the list", "### Phase 1: a\ndependencies: []\n### Phase 2: b\ndependencies: [1] and 3\n", `"and 3" after the list is not a comment`},
		{"unclosed list", "### Phase 1: a\ndependencies: [\n", "no closing ]"},
		{"phase zero", "### Phase 0: a\ndependencies: []\n", "not a phase number"},
		{"bad estimate", "### Phase 1: a\ndependencies: []\nestimate_ms: soon\n", "estimate_ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePlan([]byte(tt.md))
			wantCode(t, err, fail.Invalid)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q should mention %q", err, tt.msg)
			}
		})
	}
}

func TestParsePlanVariants(t *testing.T) {
	tests := []struct {
		name, md string
		waves    [][]int
	}{
		{"no dependency lines: sequential", "# P\n## Phase 1: a\n## Phase 2: b\n## Phase 3: c\n", [][]int{{1}, {2}, {3}}},
		{"none, plain list, phase words", "### Phase 1 - a\nDependencies: none\n### Phase 2. b\ndepends on: Phase 1\n### Phase 3) c\ndependencies: 1, phase 2\n", [][]int{{1}, {2}, {3}}},
		{"first line counts, subsection stays in phase", "### Phase 1: a\ndependencies: []\n#### Tasks\ndependencies: [9]\n### Phase 2: b\ndependencies: [1, 1]\n", [][]int{{1}, {2}}},
		{"a comment after the list, names after numbers", "### Phase 1: a\ndependencies: []\n### Phase 2: b\ndependencies: Phase 1 (Data model)\n### Phase 3: c\ndependencies: [1, 2] (schema first)\n### Phase 4: d\ndependencies: 3 - API, phase 1: model\n", [][]int{{1}, {2}, {3}, {4}}},
		{"numbers out of order", "### Phase 10: a\ndependencies: [2]\n### Phase 2: b\ndependencies: []\n", [][]int{{2}, {10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phases, err := ParsePlan([]byte(tt.md))
			if err != nil {
				t.Fatal(err)
			}
			waves, err := Waves(phases)
			if err != nil || !reflect.DeepEqual(waves, tt.waves) {
				t.Errorf("waves %v, %v; want %v", waves, err, tt.waves)
			}
		})
	}
}

func TestParseDepsInvalid(t *testing.T) {
	for _, in := range []string{`[]`, `{}`, `{"x": []}`, `[{"phase": 1, "deps": []}]`, `[{"phase": 1, "dependencies": [2]}]`, `[{"phase": -1}]`, `"1"`} {
		_, err := parseDeps([]byte(in))
		if fail.Code(err) != fail.Invalid {
			t.Errorf("parseDeps(%s): code %d (%v), want invalid", in, fail.Code(err), err)
		}
	}
}

func TestEstimateNeedsEveryPhase(t *testing.T) {
	phases := []Phase{{Number: 1, Dependencies: []int{}, EstimateMs: 5}, {Number: 2, Dependencies: []int{1}}, {Number: 3, Dependencies: []int{1}}}
	waves, _ := Waves(phases)
	_, err := EstimateWaves(phases, waves)
	wantCode(t, err, fail.Invalid)
	if !strings.Contains(err.Error(), "phases 2, 3") {
		t.Errorf("error should name the phases: %v", err)
	}
}

func TestEstimateBounds(t *testing.T) {
	_, err := ParsePlan([]byte("### Phase 1: a\ndependencies: []\nestimate_ms: 9223372036854775807\n"))
	wantCode(t, err, fail.Invalid)
}

func TestParsePhases(t *testing.T) {
	md := "### Phase 1: A\ndependencies: []\n\n### Phase 2: B\ndependencies: [1]\n"
	tests := []struct {
		name, data string
		want       string // waves, or "error"
	}{
		{"plan.md", md, "[[1] [2]]"},
		{"-", md, "[[1] [2]]"},
		{"deps.json", `{"1": [], "2": [1]}`, "[[1] [2]]"},
		{"-", `  [{"phase": 1, "dependencies": []}]`, "[[1]]"},
		{"-", "\n{\"1\": [], \"2\": []}", "[[1 2]]"},
		{"deps.json", md, "error"}, // a .json name is read as JSON, whatever it holds
		{"plan.md", "no phases here", "error"},
	}
	for _, tt := range tests {
		got := "error"
		if phases, err := ParsePhases(tt.name, []byte(tt.data)); err == nil {
			waves, _ := Waves(phases)
			got = fmt.Sprint(waves)
		}
		if got != tt.want {
			t.Errorf("ParsePhases(%q, %q): got %s, want %s", tt.name, tt.data, got, tt.want)
		}
	}
}
