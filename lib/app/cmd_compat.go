package app

import (
	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/compat"
)

func compatCommands(e *env) []*cli.Command {
	return []*cli.Command{{
		Name:      "compat",
		Usage:     "print bash functions with the original libraries' names, for eval",
		UsageText: `eval "$(flowstate compat)"   (instead of sourcing state-persistence.sh, workflow-state-machine.sh, checkpoint-utils.sh)`,
		Description: "Defines every function of the three libraries, each a call to flowstate:\n" +
			"init_workflow_state, load_workflow_state, append_workflow_state(_array, _bulk),\n" +
			"save/load_json_checkpoint, save/load_classification_checkpoint, append_jsonl_log,\n" +
			"discover_latest_state_file, generate_unique_workflow_id, validate_workflow_id,\n" +
			"validate_state_restoration, validate_state_file(_path), validate_state_variables,\n" +
			"validate_block_state, validate_library_functions; sm_init, sm_transition, sm_finish,\n" +
			"sm_load, sm_save, sm_current_state, sm_is_terminal, sm_get_scope, sm_get_completed_count,\n" +
			"sm_print_status, sm_validate_state, sm_execute, save/load_completed_states_(to/from)_state,\n" +
			"map_phase_to_state, map_state_to_phase, normalize_complexity,\n" +
			"generate_descriptive_topics_from_description/_from_plans; and the 18 checkpoint-utils.sh\n" +
			"functions (save_checkpoint, restore_checkpoint, checkpoint_get_field, ...).\n" +
			"Differences from the originals:\n" +
			"  - No shell options are changed (the originals turned on set -euo pipefail), and\n" +
			"    loading never runs a stored value: it evals quoted `flowstate state-load` lines.\n" +
			"  - The workflow is this shell's WORKFLOW_ID if set, else the Claude Code session's\n" +
			"    (CLAUDE_CODE_SESSION_ID); never the newest file by mtime. load_workflow_state with\n" +
			"    no ID finds it; discover_latest_state_file COMMAND prints its state file when it\n" +
			"    is COMMAND's.\n" +
			"  - init_workflow_state only picks the id: sm_init (all five arguments) creates the\n" +
			"    workflow, so call it before appending state. load_workflow_state returns 1 (first\n" +
			"    block) or 2 when there is none, 3 when it is unreadable or a required var is empty.\n" +
			"  - sm_finish [complete|failed|abandoned] is new: a workflow stays active in its terminal\n" +
			"    state while that last phase runs (the originals ended it on arrival); call it when\n" +
			"    the work is done, so the session's pointer is cleaned up and status shows it finished.\n" +
			"  - COMPLETED_STATES is a bash array of the states left behind, as in the original;\n" +
			"    CURRENT_STATE, TERMINAL_STATE, WORKFLOW_SCOPE and the other keys derived from the\n" +
			"    checkpoint cannot be appended (append_workflow_state skips them; sm_* set them).\n" +
			"  - Values are any bytes but NUL (no JSON guard is needed); keys match [A-Za-z_][A-Za-z0-9_]*.\n" +
			"  - save_json_checkpoint NAME JSON keeps the value in the workflow's checkpoint at\n" +
			"    phase_data.named.NAME (NAME: letters, digits, _ and -), so it is locked, validated\n" +
			"    JSON, and travels with the workflow; load_json_checkpoint NAME prints it (a string\n" +
			"    value unquoted) or {}. Logs go to the workflow's logs/NAME.jsonl.\n" +
			"  - Checkpoints: save_checkpoint TYPE PROJECT STATE merges STATE into the workflow's one\n" +
			"    checkpoint.json (locked; tests_passing false stays false) and prints its path, which\n" +
			"    checkpoint_get_field/_set_field (jq-style .a.b or .a[0] paths), _increment_replan\n" +
			"    and the resume checks take. Parallel-operation and iteration checkpoints are named\n" +
			"    checkpoints (phase_data.named.NAME), printed as PATH#NAME. Other JSON files are read,\n" +
			"    never written. migrate_checkpoint_format, save_completed_states_to_state and\n" +
			"    validate_library_functions are no-ops: flowstate migrates on read, stores completed\n" +
			"    states on each transition, and compat defines every function.\n" +
			"  - Functions need bash; the binary is $FLOWSTATE_BIN, else flowstate on PATH (the\n" +
			"    SessionStart hook sets both).",
		Action: func(c *cli.Context) error {
			if _, err := args(c); err != nil {
				return err
			}
			e.printf("%s", compat.Script())
			return nil
		},
	}}
}
