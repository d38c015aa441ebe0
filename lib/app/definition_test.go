package app

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/scaffold"
)

// runWith runs flowstate in-process in project dir, as session s1, with
// stdin.
func runWith(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runEnv(t, dir, nil, stdin, args...)
}

// runEnv is runWith with more variables in the environment.
func runEnv(t *testing.T, dir string, more map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CLAUDE_CODE_SESSION_ID": "s1"}
	maps.Copy(env, more)
	code = Main(append([]string{"flowstate"}, args...), IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Cwd: dir})
	return out.String(), errb.String(), code
}

// newAudit writes `flowstate new command audit` into a new project and
// returns the project and the definition, decoded for a test to change.
func newAudit(t *testing.T) (string, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	files, err := scaffold.NewCommand("audit", "")
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Path, ".json") {
			if err := json.Unmarshal(f.Data, &def); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, def
}

// work is the work of state in def.
func work(def map[string]any, state string) map[string]any {
	return def["work"].(map[string]any)[state].(map[string]any)
}

// TestDefinitionsRefusedUpFront: a definition whose run a step would
// refuse, once its workflow exists, is refused by graph and by
// phase-start alike (exit 4, naming the state and the field), and the
// refused start leaves nothing behind. Each of these passed graph and
// failed its run (issue 35, items 7-10; issue 33).
func TestDefinitionsRefusedUpFront(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(def map[string]any)
		raw    func(string) string // a change to the file's text, for what JSON values cannot say
		want   string
	}{
		{name: "output is flowstate's own brief", change: func(d map[string]any) { work(d, "summarize")["output"] = "briefs/audit-reviewer.md" },
			want: `work.summarize.output: "briefs/audit-reviewer.md" can name a file of flowstate's own`},
		{name: "output is the classification", change: func(d map[string]any) { work(d, "summarize")["output"] = "classification.json" },
			want: `work.summarize.output: "classification.json" can name a file of flowstate's own`},
		{name: "a route through a state twice", change: func(d map[string]any) {
			d["transitions"] = map[string]any{"initialize": []any{"review"}, "review": []any{"summarize"}, "summarize": []any{"review", "complete"}, "complete": []any{}}
			d["scopes"] = map[string]any{"full": map[string]any{"terminal": "complete", "route": []any{"initialize", "review", "summarize", "review", "complete"}}}
		}, want: `scope "full": the route passes review twice`},
		{name: "records a.b", change: func(d map[string]any) { work(d, "review")["records"] = "a.b" },
			want: `work.review.records: "a.b"; give a key of letters, digits`},
		{name: "an id with a newline", change: func(d map[string]any) { work(d, "review")["id"] = "review\n{n}" },
			want: `work.review.id: "review\n{n}" holds a control character (U+000A)`},
		{name: "a NUL in the output", change: func(d map[string]any) { work(d, "review")["output"] = "reviews/{n}\x00.md" },
			want: `work.review.output: "reviews/{n}\x00.md" holds a control character (U+0000)`},
		{name: "51 fixed items", change: func(d map[string]any) {
			var items []any
			for i := range 51 {
				items = append(items, "lens "+string(rune('a'+i%26))+string(rune('a'+i/26)))
			}
			work(d, "review")["each"] = items
		}, want: `work.review.each: 51 items, more than the 50 workers a state may run`},
		{name: "two states sharing a records key", change: func(d map[string]any) {
			work(d, "review")["records"] = "reviews"
			work(d, "summarize")["records"] = "reviews"
		}, want: `work.summarize.records: "reviews" is where work.review's workers are recorded too`},
		{name: "a section no heading matches", change: func(d map[string]any) {
			work(d, "summarize")["format"] = "markdown"
			work(d, "summarize")["sections"] = []any{"# Overview"}
		}, want: `work.summarize.sections[0]: "# Overview" is not a section`},
		{name: "a field the check counts that is no number", change: func(d map[string]any) {
			d["recovery"] = map[string]any{"review": "summarize"}
			d["transitions"].(map[string]any)["summarize"] = []any{"complete", "review"}
			w := work(d, "review")
			w["format"], w["output"], w["id"], w["fail_when"] = "json", "reviews/{run}_{n:3}_{item}.json", "review_{n}_r{run}", "errors"
			w["fields"] = []any{map[string]any{"name": "errors", "type": "string"}}
			delete(w, "aggregate")
		}, want: `work.review.fields[0]: "errors" is what fail_when counts, so it is a number, not a string`},
		{name: "an unknown key in work", change: func(d map[string]any) { work(d, "review")["field"] = []any{"verdict"} },
			want: `work.review: unknown field "field"; a state's work has agent, supervisor, each, id, label, output, format, sections, fields,`},
		{name: "a key given twice", raw: func(s string) string {
			return strings.Replace(s, `"format": "report",`, `"format": "report", "format": "json",`, 1)
		}, want: `work.review.format: given twice`},
		{name: "min_delivered above the fixed items", change: func(d map[string]any) { work(d, "review")["min_delivered"] = 4 },
			want: `work.review.min_delivered: 4, more than the 3 workers of the state`},
		{name: "arguments that are no pattern", change: func(d map[string]any) { d["arguments"] = "file" },
			want: `arguments: "file" is neither files, dirs nor a pattern`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, def := newAudit(t)
			if tc.change != nil {
				tc.change(def)
			}
			data, err := json.MarshalIndent(def, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if tc.raw != nil {
				text = tc.raw(text)
			}
			if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runWith(t, dir, "", "graph", "--machine", "broken.json"); code != 4 || !strings.Contains(stderr, tc.want) {
				t.Errorf("graph: exit %d, %s; want exit 4 with %q", code, stderr, tc.want)
			}
			_, stderr, code := runWith(t, dir, "the login handler\n", "phase-start", "--command", "audit", "--machine", "broken.json")
			if code != 4 || !strings.Contains(stderr, tc.want) {
				t.Errorf("phase-start: exit %d, %s; want exit 4 with %q", code, stderr, tc.want)
			}
			assertNothingStarted(t, dir)
		})
	}
}

// assertNothingStarted: a refused start left no workflow, no spec
// directory and no run record behind.
func assertNothingStarted(t *testing.T, dir string) {
	t.Helper()
	if out, stderr, code := runWith(t, dir, "", "list"); code != 0 || strings.Count(out, "\n") > 1 {
		t.Errorf("list after a refused start: exit %d, %s%s", code, out, stderr)
	}
	for _, left := range []string{".flowstate", ".claude/state/workflows", ".claude/state/runs"} {
		if entries, err := os.ReadDir(filepath.Join(dir, left)); err == nil && len(entries) > 0 {
			t.Errorf("a refused start left %s behind: %v", left, entries)
		}
	}
}

// TestStartChecksArguments: what a definition says its items are, and
// what its fan-out over them can run, is checked when the command
// starts, before its workflow exists, naming each bad argument.
func TestStartChecksArguments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(def map[string]any)
		args   string
		code   int
		want   string
	}{
		{"files", func(d map[string]any) { d["arguments"] = "files" }, "a.go, nope.go, src", 2,
			"/audit takes arguments that are each a file, and these are not: nope.go (not found), src (a directory); nothing was started"},
		{"dirs", func(d map[string]any) { d["arguments"] = "dirs" }, "src a.go", 2,
			"/audit takes arguments that are each a directory, and these are not: a.go (not a directory)"},
		{"a pattern", func(d map[string]any) { d["arguments"] = "[A-Z]+-[0-9]+" }, "AB-1, ab-2, AB-3x", 2,
			"/audit takes arguments that are each text matching [A-Z]+-[0-9]+, and these are not: ab-2 (does not match), AB-3x (does not match)"},
		{"min_delivered above the arguments", func(d map[string]any) {
			work(d, "review")["each"], work(d, "review")["min_delivered"] = "arguments", 3
		}, "a.go src", 4, "state review: min_delivered: 3, more than the 2 workers of the state (one per item of the arguments)"},
		{"arguments whose files collide", func(d map[string]any) {
			w := work(d, "review")
			w["each"], w["output"], w["id"] = "arguments", "reviews/{item}.json", "review_{n}"
		}, "a.go, a-go", 4, "state review: workers 1 (a.go) and 2 (a-go) get the same output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, def := newAudit(t)
			tc.change(def)
			data, err := json.Marshal(def)
			if err != nil {
				t.Fatal(err)
			}
			for path, data := range map[string][]byte{".claude/flows/audit.json": data, "a.go": nil, "src/b.go": nil} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, path), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, stderr, code := runWith(t, dir, "", "graph", "--machine", ".claude/flows/audit.json"); code != 0 {
				t.Fatalf("graph: exit %d, %s", code, stderr)
			}
			_, stderr, code := runWith(t, dir, tc.args, "phase-start", "--command", "audit", "--machine", ".claude/flows/audit.json")
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("phase-start %q: exit %d, %s; want exit %d with %q", tc.args, code, stderr, tc.code, tc.want)
			}
			assertNothingStarted(t, dir)
		})
	}
}

// TestStartHint: a command of one's own started without arguments is
// told its own argument-hint, in a project and in a plugin; the built-in
// commands keep their example.
func TestStartHint(t *testing.T) {
	dir, _ := newAudit(t)
	_, stderr, code := runWith(t, dir, "\n", "phase-start", "--command", "audit", "--machine", ".claude/flows/audit.json")
	if code != 2 || stderr != "flowstate: no arguments given; run /audit WHAT TO REVIEW\n" {
		t.Errorf("project: exit %d, %q", code, stderr)
	}
	plugin := t.TempDir()
	files, err := scaffold.NewCommand("triage", "kit")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data := f.Data
		if strings.HasSuffix(f.Path, "triage.md") && strings.HasPrefix(f.Path, "commands/") {
			data = []byte(strings.Replace(string(data), "argument-hint: WHAT TO REVIEW", "argument-hint: FILE...", 1))
		}
		if err := os.MkdirAll(filepath.Join(plugin, filepath.Dir(f.Path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugin, f.Path), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code = runWith(t, dir, "", "phase-start", "--command", "triage", "--machine", filepath.Join(plugin, "flows", "triage.json"))
	if code != 2 || stderr != "flowstate: no arguments given; run /triage FILE...\n" {
		t.Errorf("plugin: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runWith(t, dir, "", "phase-start", "--command", "coordinate"); code != 2 || !strings.Contains(stderr, "e.g. /coordinate research auth patterns") {
		t.Errorf("built-in: exit %d, %q", code, stderr)
	}
}
