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
