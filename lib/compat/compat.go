// Package compat owns the bash functions that stand in for the original
// state libraries (state-persistence.sh, workflow-state-machine.sh,
// checkpoint-utils.sh), so a command migrates by replacing its `source`
// lines with `eval "$(flowstate compat)"`. Each function is a thin call
// to the binary; this package holds only their text and does no I/O.
package compat

import (
	_ "embed"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/sm"
)

//go:embed compat.bash
var script string

// Script returns the bash functions, ready for eval. The variables
// flowstate computes from the checkpoint come from sm.DerivedKeys, so the
// script's list cannot drift from what state-load exports.
func Script() string {
	return strings.Replace(script, "@DERIVED_KEYS@", strings.Join(sm.DerivedKeys(), " | "), 1)
}
