package checkpoint

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// TestViewOfReadsWhatThePathsName: the one-pass decoder reads, on every
// fixture (valid, legacy and migrated), what each field's path reads on
// its own.
func TestViewOfReadsWhatThePathsName(t *testing.T) {
	names := slices.Concat(fixtures(t, "valid"), fixtures(t, "legacy"))
	if len(names) < 10 {
		t.Fatalf("only %d fixtures", len(names))
	}
	for _, name := range names {
		doc := readFixture(t, name)
		if name == "valid/v2.1-full.json" {
			// The fields New and the hooks add, so that each is read once.
			doc = mustSetRaw(t, doc, PathSession, `"s-1"`)
			doc = mustSetRaw(t, doc, PathAgents, `["reviewer"]`)
		}
		got := ViewOf(doc)
		want := viewByPaths(t, doc)
		gates := gjson.GetBytes(doc, PathGates).Map()
		for state := range gates {
			g, ok := got.Gate(state)
			var wantGate machine.Gate
			if err := json.Unmarshal([]byte(gjson.GetBytes(doc, Gate(state)).Raw), &wantGate); err != nil || !ok || g != wantGate {
				t.Errorf("%s: Gate(%s) = %+v, %v; want %+v", name, state, g, ok, wantGate)
			}
		}
		if _, ok := got.Gate("no-such-state"); ok {
			t.Errorf("%s: a gate on a state without one", name)
		}
		got.gates = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n ViewOf = %+v\n  paths = %+v", name, got, want)
		}
		head := HeadOf(doc)
		head.gates = ""
		want.Error, want.Hold, want.Rewinds, want.LastRewind, want.Revision, want.Session = ErrorState{}, nil, 0, Rewind{}, 0, ""
		if !reflect.DeepEqual(head, want) {
			t.Errorf("%s:\n HeadOf = %+v\n  paths = %+v", name, head, want)
		}
	}
}

// viewByPaths reads the View field by field, each through its path.
func viewByPaths(t *testing.T, doc []byte) View {
	t.Helper()
	get := func(p string) gjson.Result { return gjson.GetBytes(doc, p) }
	v := View{
		ID: get(PathWorkflowID).String(), Command: get(PathCommand).String(), Description: get(PathDescription).String(),
		Status: get(PathStatus).String(), CreatedAt: get(PathCreatedAt).String(), UpdatedAt: get(PathUpdatedAt).String(),
		Session: get(PathSession).String(), CurrentState: get(PathCurrentState).String(), CompletedStates: []string{},
		Scope: get(PathScope).String(), TerminalState: get(PathTerminalState).String(),
		ConfigDescription: get(PathConfigDescription).String(), Complexity: get(PathResearchComplexity).Int(),
		TopicsJSON: "[]", Revision: get(PathRevision).Int(),
		Error: ErrorState{FailedState: get(PathFailedState).String(), RetryCount: get(PathRetryCount).Int()},
	}
	for _, s := range get(PathCompletedStates).Array() {
		v.CompletedStates = append(v.CompletedStates, s.String())
	}
	if r := get(PathResearchTopics); r.Exists() {
		v.TopicsJSON = r.Raw
	}
	if r := get(PathAgents); r.Exists() {
		v.Agents = []string{}
		for _, a := range r.Array() {
			v.Agents = append(v.Agents, a.String())
		}
	}
	if r := get(PathLastError); r.Type == gjson.String {
		v.Error.LastError = &r.Str
	}
	for state, n := range get(PathRetries).Map() {
		if v.Error.Retries == nil {
			v.Error.Retries = map[string]int64{}
		}
		v.Error.Retries[state] = n.Int()
	}
	if r := get(PathHold); r.IsObject() {
		v.Hold = &Hold{}
		if err := json.Unmarshal([]byte(r.Raw), v.Hold); err != nil {
			t.Fatal(err)
		}
	}
	if rw := get(PathRewinds).Array(); len(rw) > 0 {
		last := rw[len(rw)-1]
		v.Rewinds = len(rw)
		v.LastRewind = Rewind{At: last.Get("at").String(), From: last.Get("from").String(), To: last.Get("to").String(),
			Kind: last.Get("kind").String(), Reason: last.Get("reason").String(), By: last.Get("by").String(),
			Revision: last.Get("revision").Int()}
	}
	return v
}

// TestViewOfAHeldWorkflow: what status, sm-status and the refusals show
// of a workflow waiting for approval, rewound once.
func TestViewOfAHeldWorkflow(t *testing.T) {
	v := ViewOf(readFixture(t, "valid/v2.1-held.json"))
	if v.Status != AwaitingApproval || v.CurrentState != "plan" || !slices.Equal(v.CompletedStates, []string{"initialize", "research"}) {
		t.Errorf("status %q in %q after %q", v.Status, v.CurrentState, v.CompletedStates)
	}
	if v.Hold == nil || v.Hold.Sentence() != "waits for approval to enter implement: Approve the plan before implement starts" {
		t.Errorf("hold %+v", v.Hold)
	}
	if g, ok := v.Gate("complete"); !ok || g.RejectTo != "document" || g.Message != "Sign off" {
		t.Errorf("gate on complete: %+v, %v", g, ok)
	}
	if v.Rewinds != 1 || v.LastRewind.By != "alice" || v.LastRewind.To != "plan" {
		t.Errorf("rewinds %d, last %+v", v.Rewinds, v.LastRewind)
	}
	if v.Agents != nil || v.Error.LastError != nil || v.Error.FailedState != "" {
		t.Errorf("agents %q, error %+v", v.Agents, v.Error)
	}
}

// A document the store could not read is no View at all; JSON that is
// not an object, or fields of the wrong type, read as nothing.
func TestViewOfReadsLeniently(t *testing.T) {
	for _, doc := range []string{`[1,2]`, `"x"`, `{}`, `{"state_machine": 3, "hold": "x", "rewinds": {}, "error_state": []}`} {
		v := ViewOf([]byte(doc))
		if v.CurrentState != "" || v.Hold != nil || v.Error.LastError != nil || v.CompletedStates == nil || v.TopicsJSON != "[]" {
			t.Errorf("%s: %+v", doc, v)
		}
	}
}

// TestSentence: a hold in words, free text on one line.
func TestSentence(t *testing.T) {
	for _, tt := range []struct {
		h    Hold
		want string
	}{
		{Hold{Kind: HoldApproval, State: "implement", Message: "Approve\nthe plan"}, "waits for approval to enter implement: Approve the plan"},
		{Hold{Kind: HoldPause, By: "ann", Reason: "lunch"}, "is paused by ann: lunch"},
		{Hold{Kind: HoldPause}, "is paused"},
		{Hold{Kind: HoldCancel, By: "bo"}, "was cancelled by bo"},
		{Hold{Kind: HoldBudget, From: "plan", Message: "spent 1.2M tokens of 1.0M tokens"}, "is held at its spend limit: spent 1.2M tokens of 1.0M tokens"},
	} {
		if got := tt.h.Sentence(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.h, got, tt.want)
		}
	}
}

// TestPathsNameTheDocument: every Path constant of fields.go names a
// field of a checkpoint that has them all, so none is misspelt; the
// builders escape a name into one key for both gjson and sjson.
func TestPathsNameTheDocument(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-held.json")
	for p, raw := range map[string]string{
		PathSession: `"s-1"`, PathAgents: `["reviewer"]`, PathTopicDetails: `[{}]`, PathRevision: `7`,
		PathRetries: `{"plan": 1}`, PathBudget: `{"tokens": 500000}`,
	} {
		doc = mustSetRaw(t, doc, p, raw)
	}
	if err := Validate(doc); err != nil {
		t.Fatal(err)
	}
	paths := pathConstants(t)
	if len(paths) < 30 {
		t.Fatalf("found only %d Path constants in fields.go", len(paths))
	}
	for name, p := range paths {
		if !gjson.GetBytes(doc, p).Exists() {
			t.Errorf("%s = %q names no field of a full checkpoint", name, p)
		}
	}
	for _, name := range topNames {
		if !slices.Contains(slices.Collect(maps.Values(paths)), name) {
			t.Errorf("top-level field %s has no Path constant", name)
		}
	}

	odd := "a.b*c"
	for _, p := range []string{PhaseData(odd, "k"), SupervisorState(odd, "k"), Gate(odd), Retries(odd)} {
		out, err := sjson.SetBytes([]byte(`{}`), p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.GetBytes(out, p).Exists() || !strings.Contains(string(out), `"a.b*c"`) {
			t.Errorf("%s: set %s", p, out)
		}
	}
	if got := PhaseData("plan", PhaseApproval); got != "phase_data.plan.approval" {
		t.Errorf("PhaseData = %q", got)
	}
}

// pathConstants evaluates the Path constants of fields.go (string
// literals joined with +), by name.
func pathConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "fields.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]ast.Expr{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					exprs[n.Name] = vs.Values[i]
				}
			}
		}
	}
	var eval func(e ast.Expr) string
	eval = func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(e.Value)
			if err != nil {
				t.Fatal(err)
			}
			return s
		case *ast.Ident:
			return eval(exprs[e.Name])
		case *ast.BinaryExpr:
			return eval(e.X) + eval(e.Y)
		}
		t.Fatalf("fields.go: cannot evaluate %T", e)
		return ""
	}
	out := map[string]string{}
	for name, e := range exprs {
		if strings.HasPrefix(name, "Path") {
			out[name] = eval(e)
		}
	}
	return out
}

// TestViewKeepsNoPartOfTheDocument: the view is read in place but keeps
// copies, so a caller may reuse the document's bytes.
func TestViewKeepsNoPartOfTheDocument(t *testing.T) {
	doc := readFixture(t, "valid/v2.1-held.json")
	doc = mustSetRaw(t, doc, PathLastError, `"boom"`)
	doc = mustSetRaw(t, doc, PathFailedState, `"plan"`)
	doc = mustSetRaw(t, doc, PathRetries, `{"plan": 1}`)
	doc = mustSetRaw(t, doc, PathSession, `"s-1"`)
	v, head := ViewOf(doc), HeadOf(doc)
	show := func() string {
		return fmt.Sprintf("%+v %q %+v %s %+v", v, *v.Error.LastError, *v.Hold, v.gates, head)
	}
	want := show()
	clear(doc)
	if got := show(); got != want {
		t.Errorf("the view changed with the document's bytes:\n%s\nwas\n%s", got, want)
	}
}
