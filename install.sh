#!/bin/sh
# install.sh: build flowstate and install it.
#
#   ./install.sh [PROJECT_DIR]        install into PROJECT_DIR/.claude (default: the current directory)
#   ./install.sh --plugin             build bin/flowstate here, for `claude --plugin-dir .`
#   ./install.sh --uninstall [DIR]    remove what the install put into DIR/.claude
#
# A thin wrapper: the logic lives in `flowstate install`, `uninstall` and `doctor`.
# The binary comes from `go build` when Go is installed, else from a flowstate
# already in bin/ or on PATH; --uninstall uses the project's .claude/bin/flowstate
# when it runs.
set -eu

repo=$(cd "$(dirname "$0")" && pwd)

die() {
	printf 'install.sh: %s\n' "$1" >&2
	exit 1
}

# flowstate_bin prints the binary to use, building bin/flowstate when Go is here.
flowstate_bin() {
	if command -v go >/dev/null 2>&1; then
		# scripts/build holds the flags (version stamp, stripped, no docs).
		sh "$repo/scripts/build" "$repo/bin/flowstate" || die "go build failed"
		printf '%s\n' "$repo/bin/flowstate"
	elif [ -x "$repo/bin/flowstate" ]; then
		printf '%s\n' "$repo/bin/flowstate"
	elif command -v flowstate >/dev/null 2>&1; then
		command -v flowstate
	else
		die "Go is not installed and there is no flowstate binary in $repo/bin or on PATH: install Go 1.25+ (https://go.dev/dl/) and run this again"
	fi
}

case "${1:-}" in
-h | --help)
	sed -n '2,/^set /s/^# \{0,1\}//p' "$0"
	;;
--plugin)
	bin=$(flowstate_bin)
	printf 'install.sh: %s is ready; run: claude --plugin-dir %s\n' "$bin" "$repo" >&2
	;;
--uninstall)
	# The project's own binary, which made the install, undoes it: no build
	# needed. Built (or found) only when that one is gone or does not run.
	bin=${2:-.}/.claude/bin/flowstate
	if ! { [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; }; then
		bin=$(flowstate_bin)
	fi
	exec "$bin" uninstall "${2:-.}"
	;;
-*)
	die "unknown option $1 (see ./install.sh --help)"
	;;
*)
	bin=$(flowstate_bin)
	"$bin" install --from "$repo" "${1:-.}"
	# Show the doctor's findings only when something is wrong.
	if ! report=$("$bin" doctor "${1:-.}" 2>&1); then
		printf '%s\n' "$report" >&2
		exit 1
	fi
	;;
esac
