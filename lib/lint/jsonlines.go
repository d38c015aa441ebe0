package lint

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Lines of a JSON definition, so that a problem is said at the key it
// is about.

// frame is one object or array keyLines is in.
type frame struct {
	array bool
	index int    // the element an array is at
	key   string // the key an object is at
	value bool   // an object's next token is the value of key
}

// keyLines maps each key and array element of the JSON document data to
// the line it is on: "work.review.agent", "agents.0". A document that is
// not JSON maps what comes before its error.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return lines
		}
		line := 1 + bytes.Count(data[:dec.InputOffset()], []byte("\n"))
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && !top.array && !top.value {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = pop(stack)
				continue
			}
			top.key, top.value = tok.(string), true
			lines[pathOf(stack)] = line
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == ']') {
			stack = pop(stack)
			continue
		}
		if top != nil && top.array {
			// An element starts where its first token does.
			lines[pathOf(stack)] = 1 + bytes.Count(data[:start], []byte("\n")) + leadingLines(data[start:dec.InputOffset()])
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{array: d == '['})
			continue
		}
		stack = next(stack)
	}
}

// leadingLines counts the line breaks before the token in b (the
// whitespace and separator the decoder read with it).
func leadingLines(b []byte) int {
	return bytes.Count(b[:len(b)-len(bytes.TrimLeft(b, " \t\r\n,:"))], []byte("\n"))
}

// pop leaves an object or array, which was a value of the one around it.
func pop(stack []*frame) []*frame { return next(stack[:len(stack)-1]) }

// next moves the innermost frame past the value just read.
func next(stack []*frame) []*frame {
	if len(stack) == 0 {
		return stack
	}
	if top := stack[len(stack)-1]; top.array {
		top.index++
	} else {
		top.value = false
	}
	return stack
}

// pathOf is the dotted path of the value the frames are at.
func pathOf(stack []*frame) string {
	parts := make([]string, len(stack))
	for i, f := range stack {
		if f.array {
			parts[i] = strconv.Itoa(f.index)
		} else {
			parts[i] = f.key
		}
	}
	return strings.Join(parts, ".")
}

// lineOfError is the line of the longest key path an error message
// names ("work.review.fields[1]: ..."), 1 when it names none.
func lineOfError(keys map[string]int, msg string) int {
	msg = patterns().indexed.ReplaceAllString(msg, ".$1")
	best, line := "", 1
	for path, l := range keys {
		if len(path) > len(best) && names(msg, path) {
			best, line = path, l
		}
	}
	return line
}

// names reports whether msg holds path as a whole path: not inside a
// longer name or path.
func names(msg, path string) bool {
	word := func(c byte) bool {
		return c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], path)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(path)
		if (start == 0 || !word(msg[start-1])) && (end == len(msg) || !word(msg[end]) || msg[end] == '.' && (end+1 == len(msg) || msg[end+1] == ' ')) {
			return true
		}
		i = start + 1
	}
}
