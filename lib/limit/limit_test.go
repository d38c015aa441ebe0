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

func TestJSON(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, in string
		want     string // "" for no error, else a part of the message
	}{
		{"scalar", `1`, ""},
		{"object", `{"a":[1,{"b":"c"}]}`, ""},
		{"at the bound", deep(MaxDepth), ""},
		{"one past", deep(MaxDepth + 1), "more than 64 levels"},
		{"brackets in strings do not count", `["` + strings.Repeat("[", 100) + `"]`, ""},
		{"an escaped quote does not end a string", `["\"` + strings.Repeat("[", 100) + `"]`, ""},
		{"unclosed string", `"[[[`, ""}, // syntax is the caller's parser's
		{"latin-1 byte", "\"caf\xe9\"", "not valid UTF-8 (first bad byte at offset 4)"},
		{"lone continuation byte", "\x80", "offset 0"},
		{"valid multibyte", `"日本 ✓"`, ""},
	}
	for _, tt := range tests {
		err := JSON([]byte(tt.in), "the value")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "the value")):
			t.Errorf("%s: got %v, want exit 4 naming the value and %q", tt.name, err, tt.want)
		}
	}
}

func TestDepth(t *testing.T) {
	for in, want := range map[string]int{
		``: 0, `"x"`: 0, `[]`: 1, `{"a":{"b":[1]}}`: 3, `[[],[[]]]`: 3, `["]]]["]`: 1,
		strings.Repeat("[", 10000): MaxDepth + 1, // stops counting past the bound
	} {
		if got := Depth([]byte(in)); got != want {
			t.Errorf("Depth(%.20q) = %d, want %d", in, got, want)
		}
	}
}
