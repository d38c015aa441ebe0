package lint

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/scaffold"
)

func TestKeyLines(t *testing.T) {
	doc := "{\n  \"name\": \"x\",\n  \"agents\": [\"a\",\n    \"b\"],\n  \"work\": {\n    \"review\": {\"agent\": \"r\",\n      \"supervisor\": {\"agent\": \"s\", \"from\": 4},\n      \"each\": [{\"item\": \"i\"}, \"j\"]}\n  },\n  \"last\": null\n}\n"
	want := map[string]int{"name": 2, "agents": 3, "agents.0": 3, "agents.1": 4, "work": 5, "work.review": 6, "work.review.agent": 6,
		"work.review.supervisor": 7, "work.review.supervisor.agent": 7, "work.review.supervisor.from": 7,
		"work.review.each": 8, "work.review.each.0": 8, "work.review.each.0.item": 8, "work.review.each.1": 8, "last": 10}
	if got := keyLines([]byte(doc)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("keyLines =\n%v\nwant\n%v", got, want)
	}
	if got := keyLines([]byte("{\"a\": 1,\n \"b\": ")); got["a"] != 1 || got["b"] != 2 {
		t.Errorf("keyLines of a broken document = %v, want what comes before the break", got)
	}
}

func TestLineOfError(t *testing.T) {
	keys := map[string]int{"name": 2, "work": 5, "work.review": 6, "work.review.fields": 9, "work.review.fields.1": 11, "work.review.output": 7}
	for msg, want := range map[string]int{
		`machine "x": work.review.output: "r.md" is the same for every worker`: 7,
		`machine "x": work.review.fields[1]: "a" is named twice`:               11,
		`machine "x": work.review: unknown field "field"`:                      6,
		`machine "x": work.reviewer.agent: no such state`:                      1,
		`not JSON at all`: 1,
	} {
		if got := lineOfError(keys, msg); got != want {
			t.Errorf("lineOfError(%q) = %d, want %d", msg, got, want)
		}
	}
}

func TestStarts(t *testing.T) {
	md := "---\ndescription: d\n---\n## start\n\n```bash\nflowstate phase-start --command a --machine \".claude/flows/a.json\" <<'EOF'\n$ARGUMENTS\nEOF\n```\n\n" +
		"```bash\nid=x\nflowstate sm-init --machine \"${CLAUDE_PROJECT_DIR:-.}/.claude/flows/b.json\" --agents r1,r2 --agents=r3 >/dev/null\n" +
		"flowstate sm-init --machine=\"$dir/c.json\" --agents \"$who\"\nflowstate phase-start --command d\n```\n"
	want := []Start{
		{Line: 7, Machine: ".claude/flows/a.json", AgentsKnown: true},
		{Line: 14, Machine: "${CLAUDE_PROJECT_DIR}/.claude/flows/b.json", LowLevel: true, AgentsGiven: true, Agents: []string{"r1", "r2", "r3"}, AgentsKnown: true},
		{Line: 15, Dynamic: true, LowLevel: true, AgentsGiven: true},
		{Line: 16, AgentsKnown: true},
	}
	if got := Starts(md); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Starts =\n%+v\nwant\n%+v", got, want)
	}
}

const lowLevel = "---\ndescription: d\n---\n## start\n\n```bash\nflowstate sm-init --machine .claude/flows/m.json --command x --scope full --description d >/dev/null\necho \"N=2\"\n```\n\n" +
	"```task\nTask {\n  subagent_type: file-reviewer\n  description: Review\n  run_in_background: false\n  prompt: Review.\n}\n```\n\n" +
	"```task\nTask {\n  subagent_type: ${AGENT}\n  description: Other\n  run_in_background: false\n  prompt: Other.\n}\n```\n"

// TestCheckCommand: a definition that is not there, and a low-level
// command whose task block launches an agent its workflow does not have:
// a plugin's command (sm-init cannot read its blocks) without --agents or
// its machine's agents list, or any command whose --agents leave it out.
// A command of .claude/commands has the agents its blocks launch.
func TestCheckCommand(t *testing.T) {
	starts := Starts(lowLevel)
	m, err := machine.Parse([]byte(`{"name": "m", "initial": "a", "transitions": {"a": ["b"], "b": []}, "scopes": {"full": {"terminal": "b", "route": ["a", "b"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	const plugin, own = "kit/commands/c.md", "p/.claude/commands/c.md"
	got := CheckCommand(plugin, lowLevel, starts, []Definition{{Path: "/p/.claude/flows/m.json", Found: true, Machine: m}})
	if len(got) != 1 || got[0].Line != 13 || !strings.Contains(got[0].Message, "agent file-reviewer is launched here but is not the workflow's") ||
		!strings.Contains(got[0].Message, "add file-reviewer to the --agents of the sm-init at line 7") {
		t.Errorf("a plugin's undeclared agent: %v", got)
	}
	if got := CheckCommand(own, lowLevel, starts, []Definition{{Found: true, Machine: m}}); len(got) != 0 {
		t.Errorf("a project's command, whose blocks name its agents: %v", got)
	}
	declared := strings.Replace(lowLevel, "--description d", "--description d --agents file-reviewer", 1)
	if got := CheckCommand(plugin, declared, Starts(declared), []Definition{{Found: true, Machine: m}}); len(got) != 0 {
		t.Errorf("an agent declared with --agents: %v", got)
	}
	partial := strings.Replace(lowLevel, "--description d", "--description d --agents other", 1)
	if got := CheckCommand(own, partial, Starts(partial), []Definition{{Found: true, Machine: m}}); len(got) != 1 || got[0].Line != 13 {
		t.Errorf("--agents that leave one out, in .claude/commands: %v", got)
	}
	m.Agents = []string{"file-reviewer"}
	if got := CheckCommand(plugin, lowLevel, starts, []Definition{{Found: true, Machine: m}}); len(got) != 0 {
		t.Errorf("an agent the machine declares: %v", got)
	}
	got = CheckCommand(own, lowLevel, starts, []Definition{{Path: "/p/.claude/flows/m.json"}})
	if len(got) != 1 || got[0].Line != 7 || !strings.Contains(got[0].Message, "starts the workflow definition .claude/flows/m.json, which is not there (looked for /p/.claude/flows/m.json)") {
		t.Errorf("a definition not there: %v", got)
	}
}

func TestCheckAgentName(t *testing.T) {
	a := ReadAgent("agents/audit-critic.md", "---\nname: audit-reviewer\ndescription: d\n---\nbody\nname: not this\n")
	if a.Name != "audit-reviewer" || a.Line != 2 {
		t.Fatalf("ReadAgent = %+v", a)
	}
	if got := CheckAgentName(a); len(got) != 1 || got[0].String() != "agents/audit-critic.md:2: name: audit-reviewer differs from the file's name audit-critic.md: Claude Code knows the agent as audit-reviewer, its definition and task blocks as whatever they name; give the agent one name in all three places (the file, name:, the definition's \"agent\")" {
		t.Errorf("CheckAgentName = %v", got)
	}
	if got := CheckAgentName(ReadAgent("agents/x.md", "---\nname: x\n---\n")); got != nil {
		t.Errorf("a matching name: %v", got)
	}
}

const definition = `{
  "name": "audit",
  "initial": "initialize",
  "transitions": {"initialize": ["review"], "review": ["complete"], "complete": []},
  "scopes": {"full": {"terminal": "complete", "route": ["initialize", "review", "complete"]}},
  "work": {
    "review": {
      "agent": "audit-reviewer",
      "supervisor": {"agent": "sub-supervisor", "from": 4},
      "each": ["a", "b"],
      "output": "reviews/{n:3}_{item}.md",
      "format": "report"
    }
  }
}
`

// TestCheckDefinition: each agent the definition names has a file whose
// name: is it, said at the line of the key; a definition flowstate would
// refuse is said at the line of the key it is about.
func TestCheckDefinition(t *testing.T) {
	agents := map[string]AgentFile{
		"audit-reviewer": {Path: "agents/audit-reviewer.md", Name: "audit-reviewer", Line: 2},
		"sub-supervisor": {Path: "agents/sub-supervisor.md", Name: "sub-supervisor", Line: 2},
	}
	if got := CheckDefinition("a.json", []byte(definition), agents); len(got) != 0 {
		t.Errorf("a definition whose agents all have files: %v", got)
	}
	for _, tc := range []struct {
		name   string
		agents func(map[string]AgentFile)
		def    func(string) string
		want   string
	}{
		{"file renamed", func(a map[string]AgentFile) {
			delete(a, "audit-reviewer")
			a["audit-critic"] = AgentFile{Path: "agents/audit-critic.md", Name: "audit-reviewer", Line: 2}
		}, nil, ""},
		{"name: changed", func(a map[string]AgentFile) {
			a["audit-reviewer"] = AgentFile{Path: "agents/audit-reviewer.md", Name: "audit-critic", Line: 2}
		},
			nil, "a.json:8: agent audit-reviewer: its file agents/audit-reviewer.md is named audit-critic (line 2)"},
		{"definition changed", nil, func(d string) string {
			return strings.Replace(d, `"agent": "audit-reviewer"`, `"agent": "audit-critic"`, 1)
		},
			"a.json:8: agent audit-critic has no agent file"},
		{"no supervisor", func(a map[string]AgentFile) { delete(a, "sub-supervisor") }, nil, "a.json:9: agent sub-supervisor has no agent file"},
		{"refused", nil, func(d string) string { return strings.Replace(d, `{n:3}_{item}`, `review`, 1) }, "a.json:11: machine \"audit\": work.review.output:"},
	} {
		as := map[string]AgentFile{}
		for k, v := range agents {
			as[k] = v
		}
		if tc.agents != nil {
			tc.agents(as)
		}
		def := definition
		if tc.def != nil {
			def = tc.def(def)
		}
		got := CheckDefinition("a.json", []byte(def), as)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: %v, want none (the agent file's own name is checked apart)", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0].String(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCheckCommandIsolated: a phase-loop command whose definition runs a
// state's workers in worktrees has the task block that launches them so;
// one written before there was one (only the shared tree's block) is
// named at its start.
func TestCheckCommandIsolated(t *testing.T) {
	files, err := scaffold.NewCommand("audit", "")
	if err != nil {
		t.Fatal(err)
	}
	var md string
	var def []byte
	for _, f := range files {
		switch f.Path {
		case ".claude/commands/audit.md":
			md = string(f.Data)
		case ".claude/flows/audit.json":
			def = bytes.Replace(f.Data, []byte(`"min_delivered": 2`), []byte(`"min_delivered": 2, "isolation": "worktree"`), 1)
		}
	}
	m, err := machine.Parse(def)
	if err != nil {
		t.Fatal(err)
	}
	defs := []Definition{{Found: true, Machine: m}}
	if got := CheckCommand("p/.claude/commands/audit.md", md, Starts(md), defs); len(got) != 0 {
		t.Errorf("the command as new command writes it: %v", got)
	}
	old := regexp.MustCompile("(?s)```task\n[^`]*isolation: worktree[^`]*```\n").ReplaceAllString(md, "")
	if old == md {
		t.Fatal("no isolated task block to take out")
	}
	got := CheckCommand("p/.claude/commands/audit.md", old, Starts(old), defs)
	if len(got) != 1 || got[0].Line != Starts(old)[0].Line || !strings.Contains(got[0].Message, "runs the workers of review each in a git worktree") {
		t.Errorf("a command without the isolated block: %v", got)
	}
}
