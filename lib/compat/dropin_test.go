package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The behaviours the libraries' own test suite holds a drop-in to
// (scripts/compat-suite), each in this project's words.

// TestStateFileNamesTheWorkflow: the original's functions wrote to the
// file STATE_FILE names, whatever WORKFLOW_ID says: a script that keeps
// two workflows switches between them with STATE_FILE, and each keeps
// its own values.
func TestStateFileNamesTheWorkflow(t *testing.T) {
	dir := newProject(t)
	b := block{t: t, dir: dir}
	a := strings.TrimSpace(b.call("init_workflow_state", "two_a").must(t, 0).stdout)
	bFile := strings.TrimSpace(b.call("init_workflow_state", "two_b").must(t, 0).stdout)
	b.shellID = "two_b" // the last one loaded; STATE_FILE decides
	b.stateFile = a
	b.call("append_workflow_state", "WORKFLOW", "A").must(t, 0)
	b.stateFile = bFile
	b.call("append_workflow_state", "WORKFLOW", "B").must(t, 0)
	for id, want := range map[string]string{"two_a": "A", "two_b": "B"} {
		if r := b.call("load_workflow_state", id).must(t, 0); !r.has("export WORKFLOW=" + want) {
			t.Errorf("%s: %s", id, r.answer)
		}
	}
	// A STATE_FILE of no workflow leaves WORKFLOW_ID to decide.
	b.stateFile = filepath.Join(dir, "elsewhere.sh")
	b.call("append_workflow_state", "OTHER", "x").must(t, 0)
	if r := b.call("load_workflow_state", "two_b").must(t, 0); !r.has("export OTHER=x") {
		t.Errorf("by WORKFLOW_ID: %s", r.answer)
	}
}

// TestTransitionWithoutStateFile: sm_transition in a block that never
// loaded the workflow loads it first, as the original's auto-
// initialization did, saying so, setting STATE_FILE and logging a
// state_error; with no workflow to load it fails, saying STATE_FILE is
// not set.
func TestTransitionWithoutStateFile(t *testing.T) {
	dir := newProject(t)
	b := block{t: t, dir: dir, shellID: "auto_1"}
	b.call("init_workflow_state", "auto_1").must(t, 0)
	b.funcs, b.vars = []string{"log_command_error"}, map[string]string{"COMMAND_NAME": "/implement"}
	r := b.call("sm_transition", "research").must(t, 0)
	file := filepath.Join(dir, ".claude/tmp/workflow_auto_1.sh")
	if !strings.Contains(r.stderr, "WARNING: Auto-initializing state machine") || !strings.Contains(r.stderr, "✓ Auto-initialization successful (loaded workflow ID: auto_1)") ||
		!r.has("export STATE_FILE="+file) || !r.has("export CURRENT_STATE=research") ||
		!strings.Contains(r.answer, "__fs_run=(log_command_error /implement auto_1 \"\" state_error") {
		t.Errorf("auto-initialization: %+v", r)
	}
	none := block{t: t, dir: newProject(t)}
	if r := none.call("sm_transition", "research").must(t, 1); !strings.Contains(r.stderr, "STATE_FILE not set and auto-initialization failed") {
		t.Errorf("nothing to load: %q", r.stderr)
	}
}

// TestValidateStateOfTheShell: sm_validate_state checks what the shell
// has loaded, as the original: STATE_FILE and CURRENT_STATE.
func TestValidateStateOfTheShell(t *testing.T) {
	b := start(t, newProject(t), "s")
	b.vars = map[string]string{"CURRENT_STATE": "initialize"}
	b.call("sm_validate_state").must(t, 0)
	if err := os.Remove(b.stateFile); err != nil {
		t.Fatal(err)
	}
	b.call("sm_validate_state").must(t, 0) // the workflow is there: its file is written again
	if _, err := os.Stat(b.stateFile); err != nil {
		t.Errorf("the state file was not written again: %v", err)
	}
	b.vars = nil
	if r := b.call("sm_validate_state").must(t, 1); !strings.Contains(r.stderr, "CURRENT_STATE not set") {
		t.Errorf("no CURRENT_STATE: %q", r.stderr)
	}
	b.vars, b.stateFile = map[string]string{"CURRENT_STATE": "initialize"}, ""
	if r := b.call("sm_validate_state").must(t, 1); !strings.Contains(r.stderr, "STATE_FILE not set") {
		t.Errorf("no STATE_FILE: %q", r.stderr)
	}
	b.stateFile = filepath.Join(b.dir, "gone.sh")
	b.call("sm_validate_state").must(t, 1)
}

// TestStoredCurrentStateBeforeSmInit: until sm_init the state machine's
// variables are the command's own, CURRENT_STATE among them: a value it
// stores is what the state file and later blocks get; sm_init then sets
// the workflow's.
func TestStoredCurrentStateBeforeSmInit(t *testing.T) {
	dir := newProject(t)
	file := filepath.Join(dir, ".claude/tmp/workflow_early_1.sh")
	b := block{t: t, dir: dir, shellID: "early_1", stateFile: file}
	b.call("init_workflow_state", "early_1").must(t, 0)
	b.call("append_workflow_state", "CURRENT_STATE", "research").must(t, 0)
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), "\nexport CURRENT_STATE=\"research\"\n") {
		t.Errorf("state file: %s %v", data, err)
	}
	b.call("sm_init", "Plan it", "/plan", "research-and-plan", "2", "[]").must(t, 0)
	if r := b.call("load_workflow_state").must(t, 0); !r.has("export CURRENT_STATE=initialize") {
		t.Errorf("after sm_init: %s", r.answer)
	}
	b.call("append_workflow_state", "CURRENT_STATE", "research").must(t, 1)
}

// TestDiscoverWithoutWorkflow: with no workflow of the shell or session
// for the prefix, discover_latest_state_file takes the newest
// workflow_PREFIX_*.sh, as the original, passing over another session's
// workflow and a file it did not write that could run code when sourced.
func TestDiscoverWithoutWorkflow(t *testing.T) {
	dir := newProject(t)
	tmp := filepath.Join(dir, ".claude/tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	touch := func(name, text string, age time.Duration) string {
		t.Helper()
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old := touch("workflow_plan_100.sh", "export PLAN=\"a\"\n", 3*time.Hour)
	touch("workflow_plan_200.sh", "export PLAN=\"$(touch pwned)\"\n", 2*time.Hour)
	touch("workflow_planner_300.sh", "", time.Hour)
	b := block{t: t, dir: dir, session: "mine"}
	r := b.call("discover_latest_state_file", "plan").must(t, 0)
	if r.stdout != old+"\n" || !strings.Contains(r.stderr, "workflow_plan_200.sh") {
		t.Errorf("legacy files: %+v", r)
	}
	// Another session's workflow is passed over; one of no session is taken.
	other := block{t: t, dir: dir, session: "theirs"}
	other.call("init_workflow_state", "plan_400").must(t, 0)
	if r := b.call("discover_latest_state_file", "plan").must(t, 0); r.stdout != old+"\n" {
		t.Errorf("took another session's: %q", r.stdout)
	}
	lone := block{t: t, dir: dir}
	lone.call("init_workflow_state", "plan_500").must(t, 0)
	if r := b.call("discover_latest_state_file", "plan").must(t, 0); r.stdout != filepath.Join(tmp, "workflow_plan_500.sh")+"\n" {
		t.Errorf("a workflow of no session: %q", r.stdout)
	}
	b.call("discover_latest_state_file", "none").must(t, 1)
	if r := b.call("discover_latest_state_file", "").must(t, 1); !strings.Contains(r.stderr, "ERROR") {
		t.Errorf("no prefix: %q", r.stderr)
	}
}

// TestParallelOperationArguments: the original's message for a missing
// plan path or operation.
func TestParallelOperationArguments(t *testing.T) {
	b := block{t: t, dir: newProject(t)}
	for _, args := range [][]string{{"", ""}, {"plan.md", ""}, {"", "expansion"}} {
		if r := b.call("save_parallel_operation_checkpoint", args...).must(t, 1); !strings.Contains(r.stderr, "requires plan_path and operation_type") {
			t.Errorf("%q: %q", args, r.stderr)
		}
	}
}
