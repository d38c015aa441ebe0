package app

import "testing"

func TestClosest(t *testing.T) {
	commands := commandNames((&env{}).commands())
	for _, c := range []struct {
		typed      string
		candidates []string
		want       string
	}{
		{"sm-transiton", commands, "sm-transition"},
		{"statsu", commands, "status"},
		{"init", commands, "sm-init"}, // a part of one name
		{"load", commands, ""},        // a part of two: no guess
		{"xyzzy", commands, ""},       // nothing like any
		{"reasn", []string{"reason", "workflow"}, "reason"},
		{"bogus", []string{"reason", "workflow"}, ""},
	} {
		if got := closest(c.typed, c.candidates); got != c.want {
			t.Errorf("closest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

func TestValueFlag(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`invalid value "x" for flag -complexity: parse error`, `invalid value "x" for flag --complexity: parse error`},
		{`invalid boolean value "abc" for -json: parse error`, `invalid value "abc" for flag --json: want true or false`},
		{`invalid boolean value "y" for -v: parse error`, `invalid value "y" for flag -v: want true or false`},
		{`invalid value "1y" for flag -wait: time: unknown unit "y" in duration "1y"`, `invalid value "1y" for flag --wait: time: unknown unit "y" in duration "1y"`},
		{`flag needs a value: --x`, `flag needs a value: --x`},
	} {
		if got := valueFlag(tc.in); got != tc.want {
			t.Errorf("valueFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
