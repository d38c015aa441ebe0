package statefile

import "strings"

// exportLines renders what WriteLoad --export writes for values as a
// string, sorting every key (a State without key order sorts them all):
// the reference the tests compare against.
func exportLines(values map[string]string) string { return State{Values: values}.exportLines() }

// exportLines is WriteLoad of a parsed state with Export, as a string.
func (s State) exportLines() string {
	var b strings.Builder
	_, _ = s.WriteLoad(&b, LoadOptions{Export: true})
	return b.String()
}
