package statefile

import (
	"strings"
)

// Quote renders s as one bash word that evaluates to exactly s and
// expands nothing: plain when every byte is harmless, otherwise ANSI-C
// quoting ($'...'), where nothing is expanded and every control or
// non-ASCII byte is written as an escape, so the output is one line of
// ASCII. NUL cannot be represented and must be rejected before.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 3)
	writeQuoted(&b, s)
	return b.String()
}

// writeQuoted writes Quote(s) for an s that is not plain.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

// isPlain is true when no byte of s means anything to bash in an
// assignment word. '~' and '=' are excluded because bash expands a tilde
// after '=' or ':' in assignments.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		switch c {
		case '_', '@', ',', '-', '.', '/', '+', '%':
			continue
		}
		return false
	}
	return true
}

// ExportLines renders sorted `export KEY=value` lines for eval. The
// buffer is sized up front for the common all-plain case and quoting
// writes into it directly, so 10,000 keys cost one sort and about one
// allocation rather than a doubling buffer and a string per quoted value.
func ExportLines(values map[string]string) string {
	return exportLines(sortedKeys(values), values)
}

// ExportLines is the package function for a parsed state, whose key
// order spares most of the sort.
func (s State) ExportLines() string { return exportLines(s.Keys(), s.Values) }

func exportLines(keys []string, values map[string]string) string {
	size := 0
	for k, v := range values {
		size += len("export =\n") + len(k) + len(v)
	}
	var b strings.Builder
	b.Grow(size + size/16)
	for _, k := range keys {
		b.WriteString("export ")
		b.WriteString(k)
		b.WriteByte('=')
		switch v := values[k]; {
		case v == "":
			b.WriteString("''")
		case isPlain(v):
			b.WriteString(v)
		default:
			writeQuoted(&b, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
