#!/usr/bin/env bash
# Runs every Go fuzz target in the module for SECONDS each (default 10),
# one after another, and stops at the first failure. `go test -fuzz`
# accepts one target per package run, hence the loop.
#
#   bench/fuzz.sh          # 10 s per target
#   bench/fuzz.sh 2        # CI smoke run
#
# A crash leaves its input under <package>/testdata/fuzz/<Target>/;
# commit it as a regression seed once fixed.
set -euo pipefail

fuzztime=${1:-10}
case $fuzztime in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

# "dir<TAB>FuzzName" for every fuzz target in a _test.go file.
targets=$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' lib cmd tests 2>/dev/null |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1\t\2#' | sort -u)
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

# corpus lists the committed and new inputs of a target: a real failure
# always adds one; a failure that adds none is the fuzzing engine's own
# timeout on a loaded machine ("context deadline exceeded"), retried.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

n=0
while IFS=$'\t' read -r dir name; do
	n=$((n + 1))
	for try in 1 2 3; do
		echo "fuzz: ./$dir $name (${fuzztime}s)"
		before=$(corpus "$dir" "$name")
		if go test -run='^$' -fuzz="^${name}\$" -fuzztime="${fuzztime}s" "./$dir"; then
			continue 2
		fi
		if [ "$(corpus "$dir" "$name")" != "$before" ] || [ "$try" = 3 ]; then
			break
		fi
		echo "fuzz: $name stopped without a failing input (engine timeout); retrying" >&2
	done
	echo "fuzz: FAIL ./$dir $name (a crashing input, if that was the failure, is in $dir/testdata/fuzz/$name/)" >&2
	exit 1
done <<<"$targets"
echo "fuzz: $n targets passed, ${fuzztime}s each"
