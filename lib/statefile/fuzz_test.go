package statefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzQuote round-trips arbitrary values through a real eval in bash and
// in sh (dash, which has no $'...'), in a directory where any executed
// command would leave a file behind.
func FuzzQuote(f *testing.F) {
	var shells []string
	for _, sh := range []string{"bash", "dash"} {
		if p, err := exec.LookPath(sh); err == nil {
			shells = append(shells, p)
		}
	}
	if len(shells) == 0 {
		f.Skip("no bash or dash")
	}
	for _, v := range hostile {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.IndexByte(v, 0) >= 0 {
			return // rejected before quoting
		}
		for _, sh := range shells {
			dir := t.TempDir()
			script := "set -eu; eval \"$1\"; printf '%s' \"$V\""
			cmd := exec.Command(sh, "-c", script, "sh", "V="+Quote(v))
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + filepath.Join(dir, "none")} // nothing to run even if injected
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s failed on %q: %v", sh, Quote(v), err)
			}
			if string(out) != v {
				t.Fatalf("%s: round trip %q -> %q via %s", sh, v, out, Quote(v))
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Fatalf("%s: eval of %s created files", sh, Quote(v))
			}
		}
	})
}

// FuzzParse: any bytes parse without panic; every accepted record
// re-encodes to something that parses to the same value.
func FuzzParse(f *testing.F) {
	f.Add([]byte("# flowstate state v1 base=3\nA=1\nA=2\n"))
	f.Add([]byte("A=x\\ny\nB=torn"))
	f.Add([]byte("=\n\\\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := Parse(data)
		for k, v := range st.Values {
			if !ValidKey(k) {
				t.Fatalf("accepted key %q", k)
			}
			again := Parse(append(EncodeLine(k, v), '\n'))
			if again.Values[k] != v {
				t.Fatalf("re-encode of %q changed it", v)
			}
		}
		re := Parse(Compact(st.Values))
		if len(re.Values) != len(st.Values) || len(re.Warnings) != 0 {
			t.Fatalf("compaction lost values: %v -> %v %v", st.Values, re.Values, re.Warnings)
		}
	})
}
