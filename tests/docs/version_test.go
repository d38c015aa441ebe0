package docs

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// The -ldflags line proposed for install.sh stamps version and commit,
// and --at-least compares against the stamp.
func TestVersionStamp(t *testing.T) {
	bin := filepath.Join(binDir, "flowstate")
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "flowstate " + stampVersion + " (commit " + stampCommit + ")\n"; string(out) != want {
		t.Fatalf("version printed %q, want %q", out, want)
	}
	tests := []struct {
		min  string
		code int
	}{
		{"1.4.2", 0}, {"1.4", 0}, {"1.0.9", 0}, {"v1.3.0", 0}, {"1.4.2-rc1", 0},
		{"1.4.3", 2}, {"1.10", 2}, {"2", 2},
		{"latest", 2},
	}
	for _, tt := range tests {
		code, err := testenv.ExitCode(exec.Command(bin, "version", "--at-least", tt.min).Run())
		if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("version --at-least %s: exit %d, want %d", tt.min, code, tt.code)
		}
	}
}
