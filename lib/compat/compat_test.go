package compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// bash runs code in a fresh bash after eval-ing the script, as a bash
// block does, with env added; it returns stdout and stderr.
func bash(t *testing.T, code string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", `eval "$FS_SCRIPT" || exit 99; `+code)
	cmd.Env = append(os.Environ(), append([]string{"FS_SCRIPT=" + Script("")}, env...)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestScriptParses: bash -n reads the whole script without a syntax error.
func TestScriptParses(t *testing.T) {
	cmd := exec.Command("bash", "--norc", "--noprofile", "-n")
	cmd.Stdin = strings.NewReader(Script(""))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}

// TestScriptDefaults: evaluating the script sets what sourcing the
// libraries set, under set -u, keeping what the shell has; the project
// it names, whatever its path holds, only when CLAUDE_PROJECT_DIR is
// unset.
func TestScriptDefaults(t *testing.T) {
	project := "/p a'th/$(touch x)"
	code := `eval "$FS_PROJECT_SCRIPT" || exit 99; echo "$CLAUDE_PROJECT_DIR|$CHECKPOINTS_DIR|$CURRENT_STATE|$TERMINAL_STATE|$WORKFLOW_SCOPE|${#COMPLETED_STATES[@]}"; env | grep -c '^CLAUDE_PROJECT_DIR='`
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, project + "|" + project + "/.claude/data/checkpoints|initialize|complete||0\n1\n"},
		{[]string{"CLAUDE_PROJECT_DIR=/q", "CURRENT_STATE=plan", "COMPLETED_STATES_COUNT=2", "COMPLETED_STATE_0=research", "COMPLETED_STATE_1=plan"},
			"/q|/q/.claude/data/checkpoints|plan|complete||2\n1\n"},
	} {
		cmd := exec.Command("bash", "--norc", "--noprofile", "-u", "-c", code)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "FS_PROJECT_SCRIPT=" + Script(project)}, tc.env...)
		out, err := cmd.Output()
		if err != nil || string(out) != tc.want {
			t.Errorf("env %q: %q, %v; want %q", tc.env, out, err, tc.want)
		}
	}
}

// reference lists the functions of the original libraries
// (state-persistence.sh, workflow-state-machine.sh, checkpoint-utils.sh;
// see docs/migrating-from-bash.md): compat defines every one.
var reference = []string{
	// state-persistence.sh
	"init_workflow_state", "load_workflow_state", "append_workflow_state", "append_workflow_state_array",
	"append_workflow_state_bulk", "save_json_checkpoint", "load_json_checkpoint", "save_classification_checkpoint",
	"load_classification_checkpoint", "append_jsonl_log", "discover_latest_state_file", "generate_unique_workflow_id",
	"validate_workflow_id", "validate_state_restoration", "validate_state_file", "validate_state_file_path",
	"validate_library_functions", "validate_state_variables", "validate_block_state",
	// workflow-state-machine.sh
	"sm_init", "sm_transition", "sm_current_state", "sm_validate_state", "sm_execute", "sm_is_terminal", "sm_get_scope",
	"sm_get_completed_count", "sm_print_status", "sm_save", "map_phase_to_state", "map_state_to_phase",
	"normalize_complexity", "sm_load", "save_completed_states_to_state", "load_completed_states_from_state",
	"generate_descriptive_topics_from_plans", "generate_descriptive_topics_from_description",
	// checkpoint-utils.sh
	"save_checkpoint", "restore_checkpoint", "validate_checkpoint", "checkpoint_get_field", "checkpoint_set_field",
	"checkpoint_increment_replan", "checkpoint_delete", "save_parallel_operation_checkpoint", "restore_from_checkpoint",
	"validate_checkpoint_integrity", "check_safe_resume_conditions", "get_skip_reason", "save_state_machine_checkpoint",
	"load_state_machine_checkpoint", "validate_iteration_checkpoint", "load_iteration_checkpoint",
	"save_iteration_checkpoint", "migrate_checkpoint_format",
}

// designs are the functions the design documents call that the libraries
// lack (docs/migrating-from-bash.md), and flowstate's sm_finish.
var designs = []string{
	"sm_transition_with_checkpoint", "load_checkpoint", "update_checkpoint", "sm_init_with_classification",
	"sm_save_with_classification", "sm_load_with_classification", "sm_finish",
}

// TestFunctions: eval-ing the script defines exactly the reference
// functions, the design's and the dispatcher, each (but the dispatcher)
// one call of it.
func TestFunctions(t *testing.T) {
	out, _, err := bash(t, "compgen -A function")
	if err != nil {
		t.Fatal(err)
	}
	defined := strings.Fields(out)
	want := append(append(slices.Clone(reference), designs...), "_flowstate_call")
	slices.Sort(defined)
	slices.Sort(want)
	if !slices.Equal(defined, want) {
		t.Errorf("defined %q\nwant    %q", defined, want)
	}
	if len(functions) != len(want)-1 {
		t.Errorf("the table has %d functions, want %d", len(functions), len(want)-1)
	}
	// Evaluated twice: nothing is readonly. Not exported: a child bash
	// evaluates compat itself.
	if out, errOut, err := bash(t, `eval "$FS_SCRIPT" && bash -c 'type sm_init' >/dev/null 2>&1 || echo twice-no-child`); err != nil || out != "twice-no-child\n" {
		t.Errorf("eval twice, child: %v %q %q", err, out, errOut)
	}
	for _, f := range functions {
		body, _, err := bash(t, "declare -f "+f.name)
		if err != nil || strings.Count(body, "\n") != 4 || !strings.Contains(body, "_flowstate_call "+f.name+" ") {
			t.Errorf("%s is not one call of the dispatcher:\n%s", f.name, body)
		}
	}
}

// TestStateConstants: a STATE_* variable per state of the default
// machine, and its table as STATE_TRANSITIONS.
func TestStateConstants(t *testing.T) {
	m := machine.Default()
	var code strings.Builder
	for _, s := range m.States() {
		code.WriteString(`echo "$` + constName(s) + ` ${STATE_TRANSITIONS[` + s + `]}";`)
	}
	out, _, err := bash(t, code.String())
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, s := range m.States() {
		want.WriteString(s + " " + strings.Join(m.Transitions[s], ",") + "\n")
	}
	if out != want.String() {
		t.Errorf("constants:\n%s\nwant\n%s", out, want.String())
	}
}

// TestNoShellOptions: eval-ing the script leaves the caller's shell
// options as they were, set or not, and so does calling a function.
func TestNoShellOptions(t *testing.T) {
	bin := fakeBinary(t)
	for _, opts := range []string{"set +euo pipefail", "set -euo pipefail"} {
		code := opts + `; before="$- $(set -o)"; eval "$(cat)"; sm_current_state >/dev/null 2>&1; after="$- $(set -o)"; [ "$before" = "$after" ] && echo same`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", code)
		cmd.Stdin = strings.NewReader(Script(""))
		cmd.Env = append(os.Environ(), "FLOWSTATE_BIN="+bin, "FAKE_LOG="+filepath.Join(t.TempDir(), "log"))
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "same\n" {
			t.Errorf("%s: the options changed: %v\n%s", opts, err, out)
		}
	}
}

// fakeBinary is a stand-in for flowstate: it logs its arguments (one a
// line, %q) to $FAKE_LOG, writes to stdout and stderr, says whether it
// got fd 4 (it must not), answers $FAKE_ANSWER on fd 3 and exits $FAKE_RC.
func fakeBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flowstate")
	script := `#!/usr/bin/env bash
printf '%q\n' "$@" >"$FAKE_LOG"
echo out
echo err >&2
if { true >&4; } 2>/dev/null; then echo "fd 4 leaked" >&2; fi
printf '%s' "${FAKE_ANSWER-}" >&3
exit "${FAKE_RC:-0}"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestDispatcher: the bash side passes arguments as typed and the shell
// state a function reads, lets output through, evaluates only the
// answer, calls back the shell function named, and returns the code.
func TestDispatcher(t *testing.T) {
	bin := fakeBinary(t)
	tests := []struct {
		name, code, answer, rc string
		args                   []string // what the binary got
		stdout, stderr         string   // stdout after the binary's "out", stderr after its "err"
	}{
		{name: "arguments as typed", code: `sm_init "a b" '--help' '' '$(touch x)'`,
			args: []string{"compat-call", "--answer-fd", "3", "--", "sm_init", "a\\ b", "--help", "''", "\\$\\(touch\\ x\\)"}},
		{name: "the shell's WORKFLOW_ID", code: `WORKFLOW_ID=w1; sm_get_scope`,
			args: []string{"compat-call", "--answer-fd", "3", "--workflow-id", "w1", "--", "sm_get_scope"}},
		{name: "an empty WORKFLOW_ID is none", code: `WORKFLOW_ID=; sm_get_scope`,
			args: []string{"compat-call", "--answer-fd", "3", "--", "sm_get_scope"}},
		{name: "variables named by arguments: set, empty, unset, invalid", code: `A=1; B=; validate_state_variables A B C 'x;y'`,
			args: []string{"compat-call", "--answer-fd", "3", "--set", "A=1", "--set", "B=", "--set", "COMMAND_NAME=", "--", "validate_state_variables", "A", "B", "C", "x\\;y"}},
		{name: "an array, an item a line", code: `CURRENT_STATE=plan; COMPLETED_STATES=(research 'p l'); sm_save f`,
			args: []string{"compat-call", "--answer-fd", "3", "--set", "$'COMPLETED_STATES=research\\np l\\n'", "--set", "CURRENT_STATE=plan", "--set", "WORKFLOW_SCOPE=", "--set", "WORKFLOW_DESCRIPTION=", "--set", "COMMAND_NAME=", "--", "sm_save", "f"}},
		{name: "arguments from the third on", code: `R=$'two\nlines'; load_workflow_state id true R`,
			args: []string{"compat-call", "--answer-fd", "3", "--set", "$'R=two\\nlines'", "--", "load_workflow_state", "id", "true", "R"}},
		{name: "a named variable and functions", code: `STATE_FILE=/s; validate_state_file_path w`,
			args: []string{"compat-call", "--answer-fd", "3", "--state-file", "/s", "--set", "STATE_FILE=/s", "--", "validate_state_file_path", "w"}},
		{name: "the shell's STATE_FILE", code: `STATE_FILE=/s; WORKFLOW_ID=w1; sm_get_scope`,
			args: []string{"compat-call", "--answer-fd", "3", "--workflow-id", "w1", "--state-file", "/s", "--", "sm_get_scope"}},
		{name: "functions by prefix", code: `execute_plan_phase() { :; }; execute_test_phase() { :; }; sm_execute`,
			args: []string{"compat-call", "--answer-fd", "3", "--function", "execute_plan_phase", "--function", "execute_test_phase", "--", "sm_execute"}},
		{name: "the answer is evaluated", code: `sm_transition plan; echo "$CURRENT_STATE ${#COMPLETED_STATES[@]} ${COMPLETED_STATES[1]}"; env | grep -c '^CURRENT_STATE=plan$'`,
			answer: "export CURRENT_STATE=plan\nCOMPLETED_STATES=(research $'pl an')\n", stdout: "plan 2 pl an\n1\n"},
		{name: "the return code", code: `sm_transition x; echo rc=$?`, rc: "3", stdout: "rc=3\n"},
		{name: "a callback's code is the function's", code: `h() { echo "in h $*"; return 7; }; sm_execute; echo rc=$?`,
			answer: "__fs_run=(h 'a b')\n", stdout: "in h a b\nrc=7\n"},
		{name: "a failure keeps its code over the callback's", code: `log_command_error() { echo logged; }; validate_state_variables X; echo rc=$?`,
			answer: "__fs_run=(log_command_error)\n", rc: "1", stdout: "logged\nrc=1\n"},
		{name: "in a command substitution", code: `v=$(normalize_complexity 40); echo "[$v]"`, stdout: "[out]\n"},
		{name: "stdin passes through", code: `echo K=v | append_workflow_state_bulk`, args: []string{"compat-call", "--answer-fd", "3", "--", "append_workflow_state_bulk"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			out, errOut, err := bash(t, tc.code, "FLOWSTATE_BIN="+bin, "FAKE_LOG="+log, "FAKE_ANSWER="+tc.answer, "FAKE_RC="+tc.rc)
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out, errOut)
			}
			if tc.stdout == "" && out != "out\n" || tc.stdout != "" && !strings.HasSuffix(out, tc.stdout) && out != tc.stdout {
				t.Errorf("stdout %q, want out and %q", out, tc.stdout)
			}
			if !strings.HasPrefix(errOut, "err\n") || strings.Contains(errOut, "leaked") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q, want the binary's line only", errOut)
			}
			if tc.args != nil {
				b, _ := os.ReadFile(log)
				if got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); !slices.Equal(got, tc.args) {
					t.Errorf("the binary got\n%q\nwant\n%q", got, tc.args)
				}
			}
		})
	}
}
