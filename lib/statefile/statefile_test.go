package statefile

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

var hostile = []string{
	"", "plain", "with space", `dq"uote`, "sq'uote", `back\slash`, "$(touch pwned)", "`touch pwned`",
	"$HOME", "${HOME}", "cost $5", "line1\nline2", "cr\rlf\r\n", "tab\there", "-leading-dash", "--",
	"héllo wörld ✓", "*?[x]", "~", "~/x", "a=b", "!!", "\x01\x7f\xff", "trailing\\", "\\n literal",
	"'; touch pwned; '", "$'\\x41'", "\n", "{a,b}", "100%",
}

func TestQuoteRoundTripsThroughBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for _, v := range hostile {
		// set -euo pipefail: a value like "cost $5" must not abort the load.
		script := "set -euo pipefail; shopt -s extglob nullglob; V=" + Quote(v) + "; printf '%s' \"$V\""
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("value %q: bash failed: %v", v, err)
		}
		if string(out) != v {
			t.Errorf("value %q: bash gave %q (quoted %s)", v, out, Quote(v))
		}
	}
}

// TestQuoteForms: the form each value takes. Bare when no byte means
// anything to a shell, double quotes where none of $ ` \ " ! is in it,
// else single quotes with no two adjacent (zsh's RC_QUOTES).
func TestQuoteForms(t *testing.T) {
	for v, want := range map[string]string{
		"plain-1.2/x@y,z+%": "plain-1.2/x@y,z+%",
		"":                  `""`,
		"with space":        `"with space"`,
		"two\nlines":        "\"two\nlines\"",
		"\xff\x01":          "\"\xff\x01\"",
		"~":                 `"~"`,
		"=ls":               `"=ls"`,
		"it's":              `"it's"`,
		"cost $5":           `'cost $5'`,
		"!!":                `'!!'`,
		`back\slash`:        `'back\slash'`,
		`say "hi"`:          `'say "hi"'`,
		"x'; touch PWNED #": `"x'; touch PWNED #"`,
		"$x'y":              `'$x'\''y'`,
		"'$":                `\''$'`,
		"$''":               `'$'\'\'`,
	} {
		if got := Quote(v); got != want {
			t.Errorf("Quote(%q) = %s, want %s", v, got, want)
		}
	}
	if got := QuoteAlways("true"); got != `"true"` {
		t.Errorf(`QuoteAlways("true") = %s, want "true"`, got)
	}
}

func TestCheckPair(t *testing.T) {
	tests := []struct {
		key, value string
		code       int
	}{
		{"A", "", 0}, {"_x1", "v", 0}, {"lower_ok", "v", 0},
		{"1A", "v", fail.Invalid}, {"", "v", fail.Invalid}, {"A-B", "v", fail.Invalid},
		{"BAD;touch X;Y", "v", fail.Invalid}, {"A B", "v", fail.Invalid}, {"É", "v", fail.Invalid},
		{"A", "nul\x00byte", fail.Invalid},
	}
	for _, tt := range tests {
		if got := fail.Code(CheckPair(tt.key, tt.value)); got != tt.code {
			t.Errorf("CheckPair(%q, %q) = %d, want %d", tt.key, tt.value, got, tt.code)
		}
	}
}

func TestEncodeParseRoundTrip(t *testing.T) {
	var file bytes.Buffer
	want := map[string]string{}
	for i, v := range hostile {
		k := "K" + strings.Repeat("X", i)
		file.Write(EncodeLine(k, v))
		file.WriteByte('\n')
		want[k] = v
	}
	st := Parse(file.Bytes())
	if len(st.Warnings) != 0 {
		t.Fatalf("warnings: %v", st.Warnings)
	}
	for k, v := range want {
		if st.Values[k] != v {
			t.Errorf("%s: got %q want %q", k, st.Values[k], v)
		}
	}
}

func TestParseLastWinsAndSkipsDamage(t *testing.T) {
	data := "# flowstate state v1 base=10\nA=1\nB=x\nA=2\nnot a record\nC=bad\\q\nD=torn"
	st := Parse([]byte(data))
	if st.Values["A"] != "2" || st.Values["B"] != "x" {
		t.Errorf("values: %v", st.Values)
	}
	if _, ok := st.Values["D"]; ok {
		t.Error("torn last line was taken")
	}
	if _, ok := st.Values["C"]; ok {
		t.Error("bad escape was taken")
	}
	if len(st.Warnings) != 3 {
		t.Errorf("want 3 warnings, got %v", st.Warnings)
	}
}

func TestCompact(t *testing.T) {
	values := map[string]string{"B": "2", "A": "multi\nline"}
	out := Compact(values)
	first, _, _ := bytes.Cut(out, []byte("\n"))
	if Base(first) != len(out) {
		t.Errorf("base %d, file size %d", Base(first), len(out))
	}
	st := Parse(out)
	if st.Values["A"] != "multi\nline" || st.Values["B"] != "2" || len(st.Warnings) != 0 {
		t.Errorf("got %v %v", st.Values, st.Warnings)
	}
	if !strings.HasPrefix(string(out[len(first)+1:]), "A=") {
		t.Errorf("keys not sorted: %q", out)
	}
}

func TestShouldCompact(t *testing.T) {
	if ShouldCompact(5000, 1000) {
		t.Error("5000 <= 2*1000+4096")
	}
	if !ShouldCompact(6097, 1000) {
		t.Error("6097 > 2*1000+4096")
	}
}

func TestExportLinesSorted(t *testing.T) {
	got := exportLines(map[string]string{"B": "x y", "A": ""})
	want := "export A=\"\"\nexport B=\"x y\"\n"
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestParsePairs(t *testing.T) {
	tests := []struct {
		in   string
		want [][2]string
		code int
	}{
		{"A=1\nB=\n", [][2]string{{"A", "1"}, {"B", ""}}, 0},
		{"# comment\n\n  \nA=x=y\r\n", [][2]string{{"A", "x=y"}}, 0},
		{"A=1\nno equals\nB=2", nil, fail.Invalid},
		{"", nil, 0},
		{"=v", [][2]string{{"", "v"}}, 0}, // CheckPair refuses the empty key
	}
	for _, tt := range tests {
		got, err := ParsePairs([]byte(tt.in))
		if fail.Code(err) != tt.code || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("ParsePairs(%q) = %v, %v; want %v code %d", tt.in, got, err, tt.want, tt.code)
		}
	}
}
