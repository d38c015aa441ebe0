package app

import (
	"io"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// MaxInput caps JSON and text read from stdin or files: a checkpoint is
// kilobytes; 16 MiB means a mistake, refused before it fills memory.
const MaxInput = 16 << 20

func readAllLimited(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInput {
		return nil, fail.Invalidf("%s is larger than %d MiB; flowstate stores workflow state, not bulk data", what, MaxInput>>20)
	}
	return b, nil
}
