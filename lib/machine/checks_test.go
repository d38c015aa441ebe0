package machine

import (
	"slices"
	"strings"
	"testing"
)

// two is a definition with two states of work, a and b, a route
// through both and a recovery b -> fix, for the table below to break.
const two = `{"name": "two", "initial": "start",
 "transitions": {"start": ["a"], "a": ["b"], "b": ["end", "fix"], "fix": ["b"], "end": []},
 "scopes": {"all": {"terminal": "end", "route": ["start", "a", "b", "end"]}}%s,
 "work": {"a": %s, "b": %s}}`

// TestDefinitionRefusedUpFront: what no single field says wrong, but a
// run would refuse, is refused when the definition is read.
func TestDefinitionRefusedUpFront(t *testing.T) {
	const (
		a = `{"agent": "w", "each": ["x", "y"], "output": "a/{n}_{item}.md", "format": "report"}`
		b = `{"agent": "w", "output": "b/{n}.md", "format": "report"}`
	)
	for _, tc := range []struct{ extra, a, b, want string }{
		{"", a, b, ""},
		// Records: a key per state, the defaults of a-b and a_b alike.
		{"", strings.Replace(a, `"format"`, `"records": "r", "format"`, 1), strings.Replace(b, `"format"`, `"records": "r", "format"`, 1), `work.b.records: "r" is where work.a's workers are recorded too`},
		{"", strings.Replace(a, `"format"`, `"records": "b_workers", "format"`, 1), b, `work.b.records: "b_workers" is where work.a's workers are recorded too`},
		// Outputs: never the same file, nor a directory of another's.
		{"", a, `{"agent": "w", "output": "a/{n}_x.md", "format": "report"}`, `work.b.output: "a/{n}_x.md" and work.a.output "a/{n}_{item}.md" can name the same file`},
		{"", a, `{"agent": "w", "output": "a/1_x.md/more.md", "format": "report"}`, `work.b.output: "a/1_x.md/more.md" and work.a.output "a/{n}_{item}.md" can name the same file (or one a directory of the other)`},
		{"", a, `{"agent": "w", "output": "a/{n}_{item}.v2.md", "format": "report"}`, `can name the same file`},       // a's file after a rewind
		{"", a, `{"agent": "w", "output": "a/{n}_{item}.md.rejected", "format": "report"}`, `can name the same file`}, // a's file set aside
		{"", a, `{"agent": "w", "output": "a/{n}.md", "format": "report"}`, ""},                                       // 1.md is never 1_x.md
		{"", a, `{"agent": "w", "output": "{state}/{n}_{item}.md", "format": "report"}`, ""},                          // b/... is never a/...
		// A check that can fail needs a state after it to recover from.
		{`, "recovery": {"b": "fix"}`, a, `{"agent": "w", "id": "b_{run}", "output": "b/{run}.json", "format": "test-results", "fail_when": "tests_failed"}`,
			`work.b.fail_when: the recovery state fix has no work`},
		{`, "recovery": {"b": "fix"}`, a, `{"agent": "w", "id": "b_{run}", "output": "b/{run}.json", "format": "test-results", "fail_when": "failures"}`,
			`work.b.fail_when: "failures" is not a count of format test-results; use one of tests_failed, total_tests, tests_passed`},
		{`, "arguments": "files"`, a, b, ""},
		{`, "arguments": "dirs"`, a, b, ""},
		{`, "arguments": "[A-Z]+-[0-9]+"`, a, b, ""},
		{`, "arguments": "file"`, a, b, `arguments: "file" is neither files, dirs nor a pattern`},
		{`, "arguments": "([a-z]"`, a, b, `arguments: "([a-z]" is not a regular expression`},
		{`, "argument": "files"`, a, b, `unknown field "argument"; a definition has name, initial, transitions, scopes, recovery, gates, work, agents, classifier, approve_after, arguments`},
		{`, "scopes": {}`, a, b, `scopes: given twice`},
		{`, "gates": {"b": {"message": "ok", "to": "a"}}`, a, b, `gates.b: unknown field "to"; a gate has message, reject_to`},
	} {
		checkParsed(t, strings.Replace(strings.Replace(strings.Replace(two, "%s", tc.extra, 1), "%s", tc.a, 1), "%s", tc.b, 1), tc.want)
	}
}

// TestMachineRefusedUpFront: the machine's own parts a run would refuse.
func TestMachineRefusedUpFront(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"a route through a state twice", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":["c","d"],"c":["b"],"d":[]},"scopes":{"s":{"terminal":"d","route":["a","b","c","b","d"]}}}`,
			`machine "x": scope "s": the route passes b twice`},
		{"a state name too long", `{"name":"x","initial":"a","transitions":{"a":["` + strings.Repeat("b", 65) + `"],"` + strings.Repeat("b", 65) + `":[]},"scopes":{"s":{"terminal":"a","route":["a"]}}}`,
			`must match [a-z][a-z0-9_-]* and be at most 64 bytes`},
		{"work given and empty", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":[]},"scopes":{"s":{"terminal":"b","route":["a","b"]}},"work":{}}`,
			`machine "x": work: no state has work`},
		{"a check that ends its scope", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":["f"],"f":["b"]},"recovery":{"b":"f"},"scopes":{"s":{"terminal":"b","route":["a","b"]}},
		  "work":{"b":{"agent":"w","id":"b_{run}","output":"b/{run}.json","format":"test-results","fail_when":"tests_failed"},"f":{"agent":"w","each":"failures","id":"f_{run}","output":"f/{run}.md","format":"report"}}}`,
			`work.b.fail_when: state b ends scope s, and a workflow leaves no state it ended in`},
		{"a key twice at the top", `{"name":"x","name":"y","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"]}}}`,
			`machine "y": name: given twice`},
		{"a state twice in transitions", `{"name":"x","initial":"a","transitions":{"a":[],"a":["a"]},"scopes":{"s":{"terminal":"a","route":["a"]}}}`,
			`transitions.a: given twice`},
		{"a field of a scope unknown", `{"name":"x","initial":"a","transitions":{"a":[]},"scopes":{"s":{"terminal":"a","route":["a"],"routes":[]}}}`,
			`scopes.s: unknown field "routes"; a scope has terminal, route`},
		{"a newline in a gate's message", `{"name":"x","initial":"a","transitions":{"a":["b"],"b":[]},"scopes":{"s":{"terminal":"b","route":["a","b"]}},"gates":{"b":"Approve\nNEXT=done"}}`,
			`gates.b: "Approve\nNEXT=done" holds a control character`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParsed(t, tc.json, tc.want) })
	}
}

// A machine without work (for sm-init) is still a machine.
func TestMachineWithoutWork(t *testing.T) {
	m, err := Parse([]byte(minimal))
	if err != nil || m.Work != nil || Default().Work == nil {
		t.Errorf("minimal: %v, work %v", err, m.Work)
	}
}

// A section is read the way its author wrote it, "## Overview" or
// "Overview", and checked as "Overview".
func TestSectionsNormalized(t *testing.T) {
	m, err := Parse([]byte(strings.Replace(review, "%s", `{"agent": "r", "output": "r.md", "format": "markdown", "sections": ["## Overview", "###  Next steps ", "Risks"]}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Work["review"].Sections; !slices.Equal(got, []string{"Overview", "Next steps", "Risks"}) {
		t.Errorf("sections %q", got)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		json    string
		workers int
		want    int
	}{
		{`2`, 5, 2}, {`0`, 5, 0}, {`"50%"`, 3, 2}, {`"50%"`, 4, 2}, {`"100%"`, 3, 3}, {`"1%"`, 3, 1}, {`" 75 % "`, 4, 3},
	} {
		var s Share
		if err := s.UnmarshalJSON([]byte(tc.json)); err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if got := s.Of(tc.workers); got != tc.want {
			t.Errorf("%s of %d = %d, want %d", tc.json, tc.workers, got, tc.want)
		}
		w := Work{MinDelivered: &s}
		if got := w.Delivered(tc.workers); got != tc.want {
			t.Errorf("Delivered: %s of %d = %d, want %d", tc.json, tc.workers, got, tc.want)
		}
	}
	if got := (Work{}).Delivered(5); got != DefaultMinDelivered {
		t.Errorf("unset: %d", got)
	}
}

// TestOutputsMeet: which output templates can name the same path.
func TestOutputsMeet(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		meet bool
	}{
		{"r/{n}.md", "r/{n}.md", true},
		{"r/{n}.md", "r/1.md", true},
		{"r/{n}.md", "r/x.md", false},
		{"r/{n:3}_{item}.md", "r/{n:3}.md", false},
		{"r/{item}.md", "r/{n}.md", true}, // an item can be a number
		{"r/{item}_{n}.md", "r/{n}_{item}.md", true},
		{"r/{state}.md", "r/b.md", false}, // state is a
		{"r/{state}.md", "r/a.md", true},
		{"summaries/{n:3}_phase_{n}.md", "summaries/workflow_summary.md", false},
		{"tests/r{run}_{item}_results.json", "tests/r1_unit_results.json", true},
		{"x/{item}.json", "x/A.json", true}, // on a file system that ignores case
		{"./x//{n}.json", "x/1.json", true},
		{"x/{n}/", "x/1", true},
	} {
		if got := outputPattern("a", tc.a).meets(outputPattern("a", tc.b)); got != tc.meet {
			t.Errorf("%s meets %s: %v, want %v", tc.a, tc.b, got, tc.meet)
		}
		if got := outputPattern("a", tc.b).meets(outputPattern("a", tc.a)); got != tc.meet {
			t.Errorf("%s meets %s: %v, want %v", tc.b, tc.a, got, tc.meet)
		}
	}
	if !outputPattern("a", "r/{n}.md").versioned().meets(lit("r/7.v2.md")) || outputPattern("a", "r/{n}").versioned().meets(lit("r/7.md")) {
		t.Error("versioned: the version goes before the extension")
	}
}
