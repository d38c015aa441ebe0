package install

import "testing"

// TestGitignore: uninstall takes exactly back what older installs
// appended to .gitignore (the state line, on a line of its own), giving
// the user's bytes; doctor sees which lines ignore the state directory.
func TestGitignore(t *testing.T) {
	for _, c := range []struct {
		name, cur, added string
	}{
		{"no file", "", ".claude/state/\n"},
		{"final newline", "node_modules/\n", ".claude/state/\n"},
		{"no final newline", "node_modules/", "\n.claude/state/\n"},
		{"one byte, no newline", "*", "\n.claude/state/\n"},
		{"CRLF", "node_modules/\r\n", ".claude/state/\n"},
		{"a similar line", "# .claude/state/\n.claude/state/x\n!.claude/state/\n", ".claude/state/\n"},
	} {
		if ignoresStateDir([]byte(c.cur)) {
			t.Errorf("%s: %q taken to ignore the state directory", c.name, c.cur)
		}
		if back := string(gitignoreRemoval([]byte(c.cur+c.added), c.added)); back != c.cur {
			t.Errorf("%s: removal gave %q, want %q", c.name, back, c.cur)
		}
	}
	for _, cur := range []string{"a\n.claude/state/\nb\n", "/.claude/state/\n", ".claude/state", "  .claude/state/ \r\n", ".claude/\n", "/.claude"} {
		if !ignoresStateDir([]byte(cur)) {
			t.Errorf("%q not taken to ignore the state directory", cur)
		}
	}
}

// TestGitignoreRemovalAfterEdits: when the user wrote after install's
// line, the line is taken out where it is and nothing else.
func TestGitignoreRemovalAfterEdits(t *testing.T) {
	for _, c := range []struct{ name, cur, want string }{
		{"lines added after", "a\n.claude/state/\nb\n", "a\nb\n"},
		{"made CRLF", "a\r\n.claude/state/\r\nb\r\n", "a\r\nb\r\n"},
		{"last without newline", "a\n.claude/state/", "a\n"},
		{"removed by the user", "a\nb\n", "a\nb\n"},
		{"other lines kept", "/.claude/state/\n.claude/state/x\n", "/.claude/state/\n.claude/state/x\n"},
	} {
		if got := string(gitignoreRemoval([]byte(c.cur), "\n.claude/state/\n")); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRewrite: in a project, flowstate's namespaced command and agent
// references lose their namespace; everything else is left alone.
func TestRewrite(t *testing.T) {
	for in, want := range map[string]string{
		"run /flowstate:plan next":                 "run /plan next",
		"/flowstate:research at the start":         "/research at the start",
		"(/flowstate:a) and `/flowstate:b`":        "(/a) and `/b`",
		"line\n/flowstate:x":                       "line\n/x",
		"subagent_type: flowstate:researcher":      "subagent_type: researcher",
		`subagent_type="flowstate:planner"`:        `subagent_type="planner"`,
		"subagent_type = 'flowstate:debugger'":     "subagent_type = 'debugger'",
		"https://example.com/flowstate:x":          "https://example.com/flowstate:x",
		"./flowstate:x and a/flowstate:y":          "./flowstate:x and a/flowstate:y",
		"flowstate:researcher without subagent":    "flowstate:researcher without subagent",
		"the flowstate binary, flowstate status":   "the flowstate binary, flowstate status",
		"-/flowstate:x and _/flowstate:y stay put": "-/flowstate:x and _/flowstate:y stay put",
	} {
		if got := string(rewrite([]byte(in))); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}
