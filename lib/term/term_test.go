package term

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"a b c", 0, "a b c"},
		{"short", 80, "short"},
		{"the quick brown fox jumps", 10, "the quick|brown fox|jumps"},
		{"a supercalifragilistic word", 8, "a|supercalifragilistic|word"}, // never cut inside a word
		{"✓ done ▶ current · pending", 9, "✓ done ▶|current ·|pending"},   // runes, not bytes
	} {
		if got := strings.Join(Wrap(c.in, c.width), "|"); got != c.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
	if got := Indent("one two three four", 12, "   "); got != "one two\n   three\n   four" {
		t.Errorf("Indent = %q", got)
	}
}

func TestShorten(t *testing.T) {
	for in, want := range map[string]string{"full-implementation": "full-impl…", "short": "short", "é-accentué-long": "é-accentu…"} {
		if got := Shorten(in, 10); got != want {
			t.Errorf("Shorten(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWidth(t *testing.T) {
	env := map[string]string{"COLUMNS": "72"}
	if got := Width(func(k string) string { return env[k] }, nil); got != 72 {
		t.Errorf("COLUMNS=72: %d", got)
	}
	env["COLUMNS"] = "x"
	if got := Width(func(k string) string { return env[k] }, &strings.Builder{}); got != 0 {
		t.Errorf("no COLUMNS, not a terminal: %d", got)
	}
}

func TestFit(t *testing.T) {
	in := "short\n  a long line with \x1b[31mcolour\x1b[0m that goes past the edge\nok"
	want := "short\n  a long line with\n    \x1b[31mcolour\x1b[0m that goes\n    past the edge\nok"
	if got := Fit(in, 24); got != want {
		t.Errorf("Fit:\n%q\nwant\n%q", got, want)
	}
	if Len("\x1b[1mbold\x1b[0m") != 4 {
		t.Errorf("escapes take columns")
	}
}

// TestJoin: items are never broken where one fits a line; the separator
// ends the line it breaks after.
func TestJoin(t *testing.T) {
	items := []string{"█▓ done", "> running", "x failed", "! stuck", "? never seen stopping", "░ rewound"}
	want := "█▓ done · > running · x failed ·\n! stuck · ? never seen stopping ·\n░ rewound"
	if got := Join(items, " · ", 34); got != want {
		t.Errorf("Join:\n%s\nwant\n%s", got, want)
	}
	if got := Join([]string{"a long item of words", "b"}, " · ", 10); got != "a long\nitem of\nwords · b" {
		t.Errorf("an item wider than the line: %q", got)
	}
	if got := Join(items[:2], " · ", 0); got != "█▓ done · > running" {
		t.Errorf("no width: %q", got)
	}
}
