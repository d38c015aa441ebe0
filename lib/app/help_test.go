package app

import (
	"bytes"
	"testing"
)

// TestWidthOnlyForHelp: the terminal's width is measured when help is
// printed, not by every call. Before, Main read it ($COLUMNS, then the
// terminal) at every start.
func TestWidthOnlyForHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"version"}, false}, {[]string{"help"}, true}} {
		var out, errb bytes.Buffer
		read := false
		getenv := func(k string) string {
			if k == "COLUMNS" {
				read = true
				return "60"
			}
			return ""
		}
		code := Main(append([]string{"flowstate"}, tt.args...), IO{Stdin: &bytes.Buffer{}, Stdout: &out, Stderr: &errb, Getenv: getenv, Cwd: t.TempDir()})
		if code != 0 || read != tt.want {
			t.Errorf("flowstate %v: exit %d, $COLUMNS read: %v, want %v\n%s", tt.args, code, read, tt.want, errb.String())
		}
	}
}
