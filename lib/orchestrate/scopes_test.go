package orchestrate

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// ownScopes is the default definition with scopes of its own, quick
// and deep, for its classifier to choose.
func ownScopes(t *testing.T) Request {
	t.Helper()
	m := machine.Default()
	m.Scopes = map[string]machine.Scope{"quick": m.Scopes["research-only"], "deep": m.Scopes["research-and-plan"]}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = machine.Parse(b); err != nil {
		t.Fatal(err)
	}
	return Request{Command: "triage", Description: "auth", Session: "s1", Machine: m, MachineJSON: b}
}

// TestClassifierChoosesOwnScopes: a definition's classifier answers
// with one of the definition's scopes, and the workflow starts in it; a
// built-in scope is refused, the classifier asked again with the
// definition's scopes.
func TestClassifierChoosesOwnScopes(t *testing.T) {
	p := project(t)
	r := ownScopes(t)
	out, err := Start(p, r)
	if err != nil || value(t, out, "NEXT") != "classify" {
		t.Fatalf("first start: %v\n%s", err, out)
	}
	path := value(t, out, "CLASSIFICATION_PATH")
	write := func(scope string) {
		cls := `{"workflow_type": "` + scope + `", "confidence": 0.9, "research_complexity": 1, "research_topics": ["auth"], "reasoning": "r"}`
		if err := os.WriteFile(path, []byte(cls), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("research-only")
	r.Classified = true
	again, err := Start(p, r)
	if err != nil || value(t, again, "NEXT") != "classify" || !strings.Contains(value(t, again, "DESCRIPTION"), "is not one of deep, quick") {
		t.Fatalf("a built-in scope: %v\n%s, want the classifier asked again for deep or quick", err, again)
	}
	write("deep")
	started, err := Start(p, r)
	if err != nil {
		t.Fatalf("classified deep: %v", err)
	}
	w, err := p.Workflow(idOf(t, started))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := w.ReadCheckpoint()
	if s := gjson.GetBytes(doc, checkpoint.PathScope).String(); s != "deep" {
		t.Errorf("scope %q, want deep", s)
	}
}

// TestOfflineOwnScopes: the offline classifier knows the built-in
// scopes only; a definition with scopes of its own needs one given.
func TestOfflineOwnScopes(t *testing.T) {
	r := ownScopes(t)
	r.Mode = "offline"
	_, err := Start(project(t), r)
	if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), "deep, quick: give --scope SCOPE") {
		t.Errorf("offline start with the definition's own scopes: %v, want a usage error asking for --scope", err)
	}
}

// TestTooManyArguments: a request with more items than a state that
// fans out over the arguments may run is refused before the workflow
// exists.
func TestTooManyArguments(t *testing.T) {
	m := machine.Default()
	research := m.Work["research"]
	research.Each = machine.Each{Source: machine.SourceArguments}
	m.Work["research"] = research
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := project(t)
	words := strings.Repeat("word ", limit.MaxWorkers+1)
	_, err = Start(p, Request{Command: "files", Scope: "research-only", Description: words, Session: "s1", Machine: m, MachineJSON: b})
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "state research: 51 workers") {
		t.Fatalf("start with %d items: %v, want exit 4 naming the state and the count", limit.MaxWorkers+1, err)
	}
	if ids, _ := p.List(); len(ids) != 0 {
		t.Errorf("workflows %v, want none", ids)
	}
}

// TestBuiltInOfARead: builtIn judges from what a caller already read
// (the kept definition and the checkpoint) as BuiltIn does from the
// files, and the hints built from one read name the right command.
func TestBuiltInOfARead(t *testing.T) {
	p := project(t)
	def := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth", Session: "s1"})
	r := ownScopes(t)
	r.Scope, r.Session = "quick", "s2"
	own := startedWorkflow(t, p, r)
	for _, tc := range []struct {
		w    *store.Workflow
		want bool
		hint string
	}{{def, true, "/flowstate:workflow-resume"}, {own, false, "/triage --resume " + own.ID}} {
		custom, _ := tc.w.MachineJSON()
		doc, err := tc.w.ReadCheckpoint()
		if err != nil {
			t.Fatal(err)
		}
		if got := builtIn(custom, doc); got != tc.want || BuiltIn(tc.w) != tc.want {
			t.Errorf("%s: builtIn %v, BuiltIn %v, want %v", tc.w.ID, got, BuiltIn(tc.w), tc.want)
		}
		if got := ResumeHint(tc.w); got != tc.hint {
			t.Errorf("%s: ResumeHint %q, want %q", tc.w.ID, got, tc.hint)
		}
	}
	// A resume of flowstate's own refuses the user's workflow, naming its
	// command; the one built in it continues.
	if err := (ResumeRequest{}).owns(own); fail.Code(err) != fail.Refused || !strings.Contains(err.Error(), "/triage --resume "+own.ID) {
		t.Errorf("owns(%s) = %v", own.ID, err)
	}
	if err := (ResumeRequest{}).owns(def); err != nil {
		t.Errorf("owns(%s) = %v", def.ID, err)
	}
}
