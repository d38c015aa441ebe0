# flowstate compat: the functions of the original state-persistence.sh,
# workflow-state-machine.sh and checkpoint-utils.sh (and of the design
# documents they come from), each a call of the binary, which does the
# work. Load with:   eval "$(flowstate compat)"
# It sets no shell options (no set -e, -u or pipefail) and runs no stored
# value: the binary answers only quoted variable assignments.

# _flowstate_call FUNC N READ... ARGS...: run FUNC in the binary, passing
# what of this shell it reads (the N READs: a variable NAME; NAME[@], an
# array, passed one item a line; @K, its arguments from the Kth on,
# which name variables; PREFIX(), the functions so named) and this
# shell's WORKFLOW_ID and STATE_FILE. Its output and
# messages pass straight through; the assignments it answers on fd 3 are
# evaluated here, and a function of this shell it names in __fs_run
# (sm_execute's handler, log_command_error) is called.
_flowstate_call() {
	local __fs_f=$1 __fs_w __fs_v __fs_ans= __fs_rc=0
	local -a __fs_reads=("${@:3:$2}") __fs_names=() __fs_sh=() __fs_run=()
	shift $((2 + $2))
	if [ -n "${WORKFLOW_ID-}" ]; then
		__fs_sh+=(--workflow-id "$WORKFLOW_ID")
	fi
	if [ -n "${STATE_FILE-}" ]; then
		__fs_sh+=(--state-file "$STATE_FILE")
	fi
	for __fs_w in ${__fs_reads[@]+"${__fs_reads[@]}"}; do
		case $__fs_w in
		@*) __fs_names+=("${@:${__fs_w#@}}") ;;
		*'[@]')
			__fs_v=${__fs_w%'[@]'}
			__fs_w=$__fs_v[@]
			if [[ $__fs_v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [ -n "${!__fs_w+x}" ]; then
				printf -v __fs_w '%s\n' "${!__fs_w}"
				__fs_sh+=(--set "$__fs_v=$__fs_w")
			fi
			;;
		*'()')
			while IFS= read -r __fs_v; do
				__fs_sh+=(--function "$__fs_v")
			done < <(compgen -A function -- "${__fs_w%'()'}")
			;;
		*) __fs_names+=("$__fs_w") ;;
		esac
	done
	for __fs_v in ${__fs_names[@]+"${__fs_names[@]}"}; do
		if [[ $__fs_v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [ -n "${!__fs_v+x}" ]; then
			__fs_sh+=(--set "$__fs_v=${!__fs_v}")
		fi
	done
	{ __fs_ans=$("${FLOWSTATE_BIN:-flowstate}" compat-call --answer-fd 3 ${__fs_sh[@]+"${__fs_sh[@]}"} -- "$__fs_f" "$@" 3>&1 1>&4 4>&-); } 4>&1 || __fs_rc=$?
	eval "$__fs_ans"
	if [ ${#__fs_run[@]} -gt 0 ]; then
		"${__fs_run[@]}"
		__fs_w=$?
		if [ "$__fs_rc" -eq 0 ]; then
			__fs_rc=$__fs_w
		fi
	fi
	return "$__fs_rc"
}
