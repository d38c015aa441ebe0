# flowstate compat: the functions of the original state-persistence.sh,
# workflow-state-machine.sh and checkpoint-utils.sh, each a thin call to
# flowstate. Load with:   eval "$(flowstate compat)"
# It sets no shell options (no set -e, -u or pipefail) and runs no stored
# value: state comes back through `flowstate state-load`, whose lines are
# quoted so that eval only assigns.

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
	__fs_out=$(_flowstate_wf state-load) || return 1
	_flowstate_eval "$__fs_out" "$@"
}

# _flowstate_state_file: where the workflow's key/value state lives. For
# information and [ -f ] checks only: it is data, never source it.
_flowstate_state_file() {
	printf '%s\n' "${CLAUDE_PROJECT_DIR:-$PWD}/.claude/state/workflows/${WORKFLOW_ID-}/state"
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
		__fs_out=$("${FLOWSTATE_BIN:-flowstate}" --workflow "$__fs_id" state-load) || __fs_rc=$?
	else
		__fs_out=$(_flowstate_wf state-load) || __fs_rc=$?
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
	__fs_out=$(_flowstate_wf state-load) || return 1
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
	local __fs_v __fs_missing=
	for __fs_v in "$@"; do
		if ! [[ $__fs_v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [ -z "${!__fs_v-}" ]; then
			__fs_missing+=" $__fs_v"
		fi
	done
	if [ -n "$__fs_missing" ]; then
		echo "ERROR: State restoration incomplete: missing${__fs_missing}" >&2
		return 1
	fi
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
