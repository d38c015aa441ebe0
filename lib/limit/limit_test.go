package limit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestReadAll(t *testing.T) {
	tests := []struct {
		size int
		code int
	}{
		{0, fail.OK},
		{Max, fail.OK},
		{Max + 1, fail.Invalid},
	}
	for _, tt := range tests {
		b, err := ReadAll(bytes.NewReader(make([]byte, tt.size)), "input")
		if fail.Code(err) != tt.code {
			t.Errorf("%d bytes: got %v, want exit %d", tt.size, err, tt.code)
		}
		if err == nil && len(b) != tt.size {
			t.Errorf("%d bytes: read %d", tt.size, len(b))
		}
		if err != nil && !strings.Contains(err.Error(), "input is larger than 16 MiB") {
			t.Errorf("%d bytes: message %q does not name the input and the cap", tt.size, err)
		}
	}
}
