#!/bin/sh
# install.sh: build flowstate and install it.
#
#   ./install.sh [--force] [PROJECT_DIR]     install into PROJECT_DIR/.claude (default: the
#                                            project the current directory is in); --force
#                                            also replaces files you changed, and your own
#                                            command or agent of a name flowstate uses,
#                                            keeping each as NAME.flowstate-backup
#   ./install.sh --plugin                    build bin/flowstate here, for `claude --plugin-dir`
#   ./install.sh --uninstall [PROJECT_DIR]   remove what the install put into PROJECT_DIR/.claude
#                                            and put back what --force kept aside
#
# Options go before or after PROJECT_DIR. A thin wrapper: the logic lives in
# `flowstate install`, `uninstall` and `doctor`. The binary comes from
# `go build` (scripts/build) when Go is installed, else from a flowstate of
# this checkout's version in bin/ or on PATH (the npm packages install
# one without Go: README, "Install and run"); --uninstall uses the
# project's .claude/bin/flowstate when it runs.
set -eu

repo=$(cd "$(dirname "$0")" && pwd)

usage() {
	sed -n '2,/^set /s/^# \{0,1\}//p' "$0"
}

die() {
	printf 'install.sh: %s\n' "$1" >&2
	exit 1
}

# usage_error MESSAGE: a bad command line is exit 2, as in flowstate; the
# usage lines follow the message.
usage_error() {
	printf 'install.sh: %s\nusage:\n' "$1" >&2
	sed -n 's/^# \(  \)/\1/p' "$0" >&2
	exit 2
}

mode=install force= dir=
for arg in "$@"; do
	case $arg in
	-h | --help)
		usage
		exit 0
		;;
	--plugin | --uninstall)
		[ "$mode" = install ] || [ "$mode" = "${arg#--}" ] || usage_error "--$mode and $arg exclude each other"
		mode=${arg#--}
		;;
	--force) force=--force ;;
	-*) usage_error "unknown option $arg" ;;
	*)
		[ -z "$dir" ] || usage_error "one PROJECT_DIR at most; got $dir and $arg"
		dir=$arg
		;;
	esac
done
case $mode in
plugin) [ -z "$dir$force" ] || usage_error "--plugin takes no PROJECT_DIR and no --force: it builds bin/flowstate in $repo" ;;
uninstall) [ -z "$force" ] || usage_error "--uninstall takes no --force: it keeps files you changed and says so" ;;
esac

# The version this checkout is (scripts/build --version: "flowstate X (commit Y)").
want=$(sh "$repo/scripts/build" --version)
want=${want%% (commit *}

# building says what is built and, when Go has not built it here before (its
# build cache empty, or a module flowstate needs not downloaded), that the
# first build downloads and compiles everything: a minute or two, silent.
building() {
	cache=$(go env GOCACHE 2>/dev/null) || cache=
	mods=$(go env GOMODCACHE 2>/dev/null) || mods=
	cli=$(sed -n 's,^[[:space:]]*github.com/urfave/cli/v2 \(v[^ ]*\).*,\1,p' "$repo/go.mod" | head -n 1)
	if [ -n "$cache" ] && [ -n "$(ls -A "$cache" 2>/dev/null | head -n 1)" ] &&
		[ -f "$mods/cache/download/github.com/urfave/cli/v2/@v/$cli.zip" ]; then
		printf 'install.sh: building %s into %s/bin/flowstate with go build\n' "$want" "$repo" >&2
	else
		printf 'install.sh: building %s into %s/bin/flowstate with go build. Go has not built it on this machine before: it downloads and compiles flowstate'"'"'s modules first, which takes a minute or two with no output; later builds take seconds.\n' "$want" "$repo" >&2
	fi
}

# flowstate_bin prints the binary to use: bin/flowstate built with Go, else a
# flowstate of this version already in bin/ or on PATH (another version would
# not match the commands and agents installed from this checkout).
flowstate_bin() {
	if command -v go >/dev/null 2>&1; then
		building
		# scripts/build holds the flags (version stamp, stripped, no docs).
		sh "$repo/scripts/build" "$repo/bin/flowstate" || die "go build failed"
		printf '%s\n' "$repo/bin/flowstate"
		return
	fi
	for candidate in "$repo/bin/flowstate" "$(command -v flowstate 2>/dev/null || true)"; do
		[ -n "$candidate" ] && [ -x "$candidate" ] || continue
		have=$("$candidate" version 2>/dev/null) || continue
		if [ "${have%% (commit *}" = "$want" ]; then
			printf '%s\n' "$candidate"
			return
		fi
		printf 'install.sh: %s is %s, but this checkout is %s; not using it\n' "$candidate" "$have" "$want" >&2
	done
	die "Go is not installed, and there is no $want in $repo/bin or on PATH: install Go 1.25+ (https://go.dev/dl/), or $want from the npm packages (README.md, \"Install and run\": without Go), and run this again"
}

case $mode in
plugin)
	bin=$(flowstate_bin)
	printf 'install.sh: %s is ready.\nNext, in your project: claude --plugin-dir %s   (commands are /flowstate:coordinate and so on)\nIn a terminal, flowstate is %s.\n' "$bin" "$repo" "$bin" >&2
	;;
uninstall)
	# The project's own binary, which made the install, undoes it: no build
	# needed. Built (or found) only when that one is gone or does not run.
	bin=${dir:-.}/.claude/bin/flowstate
	if ! { [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; }; then
		bin=$(flowstate_bin)
	fi
	exec "$bin" uninstall ${dir:+"$dir"}
	;;
install)
	bin=$(flowstate_bin)
	"$bin" install $force --from "$repo" ${dir:+"$dir"}
	# The doctor's findings: problems fail the install, warnings are shown.
	if ! report=$("$bin" doctor ${dir:+"$dir"} 2>&1); then
		printf '%s\n' "$report" >&2
		die "the install is not complete: fix what doctor found above, then run this again"
	fi
	printf '%s\n' "$report" | grep -A 1 '^WARN' >&2 || true
	;;
esac
