#!/usr/bin/env bash
# Runs every test flowstate has: unit and process-per-block suites,
# robustness (crash, concurrency, hostile input), a short fuzz pass, the
# plugin checks and the end-to-end scenarios in the real Claude Code CLI
# against a local stand-in model. Installs what it needs (the Claude Code
# CLI from npm) on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")"

CLAUDE_CODE_VERSION=2.1.328
STATICCHECK_VERSION=v0.8.2
FUZZ_SECONDS=${FUZZ_SECONDS:-5}

step() { printf '\n== %s\n' "$*"; }

step "toolchain"
command -v go >/dev/null || { echo "test.sh: Go 1.25+ is required (https://go.dev/dl/)" >&2; exit 1; }
go version

step "Claude Code CLI $CLAUDE_CODE_VERSION"
npm_prefix="$PWD/tests/e2e/.cache/npm"
if ! "$npm_prefix/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION"; then
  command -v npm >/dev/null || { echo "test.sh: npm is required to install the Claude Code CLI" >&2; exit 1; }
  npm install --silent --no-audit --no-fund --prefix "$npm_prefix" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
fi
export PATH="$npm_prefix/node_modules/.bin:$PATH"
claude --version

step "zsh, tmux, chromium (completion in zsh; the terminal in an 80-column tmux pane; the report in a browser)"
# Debian's packages; a test whose tool is missing skips, except tmux and
# chromium once installed here (FLOWSTATE_REQUIRE_*: then a missing one fails).
missing=
for tool in zsh tmux chromium; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
# One package at a time: one that fails to install leaves the others be.
# As root with apt-get, tmux and chromium must end up installed: their
# tests would otherwise skip unseen.
if [ -n "$missing" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq || echo "test.sh: apt-get update failed; installing anyway"
  for tool in $missing; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null ||
      echo "test.sh: could not install $tool"
  done
  for tool in $missing; do
    case $tool in tmux | chromium)
      command -v "$tool" >/dev/null || { echo "test.sh: apt-get install $tool failed (as root): its tests cannot run" >&2; exit 1; } ;;
    esac
  done
fi
command -v zsh || true
if command -v tmux >/dev/null; then export FLOWSTATE_REQUIRE_TMUX=1; tmux -V; fi
if command -v chromium >/dev/null; then export FLOWSTATE_REQUIRE_BROWSER=1; chromium --version 2>/dev/null || true; fi
export REPORT_SCREENSHOTS="$PWD/.cache/report-screenshots"

step "POSIX shells and make (state-load's output and the compat state file are read by each; make on a trusted Makefile must not run stored state)"
want=
for s in dash zsh ksh mksh busybox posh make; do command -v "$s" >/dev/null || want="$want $s"; done
# Big5 and Shift_JIS, built by the tests: glibc's locale sources.
[ -e /usr/share/i18n/charmaps/BIG5.gz ] || want="$want locales"
if [ -n "$want" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $want >/dev/null) ||
    echo "test.sh: could not install$want; tests with a missing shell skip"
fi
if command -v dash >/dev/null && command -v ksh >/dev/null && command -v mksh >/dev/null &&
  command -v busybox >/dev/null && command -v posh >/dev/null && command -v zsh >/dev/null; then
  export FLOWSTATE_REQUIRE_SHELLS=1
fi

step "strace (injects I/O errors for tests/robust; those tests skip without it, and fail once it is installed)"
if ! command -v strace >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq strace >/dev/null) || echo "test.sh: could not install strace; the I/O error tests will skip"
fi
if command -v strace; then export FLOWSTATE_REQUIRE_STRACE=1; fi
# As root the full-disk (tmpfs), HOME-unset (private /etc/passwd) and
# read-only-mount tests can run: then one that cannot fails, not skips.
if [ "$(id -u)" = 0 ]; then export FLOWSTATE_REQUIRE_ROOT_FAULTS=1; fi

step "vet, gofmt, go mod tidy, staticcheck $STATICCHECK_VERSION"
go vet ./...
go vet -tags e2e ./tests/e2e/...
unformatted=$(gofmt -l cmd lib tests bench docs)
[ -z "$unformatted" ] || { echo "test.sh: not gofmt'ed (run gofmt -w):" $unformatted >&2; exit 1; }
go mod tidy -diff || { echo "test.sh: go.mod or go.sum is not tidy; run go mod tidy" >&2; exit 1; }
tools="$PWD/.cache/tools"
if ! "$tools/staticcheck" -version 2>/dev/null | grep -qF "(${STATICCHECK_VERSION#v})"; then
  GOBIN="$tools" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$tools/staticcheck" ./...
"$tools/staticcheck" -tags e2e ./tests/e2e/...

step "unit, process-per-block, plugin and robustness suites"
go test -count=1 ./...
echo "report screenshots (tests/report, headless Chromium): $REPORT_SCREENSHOTS"
ls "$REPORT_SCREENSHOTS" 2>/dev/null || true

step "end to end in Claude Code"
go test -count=1 -timeout 45m -tags e2e -v ./tests/e2e/... 2>&1 | grep -Ev '^=== (RUN|PAUSE|CONT)'

step "bench, briefly (ratios to watch, not pass or fail: see bench/README.md)"
bench/bench.sh -n 5
# The load benchmark's figures are not judged either, but its consistency
# check is: it exits 1 when an acknowledged write is lost or duplicated,
# a failed one stored, or a killed one torn.
go run ./bench/cmd/fsload -duration 3s

step "fuzz (${FUZZ_SECONDS}s per target)"
if [ -x bench/fuzz.sh ]; then bench/fuzz.sh "$FUZZ_SECONDS"; fi

# Cross-compilation for every release target (linux and darwin, amd64
# and arm64) happens above: tests/npm builds and installs the npm packages
# with scripts/npm-pack, which compiles each with scripts/build.
