package compat

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/sm"
)

// bash runs code in a fresh bash after eval-ing the compat script, as a
// bash block does, with args as $1...; nothing here calls flowstate, so
// no binary is needed.
func bash(t *testing.T, code string, args ...string) string {
	t.Helper()
	argv := append([]string{"--norc", "--noprofile", "-c", `s=$1 c=$2; shift 2; eval "$s" || exit 99; eval "$c"`, "bash", Script(), code}, args...)
	out, err := exec.Command("bash", argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s\n%s", err, code, out)
	}
	return string(out)
}

// TestScriptParses: bash -n reads the whole script without a syntax error.
func TestScriptParses(t *testing.T) {
	cmd := exec.Command("bash", "--norc", "--noprofile", "-n")
	cmd.Stdin = strings.NewReader(Script())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	if strings.Contains(Script(), "@DERIVED_KEYS@") {
		t.Error("the derived keys placeholder is left in the script")
	}
}

// reference lists the functions of the original libraries
// (original-bash-libraries.md, sections 1.3, 2.2 and 3.4). provided
// says whether compat stands in for one; today it stands in for all 54,
// some as documented no-ops (validate_library_functions,
// migrate_checkpoint_format, save_completed_states_to_state). Dropping
// one is a deliberate act, not drift.
var reference = []struct {
	name     string
	provided bool
}{
	// state-persistence.sh
	{"init_workflow_state", true},
	{"load_workflow_state", true},
	{"append_workflow_state", true},
	{"append_workflow_state_array", true},
	{"append_workflow_state_bulk", true},
	{"save_json_checkpoint", true},
	{"load_json_checkpoint", true},
	{"save_classification_checkpoint", true},
	{"load_classification_checkpoint", true},
	{"append_jsonl_log", true},
	{"discover_latest_state_file", true},
	{"generate_unique_workflow_id", true},
	{"validate_workflow_id", true},
	{"validate_state_restoration", true},
	{"validate_state_file", true},
	{"validate_state_file_path", true},
	{"validate_library_functions", true},
	{"validate_state_variables", true},
	{"validate_block_state", true},
	// workflow-state-machine.sh
	{"sm_init", true},
	{"sm_transition", true},
	{"sm_current_state", true},
	{"sm_validate_state", true},
	{"sm_execute", true},
	{"sm_is_terminal", true},
	{"sm_get_scope", true},
	{"sm_get_completed_count", true},
	{"sm_print_status", true},
	{"sm_save", true},
	{"map_phase_to_state", true},
	{"map_state_to_phase", true},
	{"normalize_complexity", true},
	{"sm_load", true},
	{"save_completed_states_to_state", true},
	{"load_completed_states_from_state", true},
	{"generate_descriptive_topics_from_plans", true},
	{"generate_descriptive_topics_from_description", true},
	// checkpoint-utils.sh
	{"save_checkpoint", true},
	{"restore_checkpoint", true},
	{"validate_checkpoint", true},
	{"checkpoint_get_field", true},
	{"checkpoint_set_field", true},
	{"checkpoint_increment_replan", true},
	{"checkpoint_delete", true},
	{"save_parallel_operation_checkpoint", true},
	{"restore_from_checkpoint", true},
	{"validate_checkpoint_integrity", true},
	{"check_safe_resume_conditions", true},
	{"get_skip_reason", true},
	{"save_state_machine_checkpoint", true},
	{"load_state_machine_checkpoint", true},
	{"validate_iteration_checkpoint", true},
	{"load_iteration_checkpoint", true},
	{"save_iteration_checkpoint", true},
	{"migrate_checkpoint_format", true},
}

// TestReferenceFunctions: eval-ing the script defines exactly the
// reference functions marked provided, and adds only its own helpers
// (prefixed _flowstate_) and sm_finish, which the original lacked.
func TestReferenceFunctions(t *testing.T) {
	defined := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(bash(t, "compgen -A function")), "\n") {
		defined[line] = true
	}
	for _, f := range reference {
		if defined[f.name] != f.provided {
			t.Errorf("%s: defined %v, want %v", f.name, defined[f.name], f.provided)
		}
		delete(defined, f.name)
	}
	for name := range defined {
		if !strings.HasPrefix(name, "_flowstate_") && name != "sm_finish" {
			t.Errorf("%s is defined but is no reference function and no private helper", name)
		}
	}
}

// TestDerivedKeys: the script knows sm.Derived's keys, so appending one
// is a no-op, and no other key.
func TestDerivedKeys(t *testing.T) {
	for _, key := range sm.DerivedKeys() {
		if got := bash(t, "_flowstate_derived "+key+" && echo derived"); got != "derived\n" {
			t.Errorf("%s: %q, want derived", key, got)
		}
	}
	for _, key := range []string{"REPORT_DIR", "CURRENT", "XCURRENT_STATE", ""} {
		if got := bash(t, "_flowstate_derived '"+key+"' || echo kept"); got != "kept\n" {
			t.Errorf("%q: %q, want kept", key, got)
		}
	}
	if !slices.Contains(sm.DerivedKeys(), "CURRENT_STATE") {
		t.Errorf("derived keys %q lack CURRENT_STATE", sm.DerivedKeys())
	}
}

// TestPureFunctions: the functions that need no workflow answer as the
// reference says (section 2.2).
func TestPureFunctions(t *testing.T) {
	for _, c := range []struct{ call, want string }{
		{"normalize_complexity", "2"}, // not a number
		{"normalize_complexity abc", "2"},
		{"normalize_complexity -5", "2"},
		{"normalize_complexity 0", "1"},
		{"normalize_complexity 1", "1"},
		{"normalize_complexity 4", "4"},
		{"normalize_complexity 3.7", "3"}, // decimals truncated
		{"normalize_complexity 08", "1"},  // decimal, not octal
		{"normalize_complexity 29", "1"},
		{"normalize_complexity 30", "2"},
		{"normalize_complexity 49", "2"},
		{"normalize_complexity 50", "3"},
		{"normalize_complexity 69", "3"},
		{"normalize_complexity 70", "4"},
		{"normalize_complexity 1000", "4"},
		{"map_phase_to_state 0", "initialize"},
		{"map_phase_to_state 1", "research"},
		{"map_phase_to_state 5", "debug"},
		{"map_phase_to_state 7", "complete"},
		{"map_phase_to_state 8", "initialize"},
		{"map_state_to_phase initialize", "0"},
		{"map_state_to_phase plan", "2"},
		{"map_state_to_phase document", "6"},
		{"map_state_to_phase nowhere", "0"},
		{"for n in 0 1 2 3 4 5 6 7; do map_state_to_phase $(map_phase_to_state $n); done | tr '\\n' ' '", "0 1 2 3 4 5 6 7 "},
	} {
		if got := strings.TrimSuffix(bash(t, c.call), "\n"); got != c.want {
			t.Errorf("%s = %q, want %q", c.call, got, c.want)
		}
	}
}

// TestNoShellOptions: eval-ing the script leaves the caller's shell
// options as they were, set or not (reference section 0).
func TestNoShellOptions(t *testing.T) {
	for _, opts := range []string{"set +euo pipefail", "set -euo pipefail"} {
		code := opts + `; before="$- $(set -o)"; eval "$(cat)"; after="$- $(set -o)"; [ "$before" = "$after" ] && echo same`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", code)
		cmd.Stdin = strings.NewReader(Script())
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "same\n" {
			t.Errorf("%s: eval changed the options: %v\n%s", opts, err, out)
		}
	}
}

// TestJSONString: _flowstate_json_str encodes any text (but NUL, which
// bash cannot hold) as a JSON string that decodes back to it.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `back\slash "quoted"`, "tab\there\nnew\r\x01\x1f end", "& and \\& stay", "ünïcödé ✓", `$(touch x) ${HOME}`} {
		out := bash(t, `_flowstate_json_str "$1"`+"\n", s)
		var got string
		if err := json.Unmarshal([]byte(out), &got); err != nil || got != s {
			t.Errorf("%q: encoded %s, decodes to %q (%v)", s, out, got, err)
		}
	}
}

// TestValidationFunctions: the state-persistence validations that need no
// workflow (reference section 1.3).
func TestValidationFunctions(t *testing.T) {
	for _, c := range []struct{ call, want string }{
		{"validate_state_variables A B; echo $?", "1"},
		{"A=; B=x; validate_state_variables A B; echo $?", "0"}, // empty is set
		{"validate_state_variables; echo $?", "0"},
		{"FEATURE_DESCRIPTION=f WORKFLOW_ID=w CLAUDE_PROJECT_DIR=/p RESEARCH_COMPLEXITY=2 validate_block_state state; echo $?", "0"},
		{"FEATURE_DESCRIPTION=f WORKFLOW_ID= CLAUDE_PROJECT_DIR=/p RESEARCH_COMPLEXITY=2 validate_block_state state; echo $?", "1"},
		{"validate_block_state verify; echo $?", "1"},
		{"validate_block_state other; echo $?", "1"},
		{"validate_state_restoration PATH HOME; echo $?", "0"},
		{"validate_state_restoration PATH 'x;y'; echo $?", "1"},
		{"validate_library_functions state-persistence; echo $?", "0"},
		{"validate_library_functions workflow-state-machine; echo $?", "0"},
		{"validate_library_functions error-handling; echo $?", "1"},
		{"log_command_error() { :; }; validate_library_functions error-handling; echo $?", "0"},
		{"validate_library_functions unknown; echo $?", "0"},
		{"CLAUDE_PROJECT_DIR=/p validate_state_file_path w1 /p/.claude/state/workflows/w1/state; echo $?", "0"},
		{"CLAUDE_PROJECT_DIR=/p validate_state_file_path w1 /p/.claude/tmp/workflow_w1.sh; echo $?", "1"},
		{"STATE_FILE= validate_state_file_path w1; echo $?", "0"},
		{"validate_state_file /nonexistent; echo $?", "1"},
		{"validate_state_file /dev/null; echo $?", "1"}, // not a regular file
		{"f=$(mktemp) && validate_state_file $f; echo $?; rm -f $f", "0"},
		{"migrate_checkpoint_format /any; echo $?", "0"},
		{"save_completed_states_to_state; echo $?", "0"},
		{"_flowstate_ref_id /p/.claude/state/workflows/plan_123/checkpoint.json#iteration_2", "plan_123"},
		{"_flowstate_ref_id /p/.claude/data/checkpoints/plan_x.json; echo $?", "1"},
	} {
		out := bash(t, "{ "+c.call+"; } 2>/dev/null")
		if got := strings.TrimSuffix(out, "\n"); got != c.want {
			t.Errorf("%s = %q, want %q", c.call, got, c.want)
		}
	}
}
