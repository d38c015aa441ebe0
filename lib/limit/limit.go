// Package limit owns the bounds on what flowstate takes in, so every
// input up to them costs bounded time and memory and every document
// flowstate writes is one any JSON parser reads: how much is read whole
// from stdin or a file (a checkpoint is kilobytes, so 16 MiB means a
// mistake, refused before it fills memory), how large a state file may
// grow, and what every JSON document must be (valid UTF-8, at most
// MaxDepth levels deep). It knows nothing about what the bytes mean.
package limit

import (
	"io"
	"unicode/utf8"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Max is the most bytes read whole, the longest line scanned, and the
// largest checkpoint or custom machine flowstate writes or reads.
const Max = 16 << 20

// MaxState is the largest state file: four times Max, so a few large
// values fit, and reading it whole in every bash block stays bounded. A
// state-append that would grow the state past it is refused.
const MaxState = 4 * Max

// MaxDepth is how deeply arrays and objects may nest in any JSON
// flowstate takes in or writes. Python's json gives up near 1,000 levels,
// serde_json at 128, Ruby's JSON at 100; a checkpoint needs about 6. The
// bound also keeps the cost of formatting and validating a document
// linear in its size: deep nesting made a 40 KB document cost seconds.
const MaxDepth = 64

// MaxWorkers is the most workers one state of a workflow fans out to:
// one per word of a long request ("each": "arguments") would launch
// hundreds of agents.
const MaxWorkers = 50

// ReadAll reads r to the end; more than Max bytes is fail.Invalid, naming
// what was read.
func ReadAll(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, Max+1))
	if err != nil {
		return nil, err
	}
	if len(b) > Max {
		return nil, TooLarge(what, Max)
	}
	return b, nil
}

// TooLarge is the error for input over a size bound.
func TooLarge(what string, bound int) error {
	return fail.Invalidf("%s is larger than %d MiB; flowstate stores workflow state, not bulk data", what, bound>>20)
}

// JSON checks what every JSON document must be before any parser sees
// it: valid UTF-8 (RFC 8259 requires it; Python's json refuses a file
// with one stray byte) nested at most MaxDepth levels. It does not check
// the syntax (callers' parsers do, with their own messages): it is one
// linear pass without allocation, so it runs before any lock is taken
// and before any parser that could be slow on deep input. what names the
// document in the fail.Invalid error.
func JSON(data []byte, what string) error {
	if !utf8.Valid(data) {
		return fail.Invalidf("%s is not valid UTF-8 (first bad byte at offset %d), as JSON must be", what, invalidAt(data))
	}
	if Depth(data) > MaxDepth {
		return fail.Invalidf("%s nests arrays and objects more than %d levels deep, past flowstate's bound", what, MaxDepth)
	}
	return nil
}

// Depth returns how deeply arrays and objects nest in data, read as
// JSON: brackets inside strings do not count. It stops counting once
// past MaxDepth, so any input costs one pass at most.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip the string: up to the next quote not escaped.
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > deepest {
				if deepest = depth; deepest > MaxDepth {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// invalidAt is the offset of the first byte that is not valid UTF-8.
func invalidAt(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
