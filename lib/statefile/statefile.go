// Package statefile owns the key/value state format and the one shell
// escaper. A state file is data, never a script: one KEY=value line per
// write, newest last, with backslash and newline escaped so every value
// without NUL round-trips. It does no I/O; lib/store reads and writes.
package statefile

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// header starts every state file; base is the size of the file right
// after its last compaction, so an append can decide with one stat and
// one short read whether it is time to compact again.
const headerPrefix = "# flowstate state v1 base="

// ValidKey reports whether key is a shell identifier.
func ValidKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// CheckPair validates a key and value before anything is written. A
// reserved name (Reserved) is refused: state-load would never set it.
func CheckPair(key, value string) error {
	if err := CheckStored(key, value); err != nil {
		return err
	}
	if why, ok := Reserved(key); ok {
		return fail.Invalidf("key %s is reserved: %s, so state-load never sets it; choose another name, e.g. WF_%s", key, why, key)
	}
	return nil
}

// CheckStored validates what a state file can hold: a key that is a
// shell identifier and a value without NUL. A reserved name passes:
// stored, it is data that WriteLoad never hands a shell. The compat
// layer stores what the bash libraries stored (CLAUDE_PROJECT_DIR);
// state-append refuses such names with CheckPair, since they would
// never load.
func CheckStored(key, value string) error {
	if !ValidKey(key) {
		return fail.Invalidf("invalid key %q: keys must match [A-Za-z_][A-Za-z0-9_]*", key)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fail.Invalidf("value of %s contains a NUL byte, which no shell variable can hold; remove it", key)
	}
	return nil
}

// EncodeLine renders one record without the trailing newline.
func EncodeLine(key, value string) []byte {
	buf := make([]byte, 0, len(key)+1+len(value)+8)
	buf = append(buf, key...)
	buf = append(buf, '=')
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// decodeValue unescapes raw; a value without escapes is returned as is,
// sharing raw's memory (Parse relies on that to allocate once per file).
func decodeValue(raw string) (string, bool) {
	if strings.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			out = append(out, raw[i])
			continue
		}
		i++
		if i == len(raw) {
			return "", false
		}
		switch raw[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		default:
			return "", false
		}
	}
	return string(out), true
}

// Header renders the first line of a file whose compacted size is base.
func Header(base int) []byte {
	return []byte(headerPrefix + strconv.Itoa(base))
}

// Base reads the compacted size from a file's first line; 0 if absent.
func Base(firstLine []byte) int {
	rest, ok := bytes.CutPrefix(firstLine, []byte(headerPrefix))
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(string(bytes.TrimRight(rest, "\n")))
	return n
}

// ShouldCompact decides from sizes alone: once the file has more than
// doubled since its last compaction (plus slack for small files), rewrite
// it, so its size stays proportional to the number of keys.
func ShouldCompact(size, base int64) bool {
	return size > 2*base+4096
}

// State is the decoded content of a state file: the newest value per key.
// Change it with Set, which keeps the key order Keys relies on.
type State struct {
	Values map[string]string
	// Warnings name lines that were skipped: a torn last line left by a
	// killed writer, or a damaged line. They are never fatal.
	Warnings []string

	// order lists the keys of Values by first appearance; its first
	// sorted entries are strictly ascending. A compacted file is sorted,
	// so Keys has only the keys appended since (and those Set) to sort,
	// instead of sorting all 10,000 keys of a large state on every load.
	order  []string
	sorted int
}

// Set stores value under key.
func (s *State) Set(key, value string) {
	if s.Values == nil {
		s.Values = map[string]string{}
	}
	n := len(s.Values)
	s.Values[key] = value
	if len(s.Values) > n {
		s.add(key)
	}
}

// add records a new key's position.
func (s *State) add(key string) {
	if s.sorted == len(s.order) && (s.sorted == 0 || s.order[s.sorted-1] < key) {
		s.sorted++
	}
	s.order = append(s.order, key)
}

// Parse decodes a state file. Later lines win.
//
// It is linear and allocates little, since state-load runs it in every
// bash block and a workflow may hold 10,000 keys: the file is one string
// and every key and escape-free value is a substring of it (two
// allocations per key before), and the map is sized from the line count
// up front instead of growing by rehashing.
func Parse(data []byte) State { return ParseString(string(data)) }

// ParseString is Parse for a file already held as a string; the State
// shares its memory. lib/store reads the file straight into one, sparing
// a copy of the whole file.
func ParseString(s string) State {
	lines := strings.Count(s, "\n")
	st := State{Values: make(map[string]string, lines), order: make([]string, 0, lines)}
	lineNo := 0
	for len(s) > 0 {
		lineNo++
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			st.Warnings = append(st.Warnings, fmt.Sprintf("line %d: torn last line (a writer was interrupted); skipped", lineNo))
			break
		}
		line := s[:nl]
		s = s[nl+1:]
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq <= 0 || !ValidKey(line[:eq]) {
			st.Warnings = append(st.Warnings, fmt.Sprintf("line %d: not a KEY=value record; skipped", lineNo))
			continue
		}
		v, ok := decodeValue(line[eq+1:])
		if !ok {
			st.Warnings = append(st.Warnings, fmt.Sprintf("line %d: bad escape in value of %s; skipped", lineNo, line[:eq]))
			continue
		}
		n := len(st.Values)
		st.Values[line[:eq]] = v
		if len(st.Values) > n {
			st.add(line[:eq])
		}
	}
	return st
}

// Keys returns the keys sorted, the order every output uses: the sorted
// run of the file merged with the rest, sorted on its own. Values changed
// other than by Set (the key count no longer matches) are sorted whole.
func (s State) Keys() []string {
	if len(s.order) != len(s.Values) {
		return sortedKeys(s.Values)
	}
	head, tail := s.order[:s.sorted], slices.Clone(s.order[s.sorted:])
	slices.Sort(tail)
	keys := make([]string, 0, len(s.order))
	for len(head) > 0 && len(tail) > 0 {
		if head[0] < tail[0] {
			keys, head = append(keys, head[0]), head[1:]
		} else {
			keys, tail = append(keys, tail[0]), tail[1:]
		}
	}
	return append(append(keys, head...), tail...)
}

// sortedKeys sorts once, with the generic pdqsort (no interface calls).
func sortedKeys(values map[string]string) []string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Compact renders the whole state as a fresh file: header, then one
// line per key, sorted.
func Compact(values map[string]string) []byte {
	keys := sortedKeys(values)
	size := 0
	for k, v := range values {
		size += len(k) + len(v) + 2 // '=' and '\n'; escapes may grow it
	}
	var body bytes.Buffer
	body.Grow(size)
	for _, k := range keys {
		body.Write(EncodeLine(k, values[k]))
		body.WriteByte('\n')
	}
	// The header's own length counts toward base; digits of the size
	// change the size, so settle it in two passes.
	base := body.Len() + len(Header(body.Len())) + 1
	base = body.Len() + len(Header(base)) + 1
	out := make([]byte, 0, base)
	out = append(out, Header(base)...)
	out = append(out, '\n')
	return append(out, body.Bytes()...)
}

// ParsePairs reads KEY=VALUE lines as typed by people and scripts
// (state-append --stdin): blank lines and # comments are skipped, a CR
// before the newline is dropped, the value runs to the end of the line.
// Keys are not checked here; CheckPair does that for every writer.
func ParsePairs(data []byte) ([][2]string, error) {
	var pairs [][2]string
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fail.Invalidf("line %d is not KEY=VALUE", n+1)
		}
		pairs = append(pairs, [2]string{k, v})
	}
	return pairs, nil
}
