package orchestrate

import (
	"fmt"
	"strings"
	"testing"
)

func TestContextOf(t *testing.T) {
	out := map[string][]string{"research": {"r1", "r2"}, "plan": {"p"}, "implement": {"i1"}, "test": {"t1"}}
	for state, want := range map[string]string{
		"research": "[]",
		"plan":     "[r1 r2]",
		"test":     "[p i1]",
		"debug":    "[t1 p i1]",
		"document": "[p i1 t1 r1 r2]",
	} {
		if got := fmt.Sprint(ContextOf(role(state), out)); got != want {
			t.Errorf("ContextOf(%s) = %s, want %s", state, got, want)
		}
	}
}

func TestBrief(t *testing.T) {
	f := Facts{Description: "Add login", Failures: "1 failing tests; TestLogin"}
	if got, want := Brief(role("research"), f, nil), "# Brief: research\n\n## Workflow request\n\nAdd login\n\n## Read first\n\nNothing yet: start from the workflow request.\n"; got != want {
		t.Errorf("research brief:\n%s\nwant\n%s", got, want)
	}
	f.TopicNotes = []string{"Auth: how logins work"}
	if got := Brief(role("research"), f, nil); !strings.Contains(got, "## Topics\n\n- Auth: how logins work\n") {
		t.Errorf("research brief without the classifier's topic notes:\n%s", got)
	}
	got := Brief(role("debug"), f, []string{"a/r1_unit.json", "a/plan.md"})
	for _, want := range []string{"## What failed\n\n1 failing tests; TestLogin\n", "## Read first\n\n- a/r1_unit.json\n- a/plan.md\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("debug brief lacks %q:\n%s", want, got)
		}
	}
}

func TestBriefFeedback(t *testing.T) {
	fb := Feedback("reject", "ann", "cover the\naudit log", []string{"/s/plans/001_x.md"})
	if want := "ann rejected /s/plans/001_x.md; do it again, addressing: cover the\naudit log"; fb != want {
		t.Errorf("Feedback = %q, want %q", fb, want)
	}
	if got := Brief(role("plan"), Facts{Description: "d", Feedback: fb}, []string{"r1"}); !strings.Contains(got, "## Sent back\n\n"+fb+"\n") {
		t.Errorf("brief without the feedback:\n%s", got)
	}
	if got := Feedback("rewind", "bob", "", nil); got != "" {
		t.Errorf("Feedback without a reason = %q, want none", got)
	}
	if got, want := Feedback("rewind", "bob", "simpler", nil), "bob sent back the earlier work; do it again, addressing: simpler"; got != want {
		t.Errorf("Feedback = %q, want %q", got, want)
	}
}
