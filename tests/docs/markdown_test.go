package docs

import (
	"regexp"
	"strings"
	"testing"
)

// matchOutput compares stdout with an ```output block: lines must be
// equal, except that "..." in an expected line matches any text (ids,
// timestamps), and a line that is only "..." matches any number of
// lines.
func matchOutput(want, got string) bool {
	return matchLines(strings.Split(strings.TrimRight(want, "\n"), "\n"), strings.Split(strings.TrimRight(got, "\n"), "\n"))
}

func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 || !matchLine(want[0], got[0]) {
		return false
	}
	return matchLines(want[1:], got[1:])
}

func matchLine(want, got string) bool {
	parts := strings.Split(want, "...")
	re := "^"
	for i, p := range parts {
		if i > 0 {
			re += ".*"
		}
		re += regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(re + "$").MatchString(got)
}

func TestMatchOutput(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb\n", true},
		{"a\nb", "a\nc", false},
		{"id=...", "id=review-20251107-1", true},
		{"x ... z", "x y z", true},
		{"x ... z", "x y", false},
		{"first\n...\nlast", "first\n1\n2\nlast", true},
		{"first\n...\nlast", "first\nlast", true},
		{"first\n...", "second", false},
	}
	for _, tt := range tests {
		if got := matchOutput(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}
