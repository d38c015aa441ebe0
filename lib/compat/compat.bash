# flowstate compat: the functions of the original state-persistence.sh,
# workflow-state-machine.sh and checkpoint-utils.sh, each a thin call to
# flowstate. Load with:   eval "$(flowstate compat)"
# It sets no shell options (no set -e, -u or pipefail) and runs no stored
# value: state comes back through `flowstate state-load --export` (the
# libraries exported it), whose lines are quoted so that eval only assigns.

# _flowstate_wf ARGS: flowstate on this shell's WORKFLOW_ID, when set,
# else on the session's workflow.
_flowstate_wf() {
	if [ -n "${WORKFLOW_ID-}" ]; then
		"${FLOWSTATE_BIN:-flowstate}" --workflow "$WORKFLOW_ID" "$@"
	else
		"${FLOWSTATE_BIN:-flowstate}" "$@"
	fi
}

# _flowstate_eval TEXT [KEY...]: run the `export KEY=...` lines of
# state-load output TEXT (only those of KEYs, when given), then rebuild
# the COMPLETED_STATES array and STATE_FILE.
_flowstate_eval() {
	local __fs_text=$1 __fs_line __fs_key __fs_states=
	shift
	while IFS= read -r __fs_line; do
		case $__fs_line in
		export\ [A-Za-z_]*=*) ;;
		*) continue ;;
		esac
		__fs_key=${__fs_line#export }
		__fs_key=${__fs_key%%=*}
		if [ $# -gt 0 ]; then
			case " $* " in
			*" $__fs_key "*) ;;
			*) continue ;;
			esac
		fi
		if [ "$__fs_key" = COMPLETED_STATES ]; then
			__fs_states=1
			unset COMPLETED_STATES # it may be the array of an earlier load
		fi
		eval "$__fs_line"
	done <<__FLOWSTATE_EOF__
$__fs_text
__FLOWSTATE_EOF__
	if [ -n "$__fs_states" ]; then
		__fs_line=$COMPLETED_STATES
		unset COMPLETED_STATES
		read -r -a COMPLETED_STATES <<<"$__fs_line"
		for __fs_key in "${!COMPLETED_STATES[@]}"; do
			export "COMPLETED_STATE_$__fs_key=${COMPLETED_STATES[$__fs_key]}"
		done
	fi
	if [ -n "${WORKFLOW_ID-}" ]; then
		STATE_FILE=$(_flowstate_state_file)
	fi
	return 0
}

# _flowstate_load [KEY...]: load the workflow's state into this shell.
_flowstate_load() {
	local __fs_out
	__fs_out=$(_flowstate_wf state-load --export) || return 1
	_flowstate_eval "$__fs_out" "$@"
}

# _flowstate_dir [ID]: the directory of workflow ID (this shell's
# WORKFLOW_ID by default).
_flowstate_dir() {
	printf '%s\n' "${CLAUDE_PROJECT_DIR:-$PWD}/.claude/state/workflows/${1-${WORKFLOW_ID-}}"
}

# _flowstate_state_file: where the workflow's key/value state lives. For
# information and [ -f ] checks only: it is data, never source it.
_flowstate_state_file() {
	printf '%s\n' "$(_flowstate_dir)/state"
}

# _flowstate_derived KEY: true for the keys flowstate derives from the
# checkpoint; appending them is a no-op, sm_init and sm_transition set them.
_flowstate_derived() {
	case $1 in
	@DERIVED_KEYS@) return 0 ;;
	esac
	return 1
}

# _flowstate_status KEY: one value of `flowstate sm-status`.
_flowstate_status() {
	local __fs_out __fs_line
	__fs_out=$(_flowstate_wf sm-status) || return 1
	while IFS= read -r __fs_line; do
		case $__fs_line in
		"$1="*)
			printf '%s\n' "${__fs_line#*=}"
			return 0
			;;
		esac
	done <<<"$__fs_out"
	return 1
}

_flowstate_name() {
	if [[ ${2-} =~ ^[A-Za-z_][A-Za-z0-9_-]*$ ]]; then
		return 0
	fi
	printf '%s: name %q must match [A-Za-z_][A-Za-z0-9_-]*\n' "$1" "${2-}" >&2
	return 1
}

# ---- state persistence ------------------------------------------------

generate_unique_workflow_id() {
	if ! [[ ${1-} =~ ^[a-z_][a-z0-9_]*$ ]]; then
		printf 'generate_unique_workflow_id: command name %q must match ^[a-z_][a-z0-9_]*$\n' "${1-}" >&2
		return 1
	fi
	local __fs_ns
	__fs_ns=$(date +%s%N)
	case $__fs_ns in
	*[!0-9]* | '')
		__fs_ns="$(date +%s)_$$"
		echo "generate_unique_workflow_id: date has no %N; using seconds and PID" >&2
		;;
	esac
	printf '%s_%s\n' "$1" "$__fs_ns"
}

# init_workflow_state [ID]: choose the workflow id (WORKFLOW_ID) and print
# its state file. flowstate creates the workflow in sm_init, which needs
# the scope: call sm_init before appending state.
init_workflow_state() {
	if [ -n "${1-}" ]; then
		WORKFLOW_ID=$1
	else
		WORKFLOW_ID=$(generate_unique_workflow_id workflow) || return 1
	fi
	export WORKFLOW_ID
	STATE_FILE=$(_flowstate_state_file)
	printf '%s\n' "$STATE_FILE"
}

# load_workflow_state [ID] [IS_FIRST_BLOCK] [REQUIRED_VAR...]: set the
# workflow's variables in this shell. Without ID: this shell's WORKFLOW_ID,
# else the Claude Code session's workflow. Returns 0 loaded; 1 none found
# and IS_FIRST_BLOCK=true (start one with sm_init); 2 none found; 3 state
# unreadable or a REQUIRED_VAR empty.
load_workflow_state() {
	local __fs_id=${1-} __fs_first=${2:-false} __fs_out __fs_rc=0 __fs_v
	if [ $# -gt 2 ]; then
		shift 2
	else
		set --
	fi
	if [ -n "$__fs_id" ]; then
		__fs_out=$("${FLOWSTATE_BIN:-flowstate}" --workflow "$__fs_id" state-load --export) || __fs_rc=$?
	else
		__fs_out=$(_flowstate_wf state-load --export) || __fs_rc=$?
	fi
	case $__fs_rc in
	0) ;;
	2)
		if [ "$__fs_first" = true ]; then
			return 1
		fi
		echo "load_workflow_state: no workflow ${__fs_id:+$__fs_id }found (see the message above)" >&2
		return 2
		;;
	*)
		echo "load_workflow_state: the workflow's state could not be read (flowstate exit $__fs_rc)" >&2
		return 3
		;;
	esac
	_flowstate_eval "$__fs_out"
	for __fs_v in "$@"; do
		if ! [[ $__fs_v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [ -z "${!__fs_v-}" ]; then
			printf 'load_workflow_state: required variable %q is empty or not set after loading\n' "$__fs_v" >&2
			return 3
		fi
	done
	return 0
}

# append_workflow_state KEY VALUE: store a value; any bytes but NUL
# round-trip. Keys derived from the checkpoint are skipped.
append_workflow_state() {
	if [ $# -lt 2 ]; then
		echo "append_workflow_state: usage: append_workflow_state KEY VALUE" >&2
		return 1
	fi
	if _flowstate_derived "$1"; then
		return 0
	fi
	_flowstate_wf state-append "$1" "$2" || return 1
}

append_workflow_state_array() {
	if [ $# -lt 1 ]; then
		echo "append_workflow_state_array: usage: append_workflow_state_array KEY ITEM..." >&2
		return 1
	fi
	append_workflow_state "$1" "${*:2}"
}

# append_workflow_state_bulk < KEY=value lines: blank and # lines are
# skipped, and so (with a warning) are lines that are not KEY=value.
append_workflow_state_bulk() {
	local __fs_line __fs_buf=
	while IFS= read -r __fs_line || [ -n "$__fs_line" ]; do
		case $__fs_line in
		'' | '#'*) continue ;;
		esac
		if ! [[ $__fs_line =~ ^[A-Z_][A-Z0-9_]*= ]]; then
			printf 'append_workflow_state_bulk: skipping a line that is not KEY=value: %q\n' "$__fs_line" >&2
			continue
		fi
		if _flowstate_derived "${__fs_line%%=*}"; then
			continue
		fi
		__fs_buf+=$__fs_line$'\n'
	done
	if [ -z "$__fs_buf" ]; then
		return 0
	fi
	_flowstate_wf state-append --stdin <<<"$__fs_buf" || return 1
}

# save_json_checkpoint NAME JSON: a named JSON value, kept in the
# workflow's checkpoint at phase_data.named.NAME (validated JSON).
save_json_checkpoint() {
	_flowstate_name save_json_checkpoint "${1-}" || return 1
	if [ $# -lt 2 ]; then
		echo "save_json_checkpoint: usage: save_json_checkpoint NAME JSON" >&2
		return 1
	fi
	_flowstate_wf checkpoint-set "phase_data.named.$1" "$2" || return 1
}

# load_json_checkpoint NAME: print it, or {} when it was never saved.
load_json_checkpoint() {
	_flowstate_name load_json_checkpoint "${1-}" || return 1
	_flowstate_wf checkpoint-get "phase_data.named.$1" --default '{}' || return 1
}

save_classification_checkpoint() {
	save_json_checkpoint "classification_${1-}" "${2-}"
}

load_classification_checkpoint() {
	load_json_checkpoint "classification_${1-}"
}

append_jsonl_log() {
	if [ $# -lt 2 ]; then
		echo "append_jsonl_log: usage: append_jsonl_log NAME JSON" >&2
		return 1
	fi
	_flowstate_wf log-append "$1" "$2" || return 1
}

# discover_latest_state_file PREFIX: the state file of the session's
# workflow if it belongs to command PREFIX. Replaces "newest file by
# mtime", which let concurrent workflows pick up each other's state.
discover_latest_state_file() {
	if [ -z "${1-}" ]; then
		echo "discover_latest_state_file: usage: discover_latest_state_file COMMAND" >&2
		return 1
	fi
	local __fs_out
	__fs_out=$(_flowstate_wf state-load --export) || return 1
	(
		_flowstate_eval "$__fs_out" WORKFLOW_ID CLAUDE_PROJECT_DIR COMMAND_NAME
		[ "${COMMAND_NAME-}" = "$1" ] || exit 1
		_flowstate_state_file
	)
}

validate_workflow_id() {
	if [[ ${1-} =~ ^[a-z_]+_[0-9]+(_[a-z_]+)?$ ]]; then
		printf '%s\n' "$1"
		return 0
	fi
	echo "validate_workflow_id: invalid workflow id ${1-}; using a recovered one" >&2
	printf '%s_%s_recovered\n' "${2:-workflow}" "$(date +%s)"
}

validate_state_restoration() {
	local __fs_missing
	__fs_missing=$(_flowstate_missing _flowstate_non_empty "$@")
	if [ -n "$__fs_missing" ]; then
		echo "ERROR: State restoration incomplete: missing${__fs_missing}" >&2
		return 1
	fi
}

# validate_state_file FILE: 0 when FILE exists and is readable. The
# original also wanted 50 bytes, a guess at corruption for a script it
# sourced; flowstate's state is data, and an empty one is valid.
validate_state_file() {
	if [ -n "${1-}" ] && [ -f "$1" ] && [ -r "$1" ]; then
		return 0
	fi
	printf 'validate_state_file: state file %q is missing or unreadable\n' "${1-}" >&2
	return 1
}

# validate_state_file_path ID [STATE_FILE]: 0 when STATE_FILE (default
# $STATE_FILE) is empty or is workflow ID's state file.
validate_state_file_path() {
	local __fs_file=${2-${STATE_FILE-}} __fs_want
	if [ -z "$__fs_file" ]; then
		return 0
	fi
	__fs_want="$(_flowstate_dir "${1-}")/state"
	if [ "$__fs_file" = "$__fs_want" ]; then
		return 0
	fi
	printf 'validate_state_file_path: STATE_FILE is %s but workflow %s keeps its state in %s\n' "$__fs_file" "${1-}" "$__fs_want" >&2
	return 1
}

# _flowstate_missing TEST VAR...: the VARs (space-separated, each with a
# leading space) for which `TEST VAR` fails.
_flowstate_missing() {
	local __fs_test=$1 __fs_v __fs_out=
	shift
	for __fs_v in "$@"; do
		if ! [[ $__fs_v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || ! "$__fs_test" "$__fs_v"; then
			__fs_out+=" $__fs_v"
		fi
	done
	printf '%s' "$__fs_out"
}

_flowstate_is_set() { [ -n "${!1+x}" ]; }
_flowstate_non_empty() { [ -n "${!1-}" ]; }

# validate_state_variables VAR...: 1 when a VAR is not set at all (empty
# counts as set, as in the original), logged through log_command_error
# when the caller sourced error-handling.sh.
validate_state_variables() {
	local __fs_missing
	__fs_missing=$(_flowstate_missing _flowstate_is_set "$@")
	if [ -z "$__fs_missing" ]; then
		return 0
	fi
	echo "validate_state_variables: not set:$__fs_missing" >&2
	if declare -F log_command_error >/dev/null; then
		log_command_error "${COMMAND_NAME:-unknown}" "${WORKFLOW_ID:-unknown}" "${USER_ARGS-}" state_error \
			"State variables not set:$__fs_missing" validate_state_variables '{}'
	fi
	return 1
}

# validate_block_state state|verify: the original's fixed variable lists,
# each required non-empty.
validate_block_state() {
	local __fs_vars __fs_missing
	case ${1-} in
	state) __fs_vars="FEATURE_DESCRIPTION WORKFLOW_ID CLAUDE_PROJECT_DIR RESEARCH_COMPLEXITY" ;;
	verify) __fs_vars="TOPIC_PATH RESEARCH_DIR PLANS_DIR WORKFLOW_ID FEATURE_DESCRIPTION" ;;
	*)
		printf 'validate_block_state: unknown block type %q; use state or verify\n' "${1-}" >&2
		return 1
		;;
	esac
	# shellcheck disable=SC2086 # the lists are words
	__fs_missing=$(_flowstate_missing _flowstate_non_empty $__fs_vars)
	if [ -n "$__fs_missing" ]; then
		echo "validate_block_state: $1 block: empty or not set:$__fs_missing" >&2
		return 1
	fi
}

# validate_library_functions LIBRARY: compat defines every function of
# the libraries it replaces, so there is nothing to check for them.
# error-handling.sh is not replaced: its log_command_error must be there.
validate_library_functions() {
	case ${1-} in
	error-handling)
		if ! declare -F log_command_error >/dev/null; then
			echo "validate_library_functions: error-handling: log_command_error is not defined (source error-handling.sh)" >&2
			return 1
		fi
		;;
	esac
	return 0
}

# ---- state machine ----------------------------------------------------

normalize_complexity() {
	local __fs_c=${1-}
	__fs_c=${__fs_c%%.*}
	if ! [[ $__fs_c =~ ^[0-9]+$ ]]; then
		echo 2
	elif ((10#$__fs_c >= 1 && 10#$__fs_c <= 4)); then
		echo $((10#$__fs_c))
	elif ((10#$__fs_c < 30)); then
		echo 1
	elif ((10#$__fs_c < 50)); then
		echo 2
	elif ((10#$__fs_c < 70)); then
		echo 3
	else
		echo 4
	fi
}

# sm_init DESCRIPTION COMMAND WORKFLOW_TYPE RESEARCH_COMPLEXITY RESEARCH_TOPICS_JSON:
# create the workflow (with this shell's WORKFLOW_ID, if set), make it the
# session's, set its variables here and print the normalised complexity.
sm_init() {
	if [ -z "${3-}" ] || [ -z "${4-}" ] || [ -z "${5-}" ]; then
		echo "sm_init: usage: sm_init DESCRIPTION COMMAND WORKFLOW_TYPE RESEARCH_COMPLEXITY RESEARCH_TOPICS_JSON" >&2
		return 1
	fi
	local __fs_c __fs_id
	__fs_c=$(normalize_complexity "$4")
	local __fs_args=(sm-init --description "$1" --command "$2" --scope "$3" --complexity "$__fs_c" --topics "$5")
	if [ -n "${WORKFLOW_ID-}" ]; then
		__fs_args+=(--workflow "$WORKFLOW_ID")
	fi
	__fs_id=$("${FLOWSTATE_BIN:-flowstate}" "${__fs_args[@]}") || return 1
	WORKFLOW_ID=$__fs_id
	export WORKFLOW_ID
	_flowstate_load || return 1
	printf '%s\n' "$__fs_c"
}

# sm_transition STATE [REASON]: 0 when done (or already there), 1 when
# refused; the shell's CURRENT_STATE and COMPLETED_STATES follow.
sm_transition() {
	if [ -z "${1-}" ]; then
		echo "sm_transition: usage: sm_transition STATE [REASON]" >&2
		return 1
	fi
	if [ -n "${2-}" ]; then
		_flowstate_wf sm-transition "$1" --reason "$2" || return 1
	else
		_flowstate_wf sm-transition "$1" || return 1
	fi
	_flowstate_load CURRENT_STATE TERMINAL_STATE COMPLETED_STATES COMPLETED_STATES_COUNT
}

# sm_finish [complete|failed|abandoned]: not in the originals, where
# reaching the terminal state ended a workflow. flowstate keeps it active
# while its terminal phase runs; call this when that work is done.
sm_finish() {
	_flowstate_wf sm-finish --status "${1:-complete}" || return 1
	_flowstate_load COMPLETED_STATES COMPLETED_STATES_COUNT
}

sm_current_state() { _flowstate_status CURRENT_STATE; }
sm_get_scope() { _flowstate_status WORKFLOW_SCOPE; }

sm_get_completed_count() {
	local __fs_states
	__fs_states=$(_flowstate_status COMPLETED_STATES) || return 1
	read -r -a __fs_states <<<"$__fs_states"
	echo "${#__fs_states[@]}"
}

sm_is_terminal() {
	[ "$(_flowstate_status IS_TERMINAL)" = true ]
}

sm_validate_state() {
	_flowstate_wf sm-status >/dev/null
}

sm_print_status() {
	_flowstate_wf status >&2
}

# sm_save FILE: write the checkpoint's state_machine section to FILE.
sm_save() {
	if [ -z "${1-}" ]; then
		echo "sm_save: usage: sm_save FILE" >&2
		return 1
	fi
	mkdir -p "$(dirname "$1")" || return 1
	_flowstate_wf checkpoint-get state_machine >"$1" || return 1
}

# sm_execute: run execute_<CURRENT_STATE>_phase if it is defined.
sm_execute() {
	local __fs_state __fs_fn
	__fs_state=$(sm_current_state) || return 1
	__fs_fn="execute_${__fs_state}_phase"
	if declare -F "$__fs_fn" >/dev/null; then
		"$__fs_fn"
		return
	fi
	if [ "$__fs_state" = complete ]; then
		return 0
	fi
	echo "sm_execute: no handler $__fs_fn defined" >&2
	return 1
}

# sm_load FILE: set the state machine's variables from the workflow FILE
# belongs to (a checkpoint path compat printed), else from this shell's
# workflow. The file's own contents are not adopted: the workflow's
# checkpoint is the one truth (import an old checkpoint with
# `flowstate checkpoint-save`). 1 when FILE does not exist.
sm_load() {
	if [ -z "${1-}" ] || [ ! -f "${1%%#*}" ]; then
		printf 'sm_load: checkpoint file %q not found\n' "${1-}" >&2
		return 1
	fi
	local __fs_id
	if __fs_id=$(_flowstate_ref_id "$1"); then
		WORKFLOW_ID=$__fs_id
		export WORKFLOW_ID
	fi
	_flowstate_load CURRENT_STATE TERMINAL_STATE WORKFLOW_SCOPE WORKFLOW_DESCRIPTION COMMAND_NAME COMPLETED_STATES COMPLETED_STATES_COUNT
}

# save_completed_states_to_state: sm_transition already stored them, so
# there is nothing left to save.
save_completed_states_to_state() { return 0; }

# load_completed_states_from_state: COMPLETED_STATES and COMPLETED_STATE_i
# from the workflow; always 0, as in the original.
load_completed_states_from_state() {
	_flowstate_load COMPLETED_STATES COMPLETED_STATES_COUNT 2>/dev/null
	return 0
}

# _flowstate_topics DESCRIPTION [COMPLEXITY]: the research topics
# `flowstate classify` finds in DESCRIPTION, as a JSON array; the
# original's generic ["Topic 1", ...] (COMPLEXITY of them, default 2)
# for a blank description, where classify could only guess.
_flowstate_topics() {
	local __fs_out __fs_n=${2:-2} __fs_i
	if [[ $1 == *[![:space:]]* ]] && __fs_out=$("${FLOWSTATE_BIN:-flowstate}" classify "$1" 2>/dev/null |
		"${FLOWSTATE_BIN:-flowstate}" checkpoint-get research_topics --from -) && [ "$__fs_out" != "[]" ]; then
		printf '%s\n' "$__fs_out"
		return 0
	fi
	[[ $__fs_n =~ ^[1-4]$ ]] || __fs_n=2
	__fs_out='"Topic 1"'
	for ((__fs_i = 2; __fs_i <= __fs_n; __fs_i++)); do
		__fs_out+=",\"Topic $__fs_i\""
	done
	printf '[%s]\n' "$__fs_out"
}

# generate_descriptive_topics_from_description DESCRIPTION [COMPLEXITY]
generate_descriptive_topics_from_description() {
	_flowstate_topics "${1-}" "${2-}"
}

# generate_descriptive_topics_from_plans PLAN_PATH...: topics named after
# the plan files (plans/002_api_redesign.md is "Api Redesign").
generate_descriptive_topics_from_plans() {
	local __fs_desc="revise" __fs_p
	for __fs_p in "$@"; do
		__fs_desc+=" $__fs_p and"
	done
	_flowstate_topics "${__fs_desc% and}" "$#"
}

map_phase_to_state() {
	case ${1-} in
	1) echo research ;;
	2) echo plan ;;
	3) echo implement ;;
	4) echo test ;;
	5) echo debug ;;
	6) echo document ;;
	7) echo complete ;;
	*) echo initialize ;;
	esac
}

map_state_to_phase() {
	case ${1-} in
	research) echo 1 ;;
	plan) echo 2 ;;
	implement) echo 3 ;;
	test) echo 4 ;;
	debug) echo 5 ;;
	document) echo 6 ;;
	complete) echo 7 ;;
	*) echo 0 ;;
	esac
}

# ---- checkpoints ------------------------------------------------------
# checkpoint-utils.sh wrote a new file per save; here every checkpoint is
# the workflow's one checkpoint.json, so writes are locked and validated
# and nothing is lost to a 1-second id or a fixed temp name. Parallel-
# operation and iteration checkpoints are named values inside it
# (phase_data.named.NAME, as save_json_checkpoint keeps them): compat
# prints them as CHECKPOINT_PATH#NAME, a reference the functions below
# accept, not a file. Any other existing FILE is read (never written) as
# plain JSON, so old checkpoints can still be inspected.

# _flowstate_json_str TEXT: TEXT as a JSON string, for the few documents
# compat puts together itself.
_flowstate_json_str() {
	local __fs_s=$1 __fs_i __fs_c __fs_u __fs_o
	__fs_s=${__fs_s//'\'/'\\'}
	__fs_s=${__fs_s//'"'/'\"'}
	__fs_s=${__fs_s//$'\n'/'\n'}
	__fs_s=${__fs_s//$'\t'/'\t'}
	__fs_s=${__fs_s//$'\r'/'\r'}
	if [[ $__fs_s == *[[:cntrl:]]* ]]; then
		for ((__fs_i = 1; __fs_i < 32; __fs_i++)); do
			printf -v __fs_o '%03o' "$__fs_i"
			printf -v __fs_c "\\$__fs_o"
			printf -v __fs_u '\\u%04x' "$__fs_i"
			__fs_s=${__fs_s//"$__fs_c"/"$__fs_u"}
		done
	fi
	printf '"%s"' "$__fs_s"
}

# _flowstate_now: the time as checkpoints write it.
_flowstate_now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# _flowstate_ref_id FILE: the workflow id in a checkpoint path compat
# printed (…/.claude/state/workflows/ID/checkpoint.json[#NAME]).
_flowstate_ref_id() {
	local __fs_p=${1%%#*}
	case $__fs_p in
	*/.claude/state/workflows/*/checkpoint.json) ;;
	*) return 1 ;;
	esac
	__fs_p=${__fs_p%/checkpoint.json}
	printf '%s\n' "${__fs_p##*/}"
}

# _flowstate_ref FUNC FILE: what a checkpoint FILE argument means. Sets
# the caller's __fs_cmd (flowstate with the workflow's --workflow),
# __fs_at (the path of a named checkpoint, empty for the whole one) and
# __fs_src ((--from FILE) for a plain JSON file, else empty).
_flowstate_ref() {
	local __fs_id
	__fs_cmd=("${FLOWSTATE_BIN:-flowstate}")
	__fs_at= __fs_src=()
	if __fs_id=$(_flowstate_ref_id "${2-}"); then
		__fs_cmd+=(--workflow "$__fs_id")
		case $2 in
		*#*) __fs_at="phase_data.named.${2##*#}" ;;
		esac
		return 0
	fi
	if [ -n "${2-}" ] && [ -f "$2" ]; then
		__fs_src=(--from "$2")
		return 0
	fi
	printf '%s: checkpoint file %q not found\n' "$1" "${2-}" >&2
	return 1
}

# _flowstate_ref_writable FUNC: refuse to write a plain file.
_flowstate_ref_writable() {
	if [ ${#__fs_src[@]} -gt 0 ]; then
		printf '%s: %s is not a flowstate checkpoint; only workflow checkpoints are written\n' "$1" "${__fs_src[1]}" >&2
		return 1
	fi
}

# _flowstate_ref_path PATH: PATH inside the referenced document.
_flowstate_ref_path() {
	if [ -n "$__fs_at" ] && [ -n "$1" ]; then
		printf '%s.%s\n' "$__fs_at" "$1"
	else
		printf '%s\n' "${__fs_at:-$1}"
	fi
}

# _flowstate_ref_print: the whole referenced document.
_flowstate_ref_print() {
	if [ -n "$__fs_at" ]; then
		"${__fs_cmd[@]}" checkpoint-get "$__fs_at" "${__fs_src[@]}"
	elif [ ${#__fs_src[@]} -gt 0 ]; then
		cat -- "${__fs_src[1]}"
	else
		"${__fs_cmd[@]}" checkpoint-load
	fi
}

# _flowstate_ref_check KIND [FLAG...]: flowstate checkpoint-check on the
# referenced document.
_flowstate_ref_check() {
	local __fs_kind=$1
	shift
	"${__fs_cmd[@]}" checkpoint-check "$__fs_kind" ${__fs_at:+--at "$__fs_at"} "${__fs_src[@]}" "$@"
}

# _flowstate_cp_path [NAME]: this shell's workflow's checkpoint, or the
# reference to its named checkpoint NAME.
_flowstate_cp_path() {
	local __fs_id=${WORKFLOW_ID-}
	if [ -z "$__fs_id" ]; then
		__fs_id=$(_flowstate_status WORKFLOW_ID) || return 1
	fi
	printf '%s/checkpoint.json%s\n' "$(_flowstate_dir "$__fs_id")" "${1:+#$1}"
}

# _flowstate_saved FUNC TYPE [PROJECT]: true when the workflow holds a
# save_checkpoint of TYPE (and PROJECT). The original matched file names
# by prefix, so one type could restore another's checkpoint.
_flowstate_saved() {
	local __fs_t __fs_p
	if [ -z "${2-}" ]; then
		printf '%s: usage: %s TYPE [PROJECT]\n' "$1" "$1" >&2
		return 1
	fi
	__fs_t=$(_flowstate_wf checkpoint-get workflow_type --default '') || return 1
	__fs_p=$(_flowstate_wf checkpoint-get project_name --default '') || return 1
	if [ "$__fs_t" = "$2" ] && { [ -z "${3-}" ] || [ "$__fs_p" = "$3" ]; }; then
		return 0
	fi
	printf '%s: no %s checkpoint%s in this workflow\n' "$1" "$2" "${3:+ of project $3}" >&2
	return 1
}

# save_checkpoint TYPE PROJECT [STATE_JSON]: merge STATE_JSON (or stdin)
# into the workflow's checkpoint and print its path. tests_passing:false
# stays false; state_machine and status stay flowstate's (sm_*).
save_checkpoint() {
	if [ -z "${1-}" ] || [ -z "${2-}" ]; then
		echo "save_checkpoint: usage: save_checkpoint TYPE PROJECT [STATE_JSON]" >&2
		return 1
	fi
	if [ -n "${3-}" ]; then
		_flowstate_wf checkpoint-save --workflow-type "$1" --project-name "$2" - <<<"$3" || return 1
	else
		_flowstate_wf checkpoint-save --workflow-type "$1" --project-name "$2" - || return 1
	fi
}

# restore_checkpoint TYPE [PROJECT]: print the workflow's checkpoint if it
# holds a save of TYPE (and PROJECT), migrated as every read is.
restore_checkpoint() {
	_flowstate_saved restore_checkpoint "${1-}" "${2-}" || return 1
	_flowstate_wf checkpoint-load || return 1
}

# checkpoint_delete TYPE PROJECT: forget the save, so restore_checkpoint
# finds none. The workflow and its history stay.
checkpoint_delete() {
	if [ -z "${2-}" ]; then
		echo "checkpoint_delete: usage: checkpoint_delete TYPE PROJECT" >&2
		return 1
	fi
	_flowstate_saved checkpoint_delete "$1" "$2" 2>/dev/null || return 0
	_flowstate_wf checkpoint-set workflow_type null || return 1
	echo "Deleted checkpoint: $1 $2"
}

# validate_checkpoint FILE: 0 when FILE is a valid checkpoint (after
# migration), else 1 with the reason on stderr.
validate_checkpoint() {
	local -a __fs_cmd __fs_src
	local __fs_at
	_flowstate_ref validate_checkpoint "${1-}" || return 1
	_flowstate_ref_check checkpoint >&2 || return 1
}

# checkpoint_get_field FILE PATH: the value at the jq-style PATH (.a.b,
# .a[0]); nothing for null or missing. false prints false (the original's
# `// empty` hid it).
checkpoint_get_field() {
	local -a __fs_cmd __fs_src
	local __fs_at __fs_p=${2-} __fs_out
	_flowstate_ref checkpoint_get_field "${1-}" || return 1
	__fs_p=${__fs_p#.}
	__fs_p=${__fs_p//[/.}
	__fs_p=${__fs_p//]/}
	__fs_p=$(_flowstate_ref_path "$__fs_p")
	if [ -z "$__fs_p" ]; then
		_flowstate_ref_print || return 1
		return 0
	fi
	__fs_out=$("${__fs_cmd[@]}" checkpoint-get "$__fs_p" --default null "${__fs_src[@]}") || return 1
	if [ "$__fs_out" != null ]; then
		printf '%s\n' "$__fs_out"
	fi
}

# checkpoint_set_field FILE PATH VALUE: store VALUE as a string (as the
# original did), under the workflow's lock; updated_at follows.
checkpoint_set_field() {
	local -a __fs_cmd __fs_src
	local __fs_at __fs_p=${2-}
	if [ $# -lt 3 ]; then
		echo "checkpoint_set_field: usage: checkpoint_set_field FILE PATH VALUE" >&2
		return 1
	fi
	_flowstate_ref checkpoint_set_field "$1" && _flowstate_ref_writable checkpoint_set_field || return 1
	__fs_p=${__fs_p#.}
	__fs_p=${__fs_p//[/.}
	__fs_p=${__fs_p//]/}
	"${__fs_cmd[@]}" checkpoint-set "$(_flowstate_ref_path "$__fs_p")" "$(_flowstate_json_str "$3")" || return 1
}

# checkpoint_increment_replan FILE PHASE REASON: one replan, in one locked
# write (concurrent calls all count).
checkpoint_increment_replan() {
	local -a __fs_cmd __fs_src
	local __fs_at
	if [ -z "${2-}" ]; then
		echo "checkpoint_increment_replan: usage: checkpoint_increment_replan FILE PHASE REASON" >&2
		return 1
	fi
	_flowstate_ref checkpoint_increment_replan "${1-}" && _flowstate_ref_writable checkpoint_increment_replan || return 1
	"${__fs_cmd[@]}" checkpoint-replan "$2" "${3-}" >/dev/null || return 1
}

# check_safe_resume_conditions FILE: 0 when safe to resume: tests not
# failing, no last error, status in_progress, updated at most 7 days
# ago, plan file unchanged since save_checkpoint.
check_safe_resume_conditions() {
	local -a __fs_cmd __fs_src
	local __fs_at
	_flowstate_ref check_safe_resume_conditions "${1-}" || return 1
	_flowstate_ref_check resume >/dev/null 2>&1 || return 1
}

# get_skip_reason FILE: the first unmet resume condition, or "All
# conditions met".
get_skip_reason() {
	local -a __fs_cmd __fs_src
	local __fs_at __fs_out __fs_rc=0
	_flowstate_ref get_skip_reason "${1-}" || return 1
	__fs_out=$(_flowstate_ref_check resume 2>/dev/null) || __fs_rc=$?
	case $__fs_rc in
	0) echo "All conditions met" ;;
	3)
		__fs_out=${__fs_out%%$'\n'*}
		printf '%s\n' "${__fs_out#error: }"
		;;
	*)
		echo "get_skip_reason: the checkpoint could not be read" >&2
		return 1
		;;
	esac
}

# save_state_machine_checkpoint TYPE PROJECT SM_JSON: a save_checkpoint
# whose state holds SM_JSON. The workflow's machine stays the one
# sm_transition keeps; SM_JSON is kept in workflow_state.state_machine.
save_state_machine_checkpoint() {
	if [ -z "${3-}" ]; then
		echo "save_state_machine_checkpoint: usage: save_state_machine_checkpoint TYPE PROJECT STATE_MACHINE_JSON" >&2
		return 1
	fi
	save_checkpoint "${1-}" "${2-}" "{\"state_machine\": $3}"
}

# load_state_machine_checkpoint TYPE [PROJECT]: the workflow's state
# machine, when it holds a save of TYPE (and PROJECT).
load_state_machine_checkpoint() {
	_flowstate_saved load_state_machine_checkpoint "${1-}" "${2-}" || return 1
	_flowstate_wf checkpoint-get state_machine || return 1
}

# migrate_checkpoint_format FILE: flowstate migrates every checkpoint the
# first time it reads it (keeping a backup), so there is nothing to do.
migrate_checkpoint_format() { return 0; }

# save_parallel_operation_checkpoint PLAN_PATH OPERATION [OPERATIONS_JSON]:
# record a parallel operation before it runs; print its reference.
save_parallel_operation_checkpoint() {
	if [ -z "${2-}" ]; then
		echo "save_parallel_operation_checkpoint: usage: save_parallel_operation_checkpoint PLAN_PATH OPERATION [OPERATIONS_JSON]" >&2
		return 1
	fi
	local __fs_name __fs_ns
	__fs_ns=$(date +%s%N)
	__fs_name="parallel_${2}_${__fs_ns}"
	_flowstate_name save_parallel_operation_checkpoint "$__fs_name" || return 1
	_flowstate_wf checkpoint-set "phase_data.named.$__fs_name" \
		"{\"checkpoint_id\": \"$__fs_name\", \"operation_type\": $(_flowstate_json_str "$2"), \"plan_path\": $(_flowstate_json_str "$1"), \"created_at\": \"$(_flowstate_now)\", \"operations\": ${3:-[]}, \"status\": \"pre_execution\"}" || return 1
	_flowstate_cp_path "$__fs_name"
}

# restore_from_checkpoint FILE: a banner on stderr, the document on stdout.
restore_from_checkpoint() {
	local -a __fs_cmd __fs_src
	local __fs_at
	_flowstate_ref restore_from_checkpoint "${1-}" || return 1
	echo "Restoring from checkpoint: $1" >&2
	_flowstate_ref_print || return 1
}

# validate_checkpoint_integrity FILE: {"valid": true} (with "warnings" when
# the plan file is gone) or {"valid": false, "errors": [...]}.
validate_checkpoint_integrity() {
	local -a __fs_cmd __fs_src
	local __fs_at
	_flowstate_ref validate_checkpoint_integrity "${1-}" || return 1
	_flowstate_ref_check operation --json || return 1
}

# validate_iteration_checkpoint FILE: 0 valid, 1 errors, 2 warnings only;
# the findings go to stderr.
validate_iteration_checkpoint() {
	local -a __fs_cmd __fs_src
	local __fs_at __fs_out __fs_rc=0
	_flowstate_ref validate_iteration_checkpoint "${1-}" || return 1
	__fs_out=$(_flowstate_ref_check iteration) || __fs_rc=$?
	if [ -n "$__fs_out" ]; then
		printf '%s\n' "$__fs_out" >&2
	fi
	case $__fs_rc in
	0) ;;
	*) return 1 ;;
	esac
	case $__fs_out in
	*warning:*) return 2 ;;
	esac
	return 0
}

# load_iteration_checkpoint FILE: print the iteration checkpoint when it
# validates. Warnings do not fail it (the original failed on them too).
load_iteration_checkpoint() {
	local __fs_rc=0
	validate_iteration_checkpoint "${1-}" || __fs_rc=$?
	case $__fs_rc in
	0 | 2) ;;
	*) return 1 ;;
	esac
	local -a __fs_cmd __fs_src
	local __fs_at
	_flowstate_ref load_iteration_checkpoint "$1" && _flowstate_ref_print || return 1
}

# save_iteration_checkpoint JSON: keep JSON (an object with an integer
# iteration) as the named checkpoint iteration_N of the workflow its
# workflow_id names (else this shell's), under the project instead of
# $HOME; add version and timestamp when absent. Prints its reference.
save_iteration_checkpoint() {
	local __fs_json=${1-} __fs_n __fs_wid __fs_add= __fs_body
	__fs_n=$("${FLOWSTATE_BIN:-flowstate}" checkpoint-get iteration --default '' --from - <<<"$__fs_json") || return 1
	if ! [[ $__fs_n =~ ^[0-9]+$ ]]; then
		echo "save_iteration_checkpoint: the checkpoint needs an integer \"iteration\"" >&2
		return 1
	fi
	__fs_wid=$("${FLOWSTATE_BIN:-flowstate}" checkpoint-get workflow_id --default '' --from - <<<"$__fs_json") || return 1
	if [ -z "$("${FLOWSTATE_BIN:-flowstate}" checkpoint-get version --default '' --from - <<<"$__fs_json")" ]; then
		__fs_add+='"version": "2.1", '
	fi
	if [ -z "$("${FLOWSTATE_BIN:-flowstate}" checkpoint-get timestamp --default '' --from - <<<"$__fs_json")" ]; then
		__fs_add+="\"timestamp\": \"$(_flowstate_now)\", "
	fi
	# The object is valid JSON (read above): put the new keys first.
	__fs_body=${__fs_json#*\{}
	if [[ $__fs_body =~ ^[[:space:]]*\} ]]; then
		__fs_add=${__fs_add%, }
	fi
	(
		WORKFLOW_ID=${__fs_wid:-${WORKFLOW_ID-}}
		_flowstate_wf checkpoint-set "phase_data.named.iteration_$__fs_n" "{$__fs_add$__fs_body" &&
			_flowstate_cp_path "iteration_$__fs_n"
	) || return 1
}
