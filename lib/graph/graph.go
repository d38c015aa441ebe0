// Package graph renders a state machine (lib/machine) as a diagram:
// Mermaid, which GitHub draws inside markdown (docs/architecture.md embeds
// the default machine), and Graphviz dot for everything else.
//
// It is pure: a machine in, text out, no I/O. The output is deterministic
// (states in machine.States() order, targets in the order of the table,
// scopes sorted by name) so a doc that embeds it can be checked for drift
// by comparing bytes.
package graph

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// Formats lists the formats Render knows, the default first.
var Formats = []string{"mermaid", "dot"}

// Render draws m in format ("" means the default, mermaid).
func Render(m *machine.Machine, format string) (string, error) {
	switch format {
	case "", "mermaid":
		return Mermaid(m), nil
	case "dot":
		return Dot(m), nil
	}
	return "", fail.Usagef("unknown graph format %q; use one of: %s", format, strings.Join(Formats, ", "))
}

// edge is one transition, labelled when it is a recovery (test -> debug).
type edge struct {
	from, to string
	recovery bool
}

// edges lists every transition in render order.
func edges(m *machine.Machine) []edge {
	var out []edge
	for _, from := range m.States() {
		for _, to := range m.Transitions[from] {
			out = append(out, edge{from, to, m.Recovery[from] == to})
		}
	}
	return out
}

// endings maps each state that ends at least one scope to those scopes,
// and returns the states in render order. A state can end several scopes
// (plan ends research-and-plan and research-and-revise); a state that
// ends none but has no way out (a dead end of a custom machine) is an
// ending with no scope, so the diagram still shows where it stops.
func endings(m *machine.Machine) (states []string, scopes map[string][]string) {
	scopes = map[string][]string{}
	for _, name := range m.ScopeNames() {
		t := m.Scopes[name].Terminal
		scopes[t] = append(scopes[t], name)
	}
	for _, s := range m.States() {
		if _, ok := scopes[s]; ok || len(m.Transitions[s]) == 0 {
			states = append(states, s)
		}
	}
	return states, scopes
}

// recoveryLabel is the edge label of a recovery transition.
const recoveryLabel = "on failure"

// mermaidPlain matches names Mermaid accepts as state ids as they are;
// compiled on first use, not in every flowstate process at start-up.
var mermaidPlain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })

// mermaidKeywords are words of the stateDiagram grammar that cannot be
// state ids.
var mermaidKeywords = map[string]bool{
	"end": true, "state": true, "note": true, "direction": true,
	"class": true, "classdef": true, "click": true, "style": true,
}

// Mermaid renders m as a Mermaid stateDiagram-v2. A state that ends a
// scope gets an edge to [*] labelled with the scopes it ends, and the
// "terminal" class (bold border), so each scope's stopping point is
// visible at a glance. Names Mermaid cannot take as ids (hyphens,
// keywords) are aliased as S0, S1, ... — uppercase, so no valid state
// name can collide with an alias.
func Mermaid(m *machine.Machine) string {
	ids := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "stateDiagram-v2\n")
	for i, s := range m.States() {
		ids[s] = s
		if !mermaidPlain().MatchString(s) || mermaidKeywords[s] {
			ids[s] = fmt.Sprintf("S%d", i)
			fmt.Fprintf(&b, "    state %q as %s\n", s, ids[s])
		}
	}
	fmt.Fprintf(&b, "    [*] --> %s\n", ids[m.Initial])
	for _, e := range edges(m) {
		if e.recovery {
			fmt.Fprintf(&b, "    %s --> %s: %s\n", ids[e.from], ids[e.to], recoveryLabel)
			continue
		}
		fmt.Fprintf(&b, "    %s --> %s\n", ids[e.from], ids[e.to])
	}
	ends, scopes := endings(m)
	var classed []string
	for _, s := range ends {
		if names := scopes[s]; len(names) > 0 {
			fmt.Fprintf(&b, "    %s --> [*]: %s\n", ids[s], strings.Join(names, ", "))
		} else {
			fmt.Fprintf(&b, "    %s --> [*]\n", ids[s])
		}
		classed = append(classed, ids[s])
	}
	if len(classed) > 0 {
		fmt.Fprintf(&b, "    classDef terminal stroke-width:3px,font-weight:bold\n")
		fmt.Fprintf(&b, "    class %s terminal\n", strings.Join(classed, ","))
	}
	return b.String()
}

// Dot renders m as a Graphviz digraph. A state that ends a scope is drawn
// with a double border and the scopes it ends under its name.
func Dot(m *machine.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(m.Name))
	fmt.Fprintf(&b, "    rankdir=LR;\n")
	fmt.Fprintf(&b, "    node [shape=box, style=rounded];\n")
	fmt.Fprintf(&b, "    \"[*]\" [shape=point];\n")
	ends, scopes := endings(m)
	isEnd := map[string]bool{}
	for _, s := range ends {
		isEnd[s] = true
	}
	for _, s := range m.States() {
		switch {
		case len(scopes[s]) > 0:
			label := s + "\n(ends " + strings.Join(scopes[s], ", ") + ")"
			fmt.Fprintf(&b, "    %s [peripheries=2, label=%s];\n", dotQuote(s), dotQuote(label))
		case isEnd[s]:
			fmt.Fprintf(&b, "    %s [peripheries=2];\n", dotQuote(s))
		default:
			fmt.Fprintf(&b, "    %s;\n", dotQuote(s))
		}
	}
	fmt.Fprintf(&b, "    \"[*]\" -> %s;\n", dotQuote(m.Initial))
	for _, e := range edges(m) {
		if e.recovery {
			fmt.Fprintf(&b, "    %s -> %s [label=%s, style=dashed];\n", dotQuote(e.from), dotQuote(e.to), dotQuote(recoveryLabel))
			continue
		}
		fmt.Fprintf(&b, "    %s -> %s;\n", dotQuote(e.from), dotQuote(e.to))
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote writes s as a dot string: quotes and backslashes escaped,
// newlines as \n (a centred line break in a label).
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
