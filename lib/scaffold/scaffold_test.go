package scaffold

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/lint"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// What scaffold writes follows the command protocol: every command and
// agent passes lint, a plugin's agents carry its prefix and a project's
// none, and the definition is valid.
func TestNewCommandFollowsTheProtocol(t *testing.T) {
	for _, plugin := range []string{"", "review"} {
		files, err := NewCommand("audit", plugin)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range files {
			paths = append(paths, f.Path)
			switch {
			case strings.HasSuffix(f.Path, ".json"):
				if _, err := machine.Parse(f.Data); err != nil {
					t.Errorf("%s: %v", f.Path, err)
				}
			case strings.HasSuffix(f.Path, ".js"):
				prefix := map[string]string{"": "", "review": "review:"}[plugin]
				if js := string(f.Data); !strings.HasPrefix(js, "export const meta = {\n  name: \"audit-flow\",") || !strings.Contains(js, `const STEP_AGENT = "`+prefix+`flowstate-step";`) {
					t.Errorf("%s: not the saved workflow of /audit, asking %sflowstate-step:\n%s", f.Path, prefix, js)
				}
			default:
				for _, finding := range lint.Check(f.Path, string(f.Data)) {
					t.Errorf("%s", finding)
				}
			}
			if strings.Contains(f.Path, "commands/") && !strings.Contains(string(f.Data), "subagent_type: "+map[string]string{"": "", "review": "review:"}[plugin]+"${AGENT}") {
				t.Errorf("%s: the workers' task block does not name them as the install does", f.Path)
			}
		}
		want := ".claude/flows/audit.json .claude/commands/audit.md .claude/workflows/audit-flow.js .claude/agents/sub-supervisor.md .claude/agents/flowstate-step.md .claude/agents/audit-reviewer.md .claude/agents/audit-writer.md"
		if plugin != "" {
			want = strings.ReplaceAll(want, ".claude/", "")
		}
		if got := strings.Join(paths, " "); got != want {
			t.Errorf("plugin %q: wrote %s, want %s", plugin, got, want)
		}
	}
	for _, bad := range []string{"", "Audit", "a b", "../x", "flowstate:x", "-x", "--help", "a.b", "x\n```bash"} {
		if _, err := NewCommand(bad, ""); err == nil {
			t.Errorf("NewCommand(%q): no error", bad)
		}
	}
}

func TestRenderCommandNeedsItsSteps(t *testing.T) {
	for _, c := range []Command{{Start: "phase-start --command x", Resume: "/x --resume"}, {Name: "x", Resume: "/x --resume"}, {Name: "x", Start: "s"},
		{Name: "x", Start: "s", Resume: "/x --resume", Classifier: "c"}} {
		if _, err := RenderCommand(c); err == nil {
			t.Errorf("RenderCommand(%+v): no error", c)
		}
	}
	md, err := RenderCommand(Command{Name: "x", Start: "phase-start --command x", Sequential: true, Prefix: "p:", Resume: "/p:x --resume"})
	if err != nil || strings.Contains(string(md), "## supervised") || strings.Contains(string(md), "## classify") {
		t.Errorf("a sequential command without a classifier: %v\n%s", err, md)
	}
}
