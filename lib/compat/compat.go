// Package compat owns the compatibility layer for commands written for
// the original bash state libraries (state-persistence.sh,
// workflow-state-machine.sh, checkpoint-utils.sh) and the design
// documents they come from: `eval "$(flowstate compat)"` defines their
// functions, each one line that calls `flowstate compat-call`, where this
// package does the work through lib/store, lib/sm and lib/checkpoint.
// It also keeps the checkpoint-utils.sh document operations the
// checkpoint-save --workflow-type, checkpoint-replan and checkpoint-check
// commands offer. docs/migrating-from-bash.md lists what differs from
// the originals, and why.
package compat

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

// dispatcher is the bash side: one fixed function that calls the binary.
//
//go:embed compat.bash
var dispatcher string

// function is one function of the libraries. reads names what of the
// calling shell it needs besides its arguments, which the dispatcher
// passes: a variable NAME, an array NAME[@] (one item a line), @N (its
// arguments from the Nth on are variable names) or PREFIX() (the
// shell's functions named so).
type function struct {
	name    string
	library string
	reads   []string
	run     func(c *call) int
}

// Libraries, in the order help lists them.
const (
	libPersistence = "state-persistence.sh"
	libMachine     = "workflow-state-machine.sh"
	libCheckpoints = "checkpoint-utils.sh"
	libDesign      = "the design documents"
	libFlowstate   = "flowstate"
)

// functions is every function compat defines.
var functions = []function{
	{"init_workflow_state", libPersistence, nil, initWorkflowState},
	{"load_workflow_state", libPersistence, []string{"@3"}, loadWorkflowState},
	{"append_workflow_state", libPersistence, appendReads, appendWorkflowState},
	{"append_workflow_state_array", libPersistence, appendReads, appendWorkflowStateArray},
	{"append_workflow_state_bulk", libPersistence, nil, appendWorkflowStateBulk},
	{"save_json_checkpoint", libPersistence, nil, saveJSONCheckpoint},
	{"load_json_checkpoint", libPersistence, nil, loadJSONCheckpoint},
	{"save_classification_checkpoint", libPersistence, nil, saveClassificationCheckpoint},
	{"load_classification_checkpoint", libPersistence, nil, loadClassificationCheckpoint},
	{"append_jsonl_log", libPersistence, nil, appendJSONLLog},
	{"discover_latest_state_file", libPersistence, nil, discoverLatestStateFile},
	{"generate_unique_workflow_id", libPersistence, nil, generateUniqueWorkflowID},
	{"validate_workflow_id", libPersistence, nil, validateWorkflowID},
	{"validate_state_restoration", libPersistence, []string{"@1"}, validateStateRestoration},
	{"validate_state_file", libPersistence, nil, validateStateFile},
	{"validate_state_file_path", libPersistence, []string{"STATE_FILE"}, validateStateFilePath},
	{"validate_library_functions", libPersistence, []string{"log_command_error()"}, validateLibraryFunctions},
	{"validate_state_variables", libPersistence, []string{"@1", "COMMAND_NAME", "USER_ARGS", "log_command_error()"}, validateStateVariables},
	{"validate_block_state", libPersistence, blockVarNames(), validateBlockState},

	{"sm_init", libMachine, nil, smInit},
	{"sm_transition", libMachine, []string{"COMMAND_NAME", "USER_ARGS", "log_command_error()"}, smTransition},
	{"sm_current_state", libMachine, nil, smCurrentState},
	{"sm_validate_state", libMachine, []string{"CURRENT_STATE"}, smValidateState},
	{"sm_execute", libMachine, []string{"execute_()"}, smExecute},
	{"sm_is_terminal", libMachine, nil, smIsTerminal},
	{"sm_get_scope", libMachine, nil, smGetScope},
	{"sm_get_completed_count", libMachine, nil, smGetCompletedCount},
	{"sm_print_status", libMachine, nil, smPrintStatus},
	{"sm_save", libMachine, machineReads, smSave},
	{"sm_load", libMachine, nil, smLoad},
	{"save_completed_states_to_state", libMachine, nil, saveCompletedStatesToState},
	{"load_completed_states_from_state", libMachine, nil, loadCompletedStatesFromState},
	{"map_phase_to_state", libMachine, nil, mapPhaseToState},
	{"map_state_to_phase", libMachine, nil, mapStateToPhase},
	{"normalize_complexity", libMachine, nil, normalizeComplexity},
	{"generate_descriptive_topics_from_description", libMachine, nil, topicsFromDescription},
	{"generate_descriptive_topics_from_plans", libMachine, nil, topicsFromPlans},

	{"save_checkpoint", libCheckpoints, nil, saveCheckpoint},
	{"restore_checkpoint", libCheckpoints, nil, restoreCheckpoint},
	{"validate_checkpoint", libCheckpoints, nil, validateCheckpoint},
	{"checkpoint_get_field", libCheckpoints, nil, checkpointGetField},
	{"checkpoint_set_field", libCheckpoints, nil, checkpointSetField},
	{"checkpoint_increment_replan", libCheckpoints, nil, checkpointIncrementReplan},
	{"checkpoint_delete", libCheckpoints, nil, checkpointDelete},
	{"save_parallel_operation_checkpoint", libCheckpoints, nil, saveParallelOperationCheckpoint},
	{"restore_from_checkpoint", libCheckpoints, nil, restoreFromCheckpoint},
	{"validate_checkpoint_integrity", libCheckpoints, nil, validateCheckpointIntegrity},
	{"check_safe_resume_conditions", libCheckpoints, nil, checkSafeResumeConditions},
	{"get_skip_reason", libCheckpoints, nil, getSkipReason},
	{"save_state_machine_checkpoint", libCheckpoints, nil, saveStateMachineCheckpoint},
	{"load_state_machine_checkpoint", libCheckpoints, nil, loadStateMachineCheckpoint},
	{"validate_iteration_checkpoint", libCheckpoints, nil, validateIterationCheckpoint},
	{"load_iteration_checkpoint", libCheckpoints, nil, loadIterationCheckpoint},
	{"save_iteration_checkpoint", libCheckpoints, nil, saveIterationCheckpoint},
	{"migrate_checkpoint_format", libCheckpoints, nil, migrateCheckpointFormat},

	{"sm_transition_with_checkpoint", libDesign, nil, smTransitionWithCheckpoint},
	{"load_checkpoint", libDesign, nil, loadCheckpoint},
	{"update_checkpoint", libDesign, nil, updateCheckpoint},
	{"sm_init_with_classification", libDesign, nil, smInitWithClassification},
	{"sm_save_with_classification", libDesign, machineReads, smSave},
	{"sm_load_with_classification", libDesign, nil, smLoad},

	{"sm_finish", libFlowstate, nil, smFinish},
}

// appendReads are what append_workflow_state reads of the shell: the
// project's JSON keys, and what it logs a refused value with.
var appendReads = []string{jsonKeysVar, "COMMAND_NAME", "USER_ARGS", "log_command_error()"}

// machineReads are the shell's state machine variables, which sm_save
// writes when the shell names no workflow.
var machineReads = []string{"CURRENT_STATE", "COMPLETED_STATES[@]", "WORKFLOW_SCOPE", "WORKFLOW_DESCRIPTION", "COMMAND_NAME", "RESEARCH_COMPLEXITY", "RESEARCH_TOPICS_JSON"}

func lookup(name string) (function, bool) {
	for _, f := range functions {
		if f.name == name {
			return f, true
		}
	}
	return function{}, false
}

// Script returns the bash text for eval: the dispatcher, one line per
// function, the state machine's constants (a STATE_* variable per state
// of the default machine and STATE_TRANSITIONS, its table; a workflow
// with a machine of its own sets its STATE_* variables when it is
// loaded) and the variables sourcing the libraries set (prologue).
// project is the project's directory, "" when there is none.
func Script(project string) string {
	var b strings.Builder
	b.WriteString(dispatcher)
	b.WriteString("\n# The functions, each a call of the binary.\n")
	for _, f := range functions {
		fmt.Fprintf(&b, "%s() { _flowstate_call %s %d", f.name, f.name, len(f.reads))
		for _, r := range f.reads {
			b.WriteString(" " + statefile.Quote(r))
		}
		b.WriteString(` "$@"; }` + "\n")
	}
	m := machine.Default()
	b.WriteString("\n# The states of the default machine, and its transition table.\n")
	for _, kv := range constants(m.States()) {
		b.WriteString(kv[0] + "=" + statefile.Quote(kv[1]) + "\n")
	}
	b.WriteString("declare -gA STATE_TRANSITIONS=(")
	for i, s := range m.States() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("[" + s + "]=" + statefile.Quote(strings.Join(m.Transitions[s], ",")))
	}
	b.WriteString(")\n")
	dir := "$PWD"
	if project != "" {
		dir = statefile.Quote(project)
	}
	fmt.Fprintf(&b, prologue, dir, checkpoint.SchemaVersion, m.Initial, final(m))
	return b.String()
}

// prologue sets what sourcing the libraries set, so that code written
// for them runs under set -u: CLAUDE_PROJECT_DIR when unset (exported),
// the version variables, CHECKPOINTS_DIR, and the state machine's
// globals, keeping values the shell has, with COMPLETED_STATES rebuilt
// from COMPLETED_STATE_i (a state file sourced before) as the original
// did. Only digits pass into the loop's arithmetic: bash evaluates a
// variable's text there as an expression, and $(...) in it would run.
const prologue = `
# What sourcing the libraries set.
if [ -z "${CLAUDE_PROJECT_DIR:-}" ]; then
	CLAUDE_PROJECT_DIR=%s
	export CLAUDE_PROJECT_DIR
fi
export STATE_PERSISTENCE_VERSION=1.6.0 WORKFLOW_STATE_MACHINE_VERSION=2.0.0
CHECKPOINT_SCHEMA_VERSION=%s
CHECKPOINTS_DIR=$CLAUDE_PROJECT_DIR/.claude/data/checkpoints
CURRENT_STATE=${CURRENT_STATE:-%s}
TERMINAL_STATE=${TERMINAL_STATE:-%s}
WORKFLOW_SCOPE=${WORKFLOW_SCOPE:-}
WORKFLOW_DESCRIPTION=${WORKFLOW_DESCRIPTION:-}
COMMAND_NAME=${COMMAND_NAME:-}
COMPLETED_STATES=()
if [[ ${COMPLETED_STATES_COUNT-} =~ ^[0-9]{1,3}$ ]]; then
	for ((__fs_i = 0; __fs_i < 10#$COMPLETED_STATES_COUNT; __fs_i++)); do
		__fs_v=COMPLETED_STATE_$__fs_i
		COMPLETED_STATES+=("${!__fs_v-}")
	done
	unset __fs_i __fs_v
fi
`

// Help is the description `flowstate compat --help` shows: the
// functions by library.
func Help() string {
	var b strings.Builder
	b.WriteString("Defines the functions below, each a call of the binary; docs/migrating-from-bash.md lists\n" +
		"what differs from the originals. Also sets a STATE_* variable per state ($STATE_RESEARCH, ...),\n" +
		"STATE_TRANSITIONS and what sourcing the libraries set (CHECKPOINTS_DIR, CURRENT_STATE, ...,\n" +
		"CLAUDE_PROJECT_DIR when unset). A workflow's state file, .claude/tmp/workflow_ID.sh, is\n" +
		"generated on every change and safe to source. No shell option is changed and no stored value\n" +
		"is ever run. The binary is $FLOWSTATE_BIN, else flowstate on PATH. Needs bash 4.2 or later.\n")
	lib := ""
	line := 0
	for _, f := range functions {
		if f.library != lib {
			lib = f.library
			b.WriteString("\n" + lib + ":")
			line = len(lib) + 1
		}
		if line+len(f.name)+1 > 100 {
			b.WriteString("\n ")
			line = 1
		}
		b.WriteString(" " + f.name)
		line += len(f.name) + 1
	}
	b.WriteString("\n(" + strconv.Itoa(len(functions)) + " functions)")
	return b.String()
}
