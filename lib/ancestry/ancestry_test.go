package ancestry

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	toolShell := Proc{Env: []string{"CLAUDECODE=1", SessionVar + "=s1"}, Name: "bash"}
	claude := Proc{Name: "claude"}
	outer := Proc{Env: []string{"CLAUDECODE=1", SessionVar + "=outer"}, Name: "bash"}
	for _, c := range []struct {
		name  string
		own   string
		chain []Proc
		want  Verdict
	}{
		{"a terminal", "", []Proc{{Name: "bash"}, {Name: "sshd"}}, Verdict{}},
		{"a step with its session", "s1", []Proc{toolShell, claude}, Verdict{true, "s1"}},
		{"a step that cleared its session", "", []Proc{{Name: "bash"}, toolShell, claude}, Verdict{true, "s1"}},
		{"a step that replaced the tool's shell with env -i", "", []Proc{claude, {Name: "zsh"}}, Verdict{Inside: true}},
		{"CLAUDECODE alone", "", []Proc{{Env: []string{"CLAUDECODE=1"}, Name: "sh"}}, Verdict{Inside: true}},
		{"Claude Code run inside another session: its own counts", "", []Proc{claude, outer}, Verdict{Inside: true}},
		{"the nearest session wins", "", []Proc{toolShell, claude, outer}, Verdict{true, "s1"}},
		{"claude.exe, as npm installs it", "", []Proc{{Name: "claude.exe"}}, Verdict{Inside: true}},
	} {
		if got := Judge(c.own, c.chain); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestAncestors reads real processes: a shell started with a marker in
// its environment runs this test again, which finds the marker and the
// shell's name among its ancestors, whatever its own environment.
func TestAncestors(t *testing.T) {
	if os.Getenv("ANCESTRY_CHILD") != "" {
		for _, p := range Ancestors(os.Getpid()) {
			if strings.Contains(strings.Join(p.Env, "\n"), "ANCESTRY_MARK=1") {
				os.Stdout.WriteString("found in " + p.Name + "\n")
				return
			}
		}
		os.Stdout.WriteString("not found\n")
		return
	}
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sh", "-c", `env -i ANCESTRY_CHILD=1 "$0" -test.run='^TestAncestors$'; exit $?`, os.Args[0])
	cmd.Env = append(os.Environ(), "ANCESTRY_MARK=1")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "found in sh\n") {
		t.Errorf("%s %v", out, err)
	}
}
