package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func defaultParams() Params {
	return Params{
		WorkflowID:    "coordinate_1795291157304325067",
		Command:       "coordinate",
		Description:   "Research auth patterns & plan <login>",
		Scope:         "research-and-plan",
		ProjectName:   "auth_system",
		InitialState:  "initialize",
		TerminalState: "plan",
		Transitions:   machine.Default().Transitions,
		Classification: Classification{
			WorkflowType:       "research-and-plan",
			ResearchComplexity: 3,
			ResearchTopics:     []string{"session auth", "OAuth2"},
			Confidence:         0.9,
			Reasoning:          "research then a plan",
			ClassifiedAt:       "2026-04-01T11:59:58Z",
		},
		Now: time.Date(2026, 4, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
	}
}

// New's output is the fixture valid/v2.1-new.json (go test -update rewrites it).
func TestNewGolden(t *testing.T) {
	out, err := New(defaultParams())
	if err != nil {
		t.Fatal(err)
	}
	const golden = "valid/v2.1-new.json"
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", golden), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readFixture(t, golden); !bytes.Equal(out, want) {
		t.Errorf("New output differs from %s:\n%s", golden, out)
	}
	for _, want := range []string{`"created_at": "2026-04-01T10:00:00Z"`, `"complete": []`, `"completed_states": []`, `& plan <login>"`, `"classified_at": "2026-04-01T11:59:58Z"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s", want)
		}
	}
	if again, _, err := Migrate(out, intent.Scope); err != nil || !bytes.Equal(again, out) {
		t.Errorf("Migrate(New(), intent.Scope) changed it: %v", err)
	}
}

func TestNewDefaultsAndErrors(t *testing.T) {
	p := defaultParams()
	p.Classification = Classification{}
	out, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"workflow_type": "research-and-plan"`, `"research_complexity": 2`, `"research_topics": []`, `"classified_at": null`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("defaults: output lacks %s", want)
		}
	}
	// Topics given as objects are kept as given, beside their names.
	p = defaultParams()
	p.Classification.TopicDetails = []byte(`[{"short_name":"A","detailed_description":"about A"},{"short_name":"B"}]`)
	if out, err = New(p); err != nil || !bytes.Contains(out, []byte(`"detailed_description": "about A"`)) {
		t.Errorf("topic details not kept: %v\n%s", err, out)
	}
	tests := []struct {
		name string
		edit func(*Params)
		want string
	}{
		{"no id", func(p *Params) { p.WorkflowID = "" }, "empty workflow id"},
		{"no time", func(p *Params) { p.Now = time.Time{} }, "zero time"},
		{"no table", func(p *Params) { p.Transitions = nil }, "empty transition table"},
		{"initial not a state", func(p *Params) { p.InitialState = "start" }, `state_machine.current_state: "start" is not a state`},
		{"terminal not a state", func(p *Params) { p.TerminalState = "done" }, `terminal_state: "done" is not a state`},
		{"target not a state", func(p *Params) { p.Transitions["plan"] = []string{"ship"} }, `transition_table.plan.0: "ship" is not a state`},
		{"complexity", func(p *Params) { p.Classification.ResearchComplexity = 9 }, "research_complexity: must be 1, 2, 3 or 4, got 9"},
		{"confidence", func(p *Params) { p.Classification.Confidence = 95 }, "confidence: must be from 0 to 1"},
		{"classified_at", func(p *Params) { p.Classification.ClassifiedAt = "yesterday" }, "classified_at: must be null or an RFC 3339 UTC time"},
		{"topic details", func(p *Params) { p.Classification.TopicDetails = []byte(`["A"]`) }, "research_topic_details"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultParams()
			tt.edit(&p)
			_, err := New(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) || fail.Code(err) != fail.Invalid {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}
