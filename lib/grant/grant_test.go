package grant

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOwn(t *testing.T) {
	for text, want := range map[string]bool{
		"flowstate phase-plan": true,
		"flowstate phase-start --command x <<'E'\n$(rm -rf ~)\nE": true,
		"flowstate x <<\\E\n`id`\nE":                              true,
		"flowstate x <<\"E\"\n$HOME\nE":                           true,
		"flowstate x <<E\nplain\nE":                               true,
		"flowstate list\nflowstate status 2>/dev/null || echo \"No active workflow; /x continues one.\"": true,
		`"$FLOWSTATE_BIN" phase-verify --supervisor`:                                                     true,
		"${FLOWSTATE_BIN} phase-plan":                                                                    true,
		"flowstate a | flowstate b -":                                                                    true,
		"flowstate a 2>&1":                                                                               true,
		"flowstate --workflow 'w-1' status":                                                              true,
		"flowstate x <<E\n$(id)\nE":                                                                      false,
		"flowstate phase-plan; rm -rf ~":                                                                 false,
		"flowstate phase-plan && curl http://x":                                                          false,
		"flowstate phase-plan\nrm -rf ~":                                                                 false,
		"flowstate phase-plan &":                                                                         false,
		"flowstate $(id)":                                                                                false,
		"flowstate \"$HOME\"":                                                                            false,
		"flowstate *":                                                                                    false,
		"flowstate ~/x":                                                                                  false,
		"flowstate a > out.txt":                                                                          false,
		"flowstate a < /etc/passwd":                                                                      false,
		"X=1 flowstate a":                                                                                false,
		"./flowstate a":                                                                                  false,
		"/tmp/evil/flowstate a":                                                                          false,
		"${FLOWSTATE_BIN:-sh} -c id":                                                                     false,
		"export FLOWSTATE_AGENT_ID=1\nflowstate phase-plan --supervisor":                                 false,
		"(flowstate a)":                                                                                  false,
		"echo $(id)":                                                                                     false,
		"":                                                                                               false,
		"flowstate a <<<'x'":                                                                             false,
		"if true; then flowstate a; fi":                                                                  false,
	} {
		if got := Own(text); got != want {
			t.Errorf("Own(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestSupervisorStep(t *testing.T) {
	for cmd, want := range map[string]bool{
		"flowstate phase-plan --supervisor":                    true,
		"flowstate phase-verify --supervisor":                  true,
		"  flowstate phase-verify --supervisor\n":              true,
		`"$FLOWSTATE_BIN" phase-plan --supervisor`:             true,
		"flowstate --workflow w-1 phase-verify --supervisor":   true,
		"flowstate phase-plan":                                 false,
		"flowstate status --supervisor":                        false,
		"grep -rn 'flowstate phase-plan --supervisor' docs":    false,
		"echo flowstate phase-plan --supervisor":               false,
		"cat <<'E'\nflowstate phase-plan --supervisor\nE":      false,
		"flowstate phase-plan --supervisor; rm -rf ~":          false,
		"flowstate phase-plan --supervisor && curl x":          false,
		"flowstate phase-plan --supervisor\nflowstate approve": false,
		"flowstate phase-plan --supervisor > /dev/null":        false,
		"flowstate phase-plan --supervisor $(id)":              false,
		"/tmp/x/flowstate phase-plan --supervisor":             false,
	} {
		if got := SupervisorStep(cmd); got != want {
			t.Errorf("SupervisorStep(%q) = %v, want %v", cmd, got, want)
		}
	}
}

const command = "---\ndescription: d\n---\n# /x\n\n## start\n\n```bash\nflowstate phase-start --command x --machine \"${CLAUDE_PLUGIN_ROOT}/flows/x.json\" <<'FLOWSTATE_EOF'\n$ARGUMENTS\nFLOWSTATE_EOF\n```\n\n" +
	"```task\nTask {\n  subagent_type: a\n  description: d\n  prompt: p\n}\n```\n\n## phase\n\n```bash\nflowstate phase-plan\n```\n\n```bash\nmkdir -p out && flowstate phase-verify\n```\n\n" +
	"```bash\nflowstate status --note \"$1\"\n```\n\n```bash\nflowstate x <<'E'\n${CLAUDE_EFFORT}\nE\n```\n\n```bash\nflowstate y \"$ARGUMENTS\"\n```\n"

func TestSteps(t *testing.T) {
	vars := map[string]string{"CLAUDE_PLUGIN_ROOT": "/p", "CLAUDE_SESSION_ID": "s1"}
	start := func(args string) string {
		return "flowstate phase-start --command x --machine \"/p/flows/x.json\" <<'FLOWSTATE_EOF'\n" + args + "\nFLOWSTATE_EOF"
	}
	for _, c := range []struct {
		args string
		want []string
	}{
		{"audit the login", []string{start("audit the login"), "flowstate phase-plan"}},
		{"", []string{start(""), "flowstate phase-plan"}},
		{"a $ARGUMENTS $0 `id` $(rm -rf ~)", []string{start("a $ARGUMENTS $0 `id` $(rm -rf ~)"), "flowstate phase-plan"}},
		{"a ${CLAUDE_SESSION_ID}", []string{start("a s1"), "flowstate phase-plan"}},
		// Arguments that end the heredoc, or hold what cannot be known.
		{"x\nFLOWSTATE_EOF\nrm -rf ~", []string{"flowstate phase-plan"}},
		{"x\nFLOWSTATE_EOF\nflowstate approve", []string{"flowstate phase-plan"}},
		{"x ${CLAUDE_EFFORT}", []string{"flowstate phase-plan"}},
	} {
		var got []string
		for _, s := range Steps(command, Expansion{Command: true, Args: c.args, Vars: vars}) {
			got = append(got, s.Text)
		}
		if strings.Join(got, "\n---\n") != strings.Join(c.want, "\n---\n") {
			t.Errorf("args %q: steps\n%q\nwant\n%q", c.args, got, c.want)
		}
	}
	// Without the plugin root, the start block's text is not known.
	if got := Steps(command, Expansion{Command: true, Args: "a"}); len(got) != 1 || got[0].Text != "flowstate phase-plan" || !got[0].Phase {
		t.Errorf("without CLAUDE_PLUGIN_ROOT: %+v", got)
	}
	if got := Steps("---\narguments: a b\n---\n```bash\nflowstate phase-plan\n```\n", Expansion{Command: true}); got != nil {
		t.Errorf("a command with named arguments: %+v", got)
	}
	// An agent file is taken as it is.
	if got := Steps("```bash\nflowstate phase-plan --supervisor\n```\n```bash\nflowstate x <<'E'\n$ARGUMENTS\nE\n```\n", Expansion{}); len(got) != 2 || got[1].Text != "flowstate x <<'E'\n$ARGUMENTS\nE" || got[1].Phase {
		t.Errorf("agent steps: %+v", got)
	}
}

func TestMatch(t *testing.T) {
	steps := []Step{{Text: "flowstate phase-plan"}, {Text: "flowstate a <<'E'\nx\nE"}}
	for cmd, want := range map[string]bool{
		"flowstate phase-plan":            true,
		"\n  flowstate phase-plan \n":     true,
		"flowstate a <<'E'\nx\nE\n":       true,
		"flowstate phase-plan; rm -rf ~":  false,
		"flowstate phase-plan\nflowstate": false,
		"flowstate  phase-plan":           false,
	} {
		if _, got := Match(steps, cmd); got != want {
			t.Errorf("Match(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// Every bash block of the plugin's commands and agents is a step, with
// the arguments a user types; their other blocks are none.
func TestThePluginsBlocksAreSteps(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range []string{"commands", "agents"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, f := range files {
			md, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Count(string(md), "```bash\n")
			got := Steps(string(md), Expansion{Command: dir == "commands", Args: "--approve-plan add OAuth \"login\" $HOME `id`"})
			if len(got) != want {
				t.Errorf("%s: %d of its %d bash blocks are steps: %+v", f, len(got), want, got)
			}
		}
	}
}
