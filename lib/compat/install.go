package compat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
)

// The shims `flowstate compat --install DIR` writes in place of the three
// libraries, so that a project keeps its `source` lines. Each has the
// source guard its library had (commands and their tests look for it)
// and loads the functions with `flowstate compat`.

// shimMark is the shims' first comment line: a file with it is one of
// ours, rewritten without a backup.
const shimMark = "# Written by `flowstate compat --install`"

// shim is one library's replacement: its path under the libraries'
// directory and its guard, the lines before the functions are loaded.
type shim struct {
	path, guard string
}

// shims are the libraries' own guards. state-persistence.sh's variable
// was not exported (each block sources it again); the state machine's
// was, and it exported its functions to child shells: a child that
// inherits the variable but not the functions (which compat does not
// export) loads them again. checkpoint-utils.sh had none.
var shims = []shim{
	{"core/state-persistence.sh", `# Source guard: Prevent multiple sourcing within same bash process
if [ -n "${STATE_PERSISTENCE_SOURCED:-}" ]; then
  return 0
fi
STATE_PERSISTENCE_SOURCED=1
`},
	{"workflow/workflow-state-machine.sh", `# Source guard: Prevent multiple sourcing
if [ -n "${WORKFLOW_STATE_MACHINE_SOURCED:-}" ] && declare -F sm_transition >/dev/null; then
  return 0
fi
export WORKFLOW_STATE_MACHINE_SOURCED=1
`},
	{"workflow/checkpoint-utils.sh", ""},
}

// shimText is one shim's file. The functions are loaded before the
// guard's variable is set, so a shell where flowstate is missing can
// try again.
func shimText(s shim) []byte {
	return []byte(fmt.Sprintf(`#!/usr/bin/env bash
%s: %s replaced by flowstate. Its functions are
# defined by flowstate compat, each a call of the binary ($FLOWSTATE_BIN, else flowstate on PATH);
# docs/migrating-from-bash.md lists what differs. Commands keep sourcing this file.

%s__fs_compat=$("${FLOWSTATE_BIN:-flowstate}" compat) || return 1
eval "$__fs_compat"
unset __fs_compat
%s`, shimMark, filepath.Base(s.path), guardCheck(s.guard), guardSet(s.guard)))
}

// guardCheck and guardSet split a guard at its last `fi`: the check goes
// before the functions are loaded, the assignment after.
func guardCheck(guard string) string {
	i := bytes.LastIndex([]byte(guard), []byte("fi\n"))
	if i < 0 {
		return guard
	}
	return guard[:i+3]
}

func guardSet(guard string) string { return guard[len(guardCheck(guard)):] }

// Install writes the shims under dir, the libraries' directory
// (.claude/lib), creating core/ and workflow/ as needed, and returns the
// paths it wrote. A library that is no shim is kept beside it as
// NAME.sh.orig; when one is there already, Install refuses before
// writing anything, since that copy would be lost.
func Install(dir string) ([]string, error) {
	for _, s := range shims {
		path := filepath.Join(dir, s.path)
		if !needsBackup(path) {
			continue
		}
		if _, err := os.Lstat(path + ".orig"); !errors.Is(err, fs.ErrNotExist) {
			return nil, fail.Usagef("compat --install: %s is no shim and %s.orig is there already; move one of them away and retry", path, path)
		}
	}
	var wrote []string
	for _, s := range shims {
		path := filepath.Join(dir, s.path)
		if err := fsx.EnsureDir(filepath.Dir(path)); err != nil {
			return wrote, err
		}
		if needsBackup(path) {
			if err := os.Rename(path, path+".orig"); err != nil {
				return wrote, fmt.Errorf("compat --install: keep %s: %w", path, err)
			}
		}
		if err := fsx.WriteFile(path, shimText(s)); err != nil {
			return wrote, err
		}
		wrote = append(wrote, path)
	}
	return wrote, nil
}

// needsBackup reports whether path holds something other than a shim.
func needsBackup(path string) bool {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	data, err := fsx.ReadRegular(path, 1<<20)
	return err != nil || !bytes.Contains(data, []byte(shimMark))
}
