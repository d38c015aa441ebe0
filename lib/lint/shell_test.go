package lint

import (
	"fmt"
	"slices"
	"testing"
)

// TestReadScriptUnset: what each kind of shell node assigns or reads, as
// the variables a block reads without setting.
func TestReadScriptUnset(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string // name@line, the first read of each
	}{
		{"x=1; echo $x $y $y", []string{"y@1"}},
		{"for i in a; do echo $i; done", nil},
		{"echo ${a:-d} ${b:=x} $b ${c[k]}", []string{"c@1"}},
		{"echo $((n + 1))\n(( m += n ))\necho $m", []string{"n@1"}},
		{"for ((i = 0; i < lim; i++)); do :; done", []string{"lim@1"}},
		{"let a=b+1 c++; echo $a $c", []string{"b@1"}},
		{"(( k-- )); (( j == 1 )); echo $k", []string{"j@1"}},
		{"eval \"$(flowstate state-load)\"\necho $FROM_STATE $lower", []string{"lower@2"}},
		{"read -r line; echo $line $HOME $1 $CLAUDE_PROJECT_DIR", nil},
	} {
		s, pe := readScript(tc.body)
		if pe != nil {
			t.Fatalf("%q: %v", tc.body, pe.msg)
		}
		var got []string
		for _, u := range s.unset {
			got = append(got, fmt.Sprintf("%s@%d", u.name, u.line))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: unset %q, want %q", tc.body, got, tc.want)
		}
	}
}
