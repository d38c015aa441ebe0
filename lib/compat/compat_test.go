package compat

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// bash runs code in a fresh bash after eval-ing the compat script, as a
// bash block does; nothing here calls flowstate, so no binary is needed.
func bash(t *testing.T, code string) string {
	t.Helper()
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", `eval "$1" || exit 99; eval "$2"`, "bash", Script(), code).CombinedOutput()
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
// says whether compat stands in for one; the others have no flowstate
// counterpart yet, and a command using them must call flowstate
// directly. Flipping one to provided is a deliberate act, not drift.
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
	{"validate_state_file", false},
	{"validate_state_file_path", false},
	{"validate_library_functions", false},
	{"validate_state_variables", false},
	{"validate_block_state", false},
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
	{"sm_load", false},
	{"save_completed_states_to_state", false},
	{"load_completed_states_from_state", false},
	{"generate_descriptive_topics_from_plans", false},
	{"generate_descriptive_topics_from_description", false},
	// checkpoint-utils.sh
	{"save_checkpoint", false},
	{"restore_checkpoint", false},
	{"validate_checkpoint", false},
	{"checkpoint_get_field", false},
	{"checkpoint_set_field", false},
	{"checkpoint_increment_replan", false},
	{"checkpoint_delete", false},
	{"save_parallel_operation_checkpoint", false},
	{"restore_from_checkpoint", false},
	{"validate_checkpoint_integrity", false},
	{"check_safe_resume_conditions", false},
	{"get_skip_reason", false},
	{"save_state_machine_checkpoint", false},
	{"load_state_machine_checkpoint", false},
	{"validate_iteration_checkpoint", false},
	{"load_iteration_checkpoint", false},
	{"save_iteration_checkpoint", false},
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
	for _, key := range derivedKeys() {
		if got := bash(t, "_flowstate_derived "+key+" && echo derived"); got != "derived\n" {
			t.Errorf("%s: %q, want derived", key, got)
		}
	}
	for _, key := range []string{"REPORT_DIR", "CURRENT", "XCURRENT_STATE", ""} {
		if got := bash(t, "_flowstate_derived '"+key+"' || echo kept"); got != "kept\n" {
			t.Errorf("%q: %q, want kept", key, got)
		}
	}
	if !slices.Contains(derivedKeys(), "CURRENT_STATE") {
		t.Errorf("derived keys %q lack CURRENT_STATE", derivedKeys())
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
