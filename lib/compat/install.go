package compat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fsx"
)

// The shims `flowstate compat --install DIR` writes in place of the three
// libraries, so that a project keeps its `source` lines. Each has the
// source guard its library had (commands and their tests look for it)
// and loads the functions with `flowstate compat`.

// shimMark starts the shims' comment: what wrote them.
const shimMark = "# Written by `flowstate compat --install`"

// shim is one library's replacement: its path under the libraries'
// directory, its guard (the lines before the functions are loaded) and
// what it sets after them.
type shim struct {
	path, guard, after string
}

// shims are the libraries' own guards. state-persistence.sh's variable
// was not exported (each block sources it again); the state machine's
// was, and it exported its functions to child shells: a child that
// inherits the variable but not the functions (which compat does not
// export) loads them again. checkpoint-utils.sh had none.
// state-persistence.sh's shim also holds the project's JSON keys,
// which the original's allowlist was edited in the library for.
func shims() []shim {
	return []shim{
		{"core/state-persistence.sh", `# Source guard: Prevent multiple sourcing within same bash process
if [ -n "${STATE_PERSISTENCE_SOURCED:-}" ]; then
  return 0
fi
`, `STATE_PERSISTENCE_SOURCED=1

# append_workflow_state stores a JSON array or object only under a key ending in _JSON, one of
# the library's allowlist (` + quotedWords(jsonKeys) + `),
# or one of the project's own keys, listed here (space-separated):
` + jsonKeysVar + `=${` + jsonKeysVar + `:-}
`},
		{"workflow/workflow-state-machine.sh", `# Source guard: Prevent multiple sourcing
if [ -n "${WORKFLOW_STATE_MACHINE_SOURCED:-}" ] && declare -F sm_transition >/dev/null; then
  return 0
fi
`, "export WORKFLOW_STATE_MACHINE_SOURCED=1\n"},
		{"workflow/checkpoint-utils.sh", "", ""},
	}
}

// quotedWords is words, each in double quotes, separated by spaces.
func quotedWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + w + `"`
	}
	return strings.Join(q, " ")
}

// shimText is one shim's file. The functions are loaded before the
// guard's variable is set, so a shell where flowstate is missing can
// try again.
func shimText(s shim) []byte {
	return []byte(fmt.Sprintf(`#!/usr/bin/env bash
%s: %s is replaced by flowstate. Its functions
# are defined by flowstate compat, each a call of the binary ($FLOWSTATE_BIN, else flowstate on
# PATH); docs/migrating-from-bash.md lists what differs. Commands keep sourcing this file.

%s__fs_compat=$("${FLOWSTATE_BIN:-flowstate}" compat) || return 1
eval "$__fs_compat"
unset __fs_compat
%s`, shimMark, filepath.Base(s.path), s.guard, s.after))
}

// Install writes the shims under dir, the libraries' directory
// (.claude/lib), creating core/ and workflow/ as needed, and returns the
// paths it wrote. A file there that differs from its shim (the library,
// or a shim the project edited) is kept beside it as NAME.sh.orig
// (NAME.sh.orig.2, ... when that is taken): nothing is lost.
func Install(dir string) ([]string, error) {
	var wrote []string
	for _, s := range shims() {
		path, text := filepath.Join(dir, s.path), shimText(s)
		if err := fsx.EnsureDir(filepath.Dir(path)); err != nil {
			return wrote, err
		}
		if err := keep(path, text); err != nil {
			return wrote, err
		}
		if err := fsx.WriteFile(path, text); err != nil {
			return wrote, err
		}
		wrote = append(wrote, path)
	}
	return wrote, nil
}

// keep renames the file at path to the first free NAME.orig, NAME.orig.2,
// ... unless it is missing or holds text already.
func keep(path string, text []byte) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if old, err := fsx.ReadRegular(path, 1<<20); err == nil && bytes.Equal(old, text) {
		return nil
	}
	backup := path + ".orig"
	for n := 2; ; n++ {
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			break
		}
		backup = fmt.Sprintf("%s.orig.%d", path, n)
	}
	if err := os.Rename(path, backup); err != nil {
		return fmt.Errorf("compat --install: keep %s: %w", path, err)
	}
	return nil
}
