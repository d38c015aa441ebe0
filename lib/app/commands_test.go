package app

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/lint"
)

// TestHelpByCategory: `flowstate help` lists every visible command once,
// under the heading of its category, the categories in the order
// commands lists them, and no hidden command.
func TestHelpByCategory(t *testing.T) {
	out, stderr, code := run(t, t.TempDir(), "help")
	if code != 0 {
		t.Fatalf("help: exit %d: %s", code, stderr)
	}
	_, list, _ := strings.Cut(out, "COMMANDS:\n")
	list, _, _ = strings.Cut(list, "\nGLOBAL OPTIONS:")
	var want strings.Builder
	category := ""
	for _, c := range (&env{}).commands() {
		if c.Category == "" {
			t.Errorf("command %s has no category", c.Name)
		}
		if c.Hidden {
			if strings.Contains(list, " "+c.Name+" ") {
				t.Errorf("hidden command %s is listed", c.Name)
			}
			continue
		}
		if c.Category != category {
			if category != "" {
				want.WriteString("\n")
			}
			category = c.Category
			want.WriteString("   " + category + ":\n")
		}
		want.WriteString("     " + c.Name + "\n")
	}
	// The command lines without their descriptions.
	var got strings.Builder
	for _, line := range strings.SplitAfter(list, "\n") {
		if strings.HasPrefix(line, "     ") {
			line = "     " + strings.Fields(line)[0] + "\n"
		}
		got.WriteString(line)
	}
	if got.String() != want.String() {
		t.Errorf("help lists\n%s\nwant\n%s", got.String(), want.String())
	}
}

// TestLintKnowsCommands: what lint holds each flowstate command prints
// (lint.Printers) is keyed by commands that exist, so a rename here
// cannot leave the checks of command files behind.
func TestLintKnowsCommands(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Commands() {
		names[c.Name] = true
	}
	for name := range lint.Printers() {
		if !names[name] {
			t.Errorf("lint.Printers lists %q, which is no flowstate command", name)
		}
	}
}
