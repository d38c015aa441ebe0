// Package kv writes the KEY=VALUE lines that flowstate prints for a
// command's bash block to read (docs/command-protocol.md). The writer, not
// each caller, keeps every value on its line, so no value (a description,
// a topic, a path) can ever start another key.
package kv

import (
	"fmt"
	"strings"
	"unicode"
)

// Pair is one KEY=VALUE line.
type Pair struct{ Key, Value string }

// Pairs are KEY=VALUE lines in the order they print.
type Pairs []Pair

// Add appends key with value, formatted as fmt.Sprint does and folded onto
// one line.
func (ps *Pairs) Add(key string, value any) {
	*ps = append(*ps, Pair{key, OneLine(fmt.Sprint(value))})
}

// String is the pairs as printed, a line each.
func (ps Pairs) String() string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + "=" + p.Value + "\n")
	}
	return b.String()
}

// OneLine folds text onto one line: when it holds a line break or another
// control character, each run of white space and control characters
// becomes one space. Text already on one line is kept as it is, so a path
// with two spaces in a row still names its file.
func OneLine(s string) string {
	breaks := func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }
	if strings.IndexFunc(s, breaks) < 0 {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || breaks(r) }), " ")
}
