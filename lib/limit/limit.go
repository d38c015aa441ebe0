// Package limit owns the cap on what flowstate reads whole from stdin or
// a file: a checkpoint is kilobytes, so 16 MiB means a mistake, refused
// before it fills memory. It knows nothing about what it reads.
package limit

import (
	"io"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Max is the most bytes read whole, and the longest line scanned.
const Max = 16 << 20

// ReadAll reads r to the end; more than Max bytes is fail.Invalid, naming
// what was read.
func ReadAll(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, Max+1))
	if err != nil {
		return nil, err
	}
	if len(b) > Max {
		return nil, fail.Invalidf("%s is larger than %d MiB; flowstate stores workflow state, not bulk data", what, Max>>20)
	}
	return b, nil
}
