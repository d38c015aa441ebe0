package compat

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// block is one bash block of a session in a project: each call is a new
// process, which knows only the shell state it is given.
type block struct {
	t       *testing.T
	dir     string
	session string
	shellID string // the shell's WORKFLOW_ID
	// stateFile is the shell's STATE_FILE, which init_ and
	// load_workflow_state set.
	stateFile string
	vars      map[string]string // shell variables passed with --set
	funcs     []string          // shell functions passed with --function
	stdin     string
	env       map[string]string // more of the environment
}

// result is what a call gave back.
type result struct {
	rc                     int
	stdout, stderr, answer string
}

func newProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (b block) call(fn string, args ...string) result {
	b.t.Helper()
	argv := []string{}
	if b.shellID != "" {
		argv = append(argv, "--workflow-id", b.shellID)
	}
	if b.stateFile != "" {
		argv = append(argv, "--state-file", b.stateFile)
	}
	for k, v := range b.vars {
		argv = append(argv, "--set", k+"="+v)
	}
	for _, f := range b.funcs {
		argv = append(argv, "--function", f)
	}
	argv = append(append(argv, "--", fn), args...)
	var out, errOut, ans strings.Builder
	env := map[string]string{"CLAUDE_PROJECT_DIR": b.dir, "CLAUDE_CODE_SESSION_ID": b.session}
	for k, v := range b.env {
		env[k] = v
	}
	rc := Call(Env{
		Stdin: strings.NewReader(b.stdin), Stdout: &out, Stderr: &errOut, Answer: &ans,
		Getenv: func(k string) string { return env[k] }, Cwd: b.dir, Now: time.Now,
	}, argv)
	return result{rc, out.String(), errOut.String(), ans.String()}
}

// must fails the test unless r returned rc.
func (r result) must(t *testing.T, rc int) result {
	t.Helper()
	if r.rc != rc {
		t.Fatalf("rc %d, want %d\nstdout %s\nstderr %s", r.rc, rc, r.stdout, r.stderr)
	}
	return r
}

// has reports whether the answer assigns NAME=value.
func (r result) has(line string) bool { return strings.Contains("\n"+r.answer, "\n"+line+"\n") }

const classification = `{"workflow_type": "research-and-plan", "confidence": 0.9, "research_complexity": 2, "research_topics": ["auth", "sessions"], "reasoning": "r"}`

// start makes a research-and-plan workflow for the session and returns
// the block that knows its id.
func start(t *testing.T, dir, session string) block {
	t.Helper()
	b := block{t: t, dir: dir, session: session}
	r := b.call("sm_init", "Add login", "coordinate", classification).must(t, 0)
	b.shellID = answerOf(r.answer, "WORKFLOW_ID") // an id is never quoted
	b.stateFile = answerOf(r.answer, "STATE_FILE")
	return b
}

// answerOf is the value assigned to name in an answer, as written.
func answerOf(answer, name string) string {
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimPrefix(line, "export ")
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v
		}
	}
	return ""
}

// TestInitAcrossBlocks: init_workflow_state starts a workflow whose
// state file exists at once, at the original's path; what the command
// stores before sm_init is kept, the next blocks of the session (never
// another session's) find it, and sm_init (with a slash command) gives
// it its scope.
func TestInitAcrossBlocks(t *testing.T) {
	dir := newProject(t)
	b1 := block{t: t, dir: dir, session: "s1"}
	r := b1.call("init_workflow_state", "coordinate_42").must(t, 0)
	file := filepath.Join(dir, ".claude/tmp/workflow_coordinate_42.sh")
	if r.stdout != file+"\n" || !r.has("export WORKFLOW_ID=coordinate_42") || !r.has("export STATE_FILE="+file) {
		t.Fatalf("init_workflow_state: %+v", r)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no state file: %v", err)
	}
	b1.stateFile = file
	b1.call("append_workflow_state", "TOPIC_PATH", "specs/042").must(t, 0)
	b1.call("append_workflow_state", "COMMAND_NAME", "/coordinate").must(t, 0) // sm_init's to set, not yet set
	b1.call("init_workflow_state", "coordinate_42").must(t, 0)                 // again: the same, nothing lost

	// Block 2, before sm_init: the stored values and the original's defaults.
	b2 := block{t: t, dir: dir, session: "s1"}
	r = b2.call("load_workflow_state").must(t, 0)
	if !r.has("export WORKFLOW_ID=coordinate_42") || !r.has("export TOPIC_PATH=specs/042") || !r.has("export COMMAND_NAME=/coordinate") ||
		!r.has("export CURRENT_STATE=initialize") || strings.Contains(r.answer, "WORKFLOW_SCOPE") || strings.Contains(r.answer, "TERMINAL_STATE") {
		t.Errorf("load before sm_init: %s", r.answer)
	}
	if r := (block{t: t, dir: dir, session: "s2"}).call("load_workflow_state").must(t, 2); r.answer != "" {
		t.Errorf("another session got %q", r.answer)
	}

	// Block 3 starts it, block 4 finds it.
	b2.call("sm_init", "Add login", "/coordinate", "research-and-plan", "2", "[]").must(t, 0)
	r = (block{t: t, dir: dir, session: "s1"}).call("load_workflow_state").must(t, 0)
	if !r.has("export WORKFLOW_ID=coordinate_42") || !r.has("export CURRENT_STATE=initialize") || !r.has("STATE_RESEARCH=research") ||
		!r.has("export WORKFLOW_SCOPE=research-and-plan") || !r.has("export TERMINAL_STATE=plan") || !r.has("export COMMAND_NAME=/coordinate") || !r.has("export TOPIC_PATH=specs/042") {
		t.Errorf("block 4: %s", r.answer)
	}
	// Another session may not adopt it.
	if r := (block{t: t, dir: dir, session: "s2"}).call("init_workflow_state", "coordinate_42").must(t, 1); !strings.Contains(r.stderr, "another Claude Code session") {
		t.Errorf("adopted by another session: %q", r.stderr)
	}
	// Once started, sm_init on it again with other values is refused.
	b2.shellID = "coordinate_42"
	b2.call("sm_init", "Other", "/coordinate", "full-implementation", "2", "[]").must(t, 1)
}

// TestSmInitForms: the design's forms and the library's, each as they
// describe it, and every other call refused with the forms to use.
func TestSmInitForms(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		rc     int
		scope  string
		stdout string
		stderr string
	}{
		{"classifier JSON", []string{"Add login", "coordinate", classification}, 0, "research-and-plan", "", ""},
		{"CLASSIFICATION_COMPLETE answer", []string{"Add login", "coordinate", "CLASSIFICATION_COMPLETE: " + classification}, 0, "research-and-plan", "", ""},
		{"no classification: offline", []string{"Research the auth module and plan the session store migration", "coordinate"}, 0, "research-and-plan", "", "classified offline as research-and-plan"},
		{"an empty third argument is none", []string{"Research the auth module and plan the session store migration", "coordinate", ""}, 0, "research-and-plan", "", "classified offline"},
		{"no classification, vague", []string{"stuff", "coordinate"}, 1, "", "", "pass the workflow-classifier agent's JSON"},
		{"a low-confidence classification", []string{"x", "coordinate", strings.Replace(classification, "0.9", "0.3", 1)}, 1, "", "", "confidence"},
		{"a scope where the JSON goes", []string{"x", "coordinate", "research-only"}, 1, "", "", "five-argument form"},
		{"five arguments", []string{"Add login", "coordinate", "research-only", "45", `["auth"]`}, 0, "research-only", "2\n", ""},
		{"five, complexity as a score", []string{"Add login", "coordinate", "full-implementation", "75", `[]`}, 0, "full-implementation", "4\n", ""},
		{"five, an empty one", []string{"Add login", "coordinate", "", "2", `[]`}, 1, "", "", "none empty"},
		{"five, unknown scope", []string{"Add login", "coordinate", "everything", "2", `[]`}, 1, "", "", "Invalid workflow_type: everything"},
		{"five, topics not an array", []string{"Add login", "coordinate", "research-only", "2", `{}`}, 1, "", "", "JSON array"},
		{"one argument", []string{"Add login"}, 1, "", "", "got 1 arguments"},
		{"four arguments", []string{"a", "b", "c", "d"}, 1, "", "", "sm_init DESCRIPTION COMMAND [CLASSIFICATION_JSON], or"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := block{t: t, dir: newProject(t), session: "s"}
			r := b.call("sm_init", tc.args...).must(t, tc.rc)
			if !strings.Contains(r.stderr, tc.stderr) || r.stdout != tc.stdout {
				t.Errorf("stdout %q stderr %q, want %q and stderr with %q", r.stdout, r.stderr, tc.stdout, tc.stderr)
			}
			if tc.rc != 0 {
				if list, _ := mustProject(t, b.dir).List(); len(list) != 0 {
					t.Errorf("a refused sm_init created %v", list)
				}
				return
			}
			if !r.has("export WORKFLOW_SCOPE="+tc.scope) || !r.has("COMPLETED_STATES=()") || !r.has("export COMPLETED_STATES_COUNT=0") {
				t.Errorf("answer:\n%s", r.answer)
			}
		})
	}
}

func mustProject(t *testing.T, dir string) *store.Project {
	t.Helper()
	p, err := store.FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSmInitAgain: a block run again starts nothing new; another start
// on the same id is refused.
func TestSmInitAgain(t *testing.T) {
	b := block{t: t, dir: newProject(t), session: "s", shellID: "coordinate_7"}
	b.call("sm_init", "Add login", "coordinate", classification).must(t, 0)
	b.call("sm_init", "Add login", "coordinate", classification).must(t, 0)
	if r := b.call("sm_init", "Add logout", "coordinate", classification).must(t, 1); !strings.Contains(r.stderr, "exists already") {
		t.Errorf("stderr %q", r.stderr)
	}
	b.call("sm_transition", "research").must(t, 0)
	b.call("sm_init", "Add login", "coordinate", classification).must(t, 1)
}

// TestTransitionForms: STATE, STATE REASON, FROM TO and the checkpoint
// forms, from research; a call that cannot be read one way is refused
// and leaves the workflow where it was.
func TestTransitionForms(t *testing.T) {
	tests := []struct {
		fn     string
		args   []string
		rc     int
		state  string // afterwards
		stderr string
		key    string // a key the checkpoint has afterwards
	}{
		{"sm_transition", []string{"plan"}, 0, "plan", "", ""},
		{"sm_transition", []string{"plan", "research done"}, 0, "plan", "", ""},
		{"sm_transition", []string{"plan", "done"}, 0, "plan", "", ""},
		{"sm_transition", []string{"research", "plan"}, 0, "plan", "", ""},
		{"sm_transition", []string{"research"}, 0, "research", "", ""},
		{"sm_transition", []string{"research", "research"}, 0, "research", "", ""},
		{"sm_transition", []string{"initialize", "plan"}, 1, "research", `is in "research", not "initialize"`, ""},
		{"sm_transition", []string{"initialize", "research"}, 0, "research", "", ""}, // already there: run again
		{"sm_transition", []string{"research", "planning"}, 1, "research", `reads like "plan"`, ""},
		{"sm_transition", []string{"plan", "planned"}, 1, "research", `reads like "plan"`, ""},
		{"sm_transition", []string{"planning"}, 1, "research", "did you mean plan?", ""},
		{"sm_transition", []string{"implement"}, 1, "research", "not on the route of scope research-and-plan", ""},
		{"sm_transition", []string{"initialize"}, 1, "research", "not allowed", ""},
		{"sm_transition", []string{"testing", "documentation"}, 1, "research", "(sm_transition test document)", ""},
		{"sm_transition", nil, 1, "research", "usage", ""},
		{"sm_transition", []string{"a", "b", "c"}, 1, "research", "usage", ""},
		{"sm_transition_with_checkpoint", []string{"plan", `{"reports": ["r.md"]}`}, 0, "plan", "", "reports"},
		{"sm_transition_with_checkpoint", []string{"research", "plan", `{"reports": ["r.md"]}`}, 0, "plan", "", "reports"},
		{"sm_transition_with_checkpoint", []string{"research", `{"reports": []}`}, 0, "research", "", "reports"},
		{"sm_transition_with_checkpoint", []string{"initialize", "plan", `{"reports": []}`}, 1, "research", "not \"initialize\"", ""},
		{"sm_transition_with_checkpoint", []string{"research", "planning", `{}`}, 1, "research", "did you mean plan?", ""},
		{"sm_transition_with_checkpoint", []string{"plan", `{"reports": `}, 1, "research", "not a JSON object", ""},
		{"sm_transition_with_checkpoint", []string{"plan", `{"status": "failed"}`}, 1, "research", "sm-finish", ""},
		{"sm_transition_with_checkpoint", []string{"plan", "reason"}, 1, "research", "usage", ""},
		{"sm_transition_with_checkpoint", []string{"test", `{"k": 1}`}, 1, "research", "not on the route of scope research-and-plan", ""},
	}
	for _, tc := range tests {
		t.Run(tc.fn+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			b := start(t, newProject(t), "s")
			b.call("sm_transition", "research").must(t, 0)
			w, err := mustProject(t, b.dir).Workflow(b.shellID)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := w.ReadCheckpoint()
			r := b.call(tc.fn, tc.args...).must(t, tc.rc)
			after, _ := w.ReadCheckpoint()
			if got := gjson.GetBytes(after, "state_machine.current_state").String(); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", r.stderr, tc.stderr)
			}
			if tc.rc != 0 {
				if string(before) != string(after) || r.answer != "" {
					t.Errorf("a refused call changed the checkpoint or the shell: %q", r.answer)
				}
				return
			}
			if !r.has("export CURRENT_STATE="+tc.state) || !r.has("export COMPLETED_STATE_0=research") {
				t.Errorf("answer:\n%s", r.answer)
			}
			if tc.key != "" && !gjson.GetBytes(after, tc.key).Exists() {
				t.Errorf("the checkpoint lacks %s", tc.key)
			}
		})
	}
}

// TestLoadForms: load_workflow_state's codes, and the design's KEY form.
func TestLoadForms(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s")
	b.call("append_workflow_state", "PLAN_PATH", "plans/001.md").must(t, 0)
	fresh := block{t: t, dir: dir, session: "s"}
	if r := fresh.call("load_workflow_state", "PLAN_PATH").must(t, 0); r.stdout != "plans/001.md\n" || r.answer != "" {
		t.Errorf("KEY form: %+v", r)
	}
	fresh.call("load_workflow_state", "NOPE").must(t, 1)
	if r := fresh.call("load_workflow_state", "coordinate_999", "false").must(t, 2); !strings.Contains(r.stderr, "this session's workflow is "+b.shellID) {
		t.Errorf("stderr %q", r.stderr)
	}
	if r := fresh.call("load_workflow_state", "coordinate_999", "true").must(t, 1); !r.has("export WORKFLOW_ID=coordinate_999") {
		t.Errorf("first block: %+v", r)
	}
	// coordinate_999 is now the session's workflow-to-be.
	fresh.call("load_workflow_state", "coordinate_999", "false").must(t, 0)
	fresh.shellID = b.shellID
	fresh.vars = map[string]string{"FROM_SHELL": "x"}
	fresh.call("load_workflow_state", "", "false", "PLAN_PATH", "FROM_SHELL").must(t, 0)
	if r := fresh.call("load_workflow_state", "", "false", "PLAN_PATH", "EMPTY").must(t, 3); !strings.Contains(r.answer, "PLAN_PATH=plans/001.md") {
		t.Errorf("a missing required variable: the values still load: %q", r.answer)
	}
	(block{t: t, dir: dir, session: "other"}).call("load_workflow_state").must(t, 2)
}

// TestAppendDerived: a derived variable appended with its own value
// changes nothing; with another, it is refused.
func TestAppendDerived(t *testing.T) {
	b := start(t, newProject(t), "s")
	b.call("append_workflow_state", "CURRENT_STATE", "initialize").must(t, 0)
	b.call("append_workflow_state", "WORKFLOW_ID", b.shellID).must(t, 0)
	if r := b.call("append_workflow_state", "CURRENT_STATE", "plan").must(t, 1); !strings.Contains(r.stderr, "sm_transition") {
		t.Errorf("stderr %q", r.stderr)
	}
	b.call("append_workflow_state", "K", "v", "extra").must(t, 1)
	b.stdin = "A=1\nCURRENT_STATE=plan\nB=2\n"
	b.call("append_workflow_state_bulk").must(t, 1)
	if r := b.call("load_workflow_state").must(t, 0); !r.has("export A=1") || !r.has("export B=2") || !r.has("export CURRENT_STATE=initialize") {
		t.Errorf("bulk: %s", r.answer)
	}
}

// TestDesignCheckpoints: save_checkpoint COMMAND JSON, load_checkpoint
// and update_checkpoint work on the workflow of that command.
func TestDesignCheckpoints(t *testing.T) {
	b := start(t, newProject(t), "s")
	b.call("save_checkpoint", "coordinate", `{"state": "planning", "phases": {"research": {"completed": true}}}`).must(t, 0)
	b.call("update_checkpoint", "coordinate", "topic_path", "specs/042").must(t, 0)
	r := b.call("load_checkpoint", "coordinate").must(t, 0)
	for path, want := range map[string]string{"state": "planning", "phases.research.completed": "true", "topic_path": "specs/042", "command": "coordinate"} {
		if got := gjson.Get(r.stdout, path).String(); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	b.call("load_checkpoint", "implement").must(t, 1)
	b.call("save_checkpoint", "implement", `{"a": 1}`).must(t, 1)
	if r := b.call("update_checkpoint", "coordinate", "status", "complete").must(t, 1); !strings.Contains(r.stderr, "sm-finish") {
		t.Errorf("stderr %q", r.stderr)
	}
	b.call("update_checkpoint", "coordinate", "k").must(t, 1)
}

// TestValidateVariables: the validations read the shell's variables as
// the dispatcher passes them, and log through log_command_error when the
// shell defines it.
func TestValidateVariables(t *testing.T) {
	b := block{t: t, dir: newProject(t), vars: map[string]string{"A": "", "B": "x", "COMMAND_NAME": "plan"}}
	b.call("validate_state_variables", "A", "B").must(t, 0)
	if r := b.call("validate_state_variables", "A", "C", "x;y").must(t, 1); !strings.Contains(r.stderr, "C x;y") || r.answer != "" {
		t.Errorf("%+v", r)
	}
	b.shellID, b.vars["USER_ARGS"], b.funcs = "plan_1", "--fast", []string{"log_command_error"}
	r := b.call("validate_state_variables", "C").must(t, 1)
	if want := "__fs_run=(log_command_error plan plan_1 --fast state_error \"State variables not set: C\" validate_state_variables \"{}\")\n"; r.answer != want {
		t.Errorf("answer %q, want %q", r.answer, want)
	}
	b.call("validate_library_functions", "error-handling").must(t, 0)
	b.funcs = nil
	b.call("validate_state_restoration", "B").must(t, 0)
	b.call("validate_state_restoration", "A", "B").must(t, 1)
	b.call("validate_block_state", "verify").must(t, 1)
	b.call("validate_block_state", "other").must(t, 1)
	b.call("validate_library_functions", "error-handling").must(t, 1)
	b.call("validate_library_functions", "workflow-state-machine").must(t, 0)
}

// TestNamedJSON: save_json_checkpoint keeps validated JSON, as given, in
// .claude/tmp/NAME.json, where the original kept it, also while a
// workflow runs; load_json_checkpoint gives it back as saved; never
// saved is {}. Without CLAUDE_PROJECT_DIR both fail, as the original's.
func TestNamedJSON(t *testing.T) {
	b := start(t, newProject(t), "s")
	for _, value := range []string{`{"workers": 3}`, `"text"`, `[1, 2]`} {
		b.call("save_json_checkpoint", "n", value).must(t, 0)
		if r := b.call("load_json_checkpoint", "n").must(t, 0); r.stdout != value+"\n" {
			t.Errorf("%s came back as %q", value, r.stdout)
		}
		if data, err := os.ReadFile(filepath.Join(b.dir, ".claude/tmp/n.json")); err != nil || string(data) != value+"\n" {
			t.Errorf(".claude/tmp/n.json: %q %v", data, err)
		}
	}
	if r := b.call("load_json_checkpoint", "never").must(t, 0); r.stdout != "{}\n" {
		t.Errorf("never saved: %q", r.stdout)
	}
	b.call("save_json_checkpoint", "n", "{bad").must(t, 1)
	b.call("save_json_checkpoint", "../x", "{}").must(t, 1)
	b.call("save_classification_checkpoint", b.shellID, classification).must(t, 0)
	if r := b.call("load_classification_checkpoint", b.shellID).must(t, 0); r.stdout != classification+"\n" {
		t.Errorf("classification: %q", r.stdout)
	}
	b.call("append_jsonl_log", "runs", `{"phase": "research"}`).must(t, 0)
	b.call("append_jsonl_log", "runs", "{\"phase\":\n \"plan\"}").must(t, 0)
	if data, err := os.ReadFile(filepath.Join(b.dir, ".claude/tmp/runs.jsonl")); err != nil || string(data) != `{"phase": "research"}`+"\n"+`{"phase":"plan"}`+"\n" {
		t.Errorf(".claude/tmp/runs.jsonl: %q %v", data, err)
	}
	b.env = map[string]string{"CLAUDE_PROJECT_DIR": ""}
	b.call("save_json_checkpoint", "m", "{}").must(t, 1)
	b.call("append_jsonl_log", "runs", "{}").must(t, 1)
}

// TestStateEdges: what the originals did differently at the edges of
// state persistence (docs/migrating-from-bash.md, "State").
func TestStateEdges(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s")
	// The original's JSON guard: a JSON array or object only under a key
	// made for it, refused with SUPPRESS_ERR_TRAP set and logged through
	// the shell's log_command_error.
	b.funcs, b.vars = []string{"log_command_error"}, map[string]string{"COMMAND_NAME": "/plan"}
	r := b.call("append_workflow_state", "REPORTS", ` ["a.md", "b.md"]`).must(t, 1)
	if !strings.Contains(r.stderr, "only supports scalar values for key: REPORTS") || !r.has("SUPPRESS_ERR_TRAP=1") ||
		!strings.Contains(r.answer, "__fs_run=(log_command_error /plan "+b.shellID+" \"\" state_error") {
		t.Errorf("JSON under REPORTS: %+v", r)
	}
	b.funcs = nil
	b.call("append_workflow_state_array", "REPORTS", "[a.md]").must(t, 1)
	b.call("append_workflow_state", "REPORTS_JSON", `["a.md"]`).must(t, 0)
	b.call("append_workflow_state", "WORK_REMAINING", `["Phase 4"]`).must(t, 0)
	b.vars = map[string]string{jsonKeysVar: "MINE REPORTS"}
	b.call("append_workflow_state", "REPORTS", `{"a": 1}`).must(t, 0)
	b.vars = nil
	b.call("append_workflow_state", "REPORTS", "a.md [b.md]").must(t, 0)
	// Without a STATE_FILE (set by init_ and load_workflow_state) it
	// fails, as in the original, though WORKFLOW_ID is set; unless
	// flowstate names the workflow (the session's, FLOWSTATE_WORKFLOW), as
	// in the design documents' blocks.
	unset := b
	unset.stateFile, unset.session = "", ""
	if r := unset.call("append_workflow_state", "K", "v").must(t, 1); !strings.Contains(r.stderr, "STATE_FILE not set") || !r.has("SUPPRESS_ERR_TRAP=1") {
		t.Errorf("no STATE_FILE: %+v", r)
	}
	unset.env = map[string]string{"FLOWSTATE_WORKFLOW": b.shellID}
	unset.call("append_workflow_state", "K", "v").must(t, 0)
	unset.session, unset.env = b.session, nil
	unset.call("append_workflow_state", "K", "v").must(t, 0)
	// A reserved key is stored, as the original stored it, and never set in a shell.
	b.call("append_workflow_state", "PATH", "/evil").must(t, 0)
	b.call("append_workflow_state", "CLAUDE_PROJECT_DIR", "/elsewhere").must(t, 0)
	if r := b.call("load_workflow_state").must(t, 0); strings.Contains(r.answer, "PATH=/evil") || strings.Contains(r.answer, "/elsewhere") || !r.has("export CLAUDE_PROJECT_DIR="+dir) {
		t.Errorf("a reserved key reached the shell: %s", r.answer)
	}
	if r := b.call("load_workflow_state", "PATH").must(t, 0); r.stdout != "/evil\n" {
		t.Errorf("load_workflow_state PATH: %q", r.stdout)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b.call("validate_state_file", empty).must(t, 0)
	b.call("validate_state_file", dir).must(t, 1)
	b.call("validate_state_file", filepath.Join(dir, "none")).must(t, 1)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	b.call("validate_state_file", fifo).must(t, 1)    // at once: a FIFO is no state file
	b.call("validate_state_file", "empty").must(t, 0) // from the shell's directory
	b.vars = map[string]string{"STATE_FILE": filepath.Join(dir, ".claude/tmp/workflow_"+b.shellID+".sh")}
	b.call("validate_state_file_path", b.shellID).must(t, 0)
	b.call("validate_state_file_path", "other").must(t, 1)
	b.call("validate_state_file_path", "other", "").must(t, 0)

	// Without a session, later blocks need the id, and it says so.
	lone := block{t: t, dir: dir}
	if r := lone.call("init_workflow_state", "solo_1").must(t, 0); !strings.Contains(r.stderr, "no CLAUDE_CODE_SESSION_ID: later blocks find workflow solo_1 by its id") {
		t.Errorf("no session: %q", r.stderr)
	}
	lone.shellID = "solo_1"
	if r := lone.call("init_workflow_state", "solo_1").must(t, 0); r.stderr != "" {
		t.Errorf("the shell knows it: %q", r.stderr)
	}
	lone.call("init_workflow_state", "bad/id").must(t, 1)

	// A damaged checkpoint is reported, never overwritten.
	cp := filepath.Join(dir, ".claude/state/workflows", b.shellID, "checkpoint.json")
	if err := os.WriteFile(cp, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.call("load_workflow_state").must(t, 3)
	if got, _ := os.ReadFile(cp); string(got) != "{torn" {
		t.Errorf("the damaged checkpoint was changed: %q", got)
	}
}

// TestStateFile: the generated state file follows every change, holds
// each variable once, quoted, then one export line, and never a reserved
// name; removed, the next load writes it again; through a linked
// .claude/tmp nothing is written, nor the workflow started.
func TestStateFile(t *testing.T) {
	dir := newProject(t)
	file := filepath.Join(dir, ".claude/tmp/workflow_plan_1.sh")
	b := block{t: t, dir: dir, session: "s", shellID: "plan_1", stateFile: file}
	read := func() string {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	b.call("init_workflow_state", "plan_1").must(t, 0)
	if got := read(); !strings.Contains(got, "\nexport WORKFLOW_ID=\"plan_1\"\n") || !strings.Contains(got, "\nexport CURRENT_STATE=\"initialize\"\n") ||
		!strings.Contains(got, "\nexport STATE_FILE=\""+file+"\"\n") || strings.Contains(got, "WORKFLOW_SCOPE") || strings.Contains(got, "TERMINAL_STATE") {
		t.Errorf("before sm_init:\n%s", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".claude/tmp/.gitignore")); err != nil || string(data) != "*\n" {
		t.Errorf(".claude/tmp/.gitignore: %q %v", data, err)
	}
	b.call("append_workflow_state", "EVIL", "$(touch pwned) `x` 'q'").must(t, 0)
	b.call("append_workflow_state", "PATH", "/nowhere").must(t, 0)
	b.call("append_workflow_state", "EMPTY", "").must(t, 0)
	b.call("sm_init", "Plan it", "/plan", "research-and-plan", "2", "[]").must(t, 0)
	b.call("sm_transition", "research").must(t, 0)
	got := read()
	for _, want := range []string{"\nexport WORKFLOW_SCOPE=\"research-and-plan\"\n", "\nexport CURRENT_STATE=\"research\"\n",
		"\nexport COMPLETED_STATE_0=\"research\"\n", "\nexport COMMAND_NAME=\"/plan\"\n", "\nexport EMPTY=\"\"\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	// Each variable twice: NAME=VALUE, then the original's line; a value
	// double quotes would expand is only exported there.
	if !strings.Contains(got, "\nCURRENT_STATE=research\nexport CURRENT_STATE=\"research\"\n") {
		t.Errorf("CURRENT_STATE in\n%s", got)
	}
	if evil := regexp.MustCompile(`(?m)^EVIL=(.*)\nexport EVIL$`).FindStringSubmatch(got); evil == nil || strings.HasPrefix(evil[1], `"`) {
		t.Errorf("EVIL in\n%s", got)
	}
	if strings.Contains(got, "PATH=") || strings.Count(got, "CURRENT_STATE=") != 2 {
		t.Errorf("state file:\n%s", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	b.call("load_workflow_state").must(t, 0)
	if read() != got {
		t.Errorf("not written again on load")
	}

	linked := newProject(t)
	if err := os.Symlink(t.TempDir(), filepath.Join(linked, ".claude/tmp")); err != nil {
		t.Fatal(err)
	}
	r := block{t: t, dir: linked, session: "s"}.call("init_workflow_state", "plan_2").must(t, 1)
	if !strings.Contains(r.stderr, "symlink") || exists(mustProject(t, linked), "plan_2") {
		t.Errorf("through a link: %q", r.stderr)
	}
}

// TestCheckpointOfWhileItIsRewritten: the workflow's checkpoint.json
// names the workflow however often other writers replace the file
// meanwhile (each write is a rename). Before, a look between two renames
// took it for a file of its own, which the call then edited outside the
// workflow's lock: a concurrent replan was lost (10 concurrent
// checkpoint_increment_replan calls counted 9, now and then, under load).
func TestCheckpointOfWhileItIsRewritten(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s1")
	p := mustProject(t, dir)
	w, err := p.Workflow(b.shellID)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	var rewrites atomic.Int64 // the updates that replaced checkpoint.json
	var lastErr atomic.Value
	go func() { // another writer, replacing checkpoint.json again and again
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := w.Update(func(tx *store.Tx) error {
				doc, err := sjson.SetBytes(tx.Checkpoint, "phase_data.other.n", i)
				tx.Checkpoint = doc
				return err
			})
			if err != nil {
				lastErr.Store(err.Error())
			} else {
				rewrites.Add(1)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for start := time.Now(); time.Since(start) < time.Second; {
		if got := checkpointOf(p, w.CheckpointPath()); got == nil || got.ID != w.ID {
			t.Fatalf("checkpointOf(%s) = %v while the checkpoint was being rewritten, want workflow %s", w.CheckpointPath(), got, w.ID)
		}
	}
	// Without rewrites meanwhile, the looks above prove nothing.
	if n := rewrites.Load(); n == 0 {
		t.Fatalf("the other writer never replaced checkpoint.json (last error: %v)", lastErr.Load())
	}
	if got := checkpointOf(p, filepath.Join(dir, "elsewhere", "checkpoint.json")); got != nil {
		t.Errorf("a checkpoint.json elsewhere names workflow %s", got.ID)
	}
}

// TestWritesOnlyCheckpointFiles: without a workflow the checkpoint
// functions write a FILE only in CHECKPOINTS_DIR. A FILE elsewhere, or
// reached through a link below it, is read but refused for writing, and
// left as it was (before, any existing file was replaced, 0600, and
// migrate_checkpoint_format wrote a .backup next to it).
func TestWritesOnlyCheckpointFiles(t *testing.T) {
	dir := newProject(t)
	b := block{t: t, dir: dir, session: "s"}
	saved := strings.TrimSpace(b.call("save_checkpoint", "plan", "auth", `{"description": "d"}`).must(t, 0).stdout)
	if filepath.Dir(saved) != filepath.Join(dir, ".claude/data/checkpoints") {
		t.Fatalf("saved at %s", saved)
	}
	doc, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "settings.json")
	old := filepath.Join(dir, "old.json")
	linkDir := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Mkdir(linkDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{outside: doc, old: []byte(`{"checkpoint_id": "c", "version": "1.0"}`), filepath.Join(linkDir, "x.json"): doc} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(linkDir, filepath.Join(dir, ".claude/data/checkpoints/sub")); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{outside, old, filepath.Join(dir, ".claude/data/checkpoints/sub/x.json")} {
		before, _ := os.ReadFile(file)
		b.call("checkpoint_get_field", file, ".checkpoint_id").must(t, 0)
		for _, call := range [][]string{{"checkpoint_set_field", file, ".description", "changed"}, {"checkpoint_increment_replan", file, "2", "why"}, {"migrate_checkpoint_format", file}} {
			if r := b.call(call[0], call[1:]...).must(t, 1); !strings.Contains(r.stderr, "CHECKPOINTS_DIR") {
				t.Errorf("%s: %q", call[0], r.stderr)
			}
		}
		after, _ := os.ReadFile(file)
		fi, _ := os.Stat(file)
		if string(after) != string(before) || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s was written: %s %v", file, after, fi.Mode())
		}
		if _, err := os.Lstat(file + ".backup"); err == nil {
			t.Errorf("%s.backup was written", file)
		}
	}
	b.call("checkpoint_set_field", saved, ".description", "changed").must(t, 0)
	if r := b.call("checkpoint_get_field", saved, ".description").must(t, 0); r.stdout != "changed\n" {
		t.Errorf("in CHECKPOINTS_DIR: %q", r.stdout)
	}
}

// TestStateFileUnwritable: a state file that cannot be rewritten after
// a call is warned of, and the call's own exit stands: the value is
// stored (exit 0), and load_workflow_state still finds the workflow
// (its 1 would mean "no workflow", and a caller would start another).
func TestStateFileUnwritable(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s")
	file := filepath.Join(dir, ".claude/tmp/workflow_"+b.shellID+".sh")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file, 0o700); err != nil { // no file can replace it
		t.Fatal(err)
	}
	if r := b.call("append_workflow_state", "FOO", "bar").must(t, 0); !strings.Contains(r.stderr, "not rewritten") || !strings.Contains(r.stderr, "stored") {
		t.Errorf("no warning: %q", r.stderr)
	}
	if r := b.call("load_workflow_state", "FOO").must(t, 0); r.stdout != "bar\n" {
		t.Errorf("FOO: %q", r.stdout)
	}
	if r := b.call("load_workflow_state").must(t, 0); !r.has("export FOO=bar") {
		t.Errorf("load: %+v", r)
	}
}

// TestInitWithoutIDAgain: init_workflow_state without an ID, run again
// (a block repeated, the next block of the session), takes the workflow
// the first run started while it waits for sm_init: one workflow, not
// one per run. Another session, or a workflow sm_init started, gets a
// new one.
func TestInitWithoutIDAgain(t *testing.T) {
	dir := newProject(t)
	p := mustProject(t, dir)
	b := block{t: t, dir: dir, session: "s1"}
	first := answerOf(b.call("init_workflow_state").must(t, 0).answer, "WORKFLOW_ID")
	if again := answerOf(b.call("init_workflow_state").must(t, 0).answer, "WORKFLOW_ID"); again != first {
		t.Errorf("again: %s, first %s", again, first)
	}
	b.shellID = first
	b.call("init_workflow_state").must(t, 0)
	if r := b.call("load_workflow_state", "", "true").must(t, 0); !r.has("export WORKFLOW_ID=" + first) {
		t.Errorf("load_workflow_state '' true: %s", r.answer)
	}
	if ids, err := p.WorkflowIDs(); err != nil || len(ids) != 1 {
		t.Fatalf("workflows %v %v, want one", ids, err)
	}
	other := answerOf(block{t: t, dir: dir, session: "s2"}.call("init_workflow_state").must(t, 0).answer, "WORKFLOW_ID")
	b.call("sm_init", "Plan it", "/plan", "research-and-plan", "2", "[]").must(t, 0)
	next := answerOf(b.call("init_workflow_state").must(t, 0).answer, "WORKFLOW_ID")
	if other == first || next == first || next == other {
		t.Errorf("first %s, other session %s, after sm_init %s", first, other, next)
	}
}

// oldCheckpoint is a checkpoint file of the design's version 2.0, which
// a read migrates.
const oldCheckpoint = `{"version": "2.0", "checkpoint_id": "plan_auth_1", "workflow_type": "plan", "project_name": "auth", "created_at": "2025-11-07T14:30:22Z",
 "state_machine": {"current_state": "research", "completed_states": ["initialize"], "transition_table": {"initialize": "research", "research": "plan,complete", "plan": "complete", "complete": ""},
  "workflow_config": {"scope": "research-and-plan", "description": "d", "command": "plan"}}}`

// TestMigrateKeepsBackups: migrate_checkpoint_format keeps an earlier
// backup (the next one is FILE.backup.2), and checkpoint_delete of a
// file-kept save in a workflow deletes it without migrating it first,
// so no FILE.backup is left of a deleted file; a migration that fails
// leaves no backup. Before, the backup was overwritten, and a delete or
// a failed migration left one behind.
func TestMigrateKeepsBackups(t *testing.T) {
	dir := newProject(t)
	cps := filepath.Join(dir, ".claude/data/checkpoints")
	if err := os.MkdirAll(cps, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(cps, "plan_auth_20250101_000000.json")
	for path, data := range map[string]string{file: oldCheckpoint, file + ".backup": "earlier"} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := block{t: t, dir: dir, session: "s"}
	b.call("migrate_checkpoint_format", file).must(t, 0)
	if got, _ := os.ReadFile(file + ".backup"); string(got) != "earlier" {
		t.Errorf("the earlier backup was overwritten: %q", got)
	}
	if got, _ := os.ReadFile(file + ".backup.2"); string(got) != oldCheckpoint {
		t.Errorf("no backup of the migrated file: %q", got)
	}

	// A file the migration cannot replace (read-only): no backup is left.
	ro := filepath.Join(cps, "plan_ro_20250101_000000.json")
	if err := os.WriteFile(ro, []byte(oldCheckpoint), 0o400); err != nil {
		t.Fatal(err)
	}
	b.call("migrate_checkpoint_format", ro).must(t, 1)
	if _, err := os.Lstat(ro + ".backup"); err == nil {
		t.Errorf("a failed migration left %s.backup", ro)
	}

	other := filepath.Join(cps, "plan_other_20250101_000000.json")
	if err := os.WriteFile(other, []byte(oldCheckpoint), 0o600); err != nil {
		t.Fatal(err)
	}
	w := start(t, dir, "s")
	if r := w.call("checkpoint_delete", "plan", "other").must(t, 0); r.stdout != "Deleted checkpoint: plan other\n" {
		t.Errorf("delete: %q", r.stdout)
	}
	for _, path := range []string{other, other + ".backup"} {
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s is left", path)
		}
	}
	w.call("checkpoint_delete", "plan", "other").must(t, 0) // nothing left: as rm -f
}

// TestPrintStatusResume: sm_print_status of a paused workflow names the
// resume command as the install spells it: /workflow-resume where an
// install put it in the project's .claude/commands. Before, it always
// said /flowstate:workflow-resume.
func TestPrintStatusResume(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s")
	w, err := mustProject(t, dir).Workflow(b.shellID)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Pause(w, sm.Actor{By: "ann"}, "budget"); err != nil {
		t.Fatal(err)
	}
	if r := b.call("sm_print_status").must(t, 0); !strings.Contains(r.stderr, "or /flowstate:workflow-resume") {
		t.Errorf("as a plugin: %s", r.stderr)
	}
	commands := filepath.Join(dir, ".claude", "commands")
	if err := os.MkdirAll(commands, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(commands, "workflow-resume.md"), []byte("---\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := b.call("sm_print_status").must(t, 0); !strings.Contains(r.stderr, "or /workflow-resume\n") {
		t.Errorf("installed in the project: %s", r.stderr)
	}
}

// TestLoadTakesNoLock: a call whose state file is up to date (every
// load, mostly) leaves it alone without taking the workflow's lock: a
// load while another process holds the lock neither waits for it nor
// warns. A change still rewrites the file. Before, every call took the
// lock to compare.
func TestLoadTakesNoLock(t *testing.T) {
	dir := newProject(t)
	b := start(t, dir, "s")
	b.call("append_workflow_state", "FOO", "1").must(t, 0)
	w, err := mustProject(t, dir).Workflow(b.shellID)
	if err != nil {
		t.Fatal(err)
	}
	b.env = map[string]string{"FLOWSTATE_LOCK_WAIT": "200ms"}
	var r result
	var took time.Duration
	if err := w.Update(func(*store.Tx) error {
		begun := time.Now()
		r = b.call("load_workflow_state").must(t, 0)
		took = time.Since(begun)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r.stderr != "" || took >= 200*time.Millisecond || !r.has("export FOO=1") {
		t.Errorf("a load under another's lock took %v: %+v", took, r)
	}
	b.call("append_workflow_state", "FOO", "2").must(t, 0)
	if data, err := os.ReadFile(filepath.Join(dir, ".claude/tmp/workflow_"+b.shellID+".sh")); err != nil || !strings.Contains(string(data), "\nexport FOO=\"2\"\n") {
		t.Errorf("not rewritten after a change: %s %v", data, err)
	}
}

// TestRefusedWriteCreatesNothing: a FILE outside CHECKPOINTS_DIR is
// refused before anything is made: no CHECKPOINTS_DIR appears.
func TestRefusedWriteCreatesNothing(t *testing.T) {
	dir := newProject(t)
	file := filepath.Join(dir, "notes.json")
	if err := os.WriteFile(file, []byte(`{"checkpoint_id": "c", "version": "1.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := block{t: t, dir: dir, session: "s"}
	b.call("migrate_checkpoint_format", file).must(t, 1)
	b.call("checkpoint_set_field", file, ".a", "b").must(t, 1)
	if _, err := os.Lstat(filepath.Join(dir, ".claude/data")); err == nil {
		t.Error("a refused write created .claude/data")
	}
}
