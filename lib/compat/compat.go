// Package compat owns the bash functions that stand in for the original
// state libraries (state-persistence.sh, workflow-state-machine.sh,
// checkpoint-utils.sh), so a command migrates by replacing its `source`
// lines with `eval "$(flowstate compat)"`. Each function is a thin call
// to the binary; this package holds only their text and does no I/O.
package compat

import (
	_ "embed"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

//go:embed compat.bash
var script string

// Script returns the bash functions, ready for eval.
func Script() string {
	return strings.Replace(script, "@DERIVED_KEYS@", strings.Join(derivedKeys(), " | "), 1)
}

// derivedKeys are the variables flowstate computes from the checkpoint,
// taken from sm.Derived itself so the list cannot drift from it.
func derivedKeys() []string {
	var keys []string
	for k := range sm.Derived(&store.Workflow{P: &store.Project{}}, []byte("{}")) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
