#!/usr/bin/env bash
# Measures flowstate as whole processes against a no-op Go binary and
# prints the table (see bench/README.md). Extra flags go to the runner:
#   bench/bench.sh            # 200 runs per command
#   bench/bench.sh -n 50      # quicker
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/cmd/fsbench "$@"
