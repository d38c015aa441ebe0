package supervisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// fixture reads testdata/<name>.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCode fails unless err carries the exit code want (0: no error).
func wantCode(t *testing.T, err error, want int) {
	t.Helper()
	if got := fail.Code(err); got != want {
		t.Fatalf("exit code %d, want %d (err: %v)", got, want, err)
	}
}
