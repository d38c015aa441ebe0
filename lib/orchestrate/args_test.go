package orchestrate

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		raw          string
		requireScope bool
		scope, desc  string
		msg          string // error contains
	}{
		{"fix the bug", false, "", "fix the bug", ""},
		{"--scope research-only fix it", true, "research-only", "fix it", ""},
		{"fix the bug", true, "", "", "give the scope first: /orchestrate --scope SCOPE DESCRIPTION, SCOPE one of debug-only, "},
		{"", false, "", "", "no workflow description given"},
		{"", true, "", "", "no workflow description given"},
	}
	for _, tt := range tests {
		var scopes []string
		if tt.requireScope {
			scopes = machine.Default().ScopeNames()
		}
		a, err := ParseArgs("orchestrate", tt.raw, scopes, "")
		scope, desc := a.Scope, a.Description
		if tt.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tt.msg) || fail.Code(err) != fail.Usage {
				t.Errorf("ParseArgs(%q, %t): err %v, want usage error with %q", tt.raw, tt.requireScope, err, tt.msg)
			}
			continue
		}
		if err != nil || scope != tt.scope || desc != tt.desc {
			t.Errorf("ParseArgs(%q, %t) = %q, %q, %v", tt.raw, tt.requireScope, scope, desc, err)
		}
	}
}

func TestParseArgsOptions(t *testing.T) {
	tests := []struct {
		raw, scope, desc string
		approve          bool
		err              string
	}{
		{"  research auth\n", "", "research auth", false, ""},
		{"--scope research-only study X", "research-only", "study X", false, ""},
		{"--scope=debug-only fix it", "debug-only", "fix it", false, ""},
		{`--scope research-only "quoted text"`, "research-only", "quoted text", false, ""},
		{"--approve-plan add login", "", "add login", true, ""},
		{"--scope full-implementation --approve-plan add login", "full-implementation", "add login", true, ""},
		{"--approve-plan --scope=full-implementation add login", "full-implementation", "add login", true, ""},
		{"--approve-planning add login", "", "--approve-planning add login", false, ""},
		{"add login --approve-plan", "", "add login --approve-plan", false, ""},
		{"'a' and 'b'", "", "'a' and 'b'", false, ""},
		{`"`, "", `"`, false, ""},
		{"--scope research-only", "", "", false, "no workflow description"},
		{"--approve-plan", "", "", false, "no workflow description"},
		{"--scope", "", "", false, "--scope needs a value"},
		{"\n", "", "", false, "no workflow description"},
	}
	for _, tt := range tests {
		a, err := ParseArgs("coordinate", tt.raw, nil, "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || fail.Code(err) != fail.Usage {
				t.Errorf("ParseArgs(%q): err %v, want usage error %q", tt.raw, err, tt.err)
			}
			continue
		}
		if want := (Arguments{Scope: tt.scope, Description: tt.desc, ApprovePlan: tt.approve}); err != nil || a != want {
			t.Errorf("ParseArgs(%q) = %+v, %v; want %+v", tt.raw, a, err, want)
		}
	}
}

// A command of one's own with no arguments is told how to run it: its
// own argument-hint, not the built-in commands' example.
func TestParseArgsHint(t *testing.T) {
	_, err := ParseArgs("triage", " ", nil, "/triage FILE...")
	if fail.Code(err) != fail.Usage || err.Error() != "no arguments given; run /triage FILE..." {
		t.Errorf("no arguments with a hint: %v", err)
	}
}

// A NUL is no part of a value flowstate stores: the description is
// refused before anything is.
func TestParseArgsNUL(t *testing.T) {
	if _, err := ParseArgs("audit", "the login\x00handler", nil, ""); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("a NUL in the arguments: %v, want exit 4", err)
	}
}
