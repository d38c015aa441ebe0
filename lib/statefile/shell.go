package statefile

import "io"

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
	return string(appendQuoted(make([]byte, 0, len(s)+3), s))
}

// appendQuoted appends Quote(s) for an s that is not plain.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, "$'"...)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20 || c >= 0x7f:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '\'')
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

// WriteExports writes sorted `export KEY=value` lines for eval to w, in
// chunks: state-load of 10,000 keys would otherwise build a 600 KB
// string, and in a process that lives a few milliseconds every fresh heap
// page is a page fault. The key order of a parsed state spares most of
// the sort.
func (s State) WriteExports(w io.Writer) error { return writeExports(w, s.Keys(), s.Values) }

// writeExports renders the lines into one reused buffer, flushed to w
// whenever it fills: one sort, a few writes, no string per quoted value.
func writeExports(w io.Writer, keys []string, values map[string]string) error {
	const chunk = 32 << 10
	buf := make([]byte, 0, chunk+512)
	for _, k := range keys {
		buf = append(buf, "export "...)
		buf = append(buf, k...)
		buf = append(buf, '=')
		switch v := values[k]; {
		case v == "":
			buf = append(buf, "''"...)
		case isPlain(v):
			buf = append(buf, v...)
		default:
			buf = appendQuoted(buf, v)
		}
		buf = append(buf, '\n')
		if len(buf) >= chunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if len(buf) == 0 {
		return nil
	}
	_, err := w.Write(buf)
	return err
}
