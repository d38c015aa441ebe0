package statefile

import "strings"

// exportLines renders what WriteExports writes for values as a string,
// sorting every key: the reference the tests compare against.
func exportLines(values map[string]string) string {
	var b strings.Builder
	_ = writeExports(&b, sortedKeys(values), values)
	return b.String()
}

// exportLines is WriteExports of a parsed state, as a string.
func (s State) exportLines() string {
	var b strings.Builder
	_ = s.WriteExports(&b)
	return b.String()
}
