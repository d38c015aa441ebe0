package hook

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	flowstate "github.com/flowstate-dev/flowstate"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
)

// TestProjectFromPayloadCwd: without CLAUDE_PROJECT_DIR the hook finds
// the project the way the CLI does from the payload's cwd, walking up to
// the directory holding .git, so it exports and sweeps the same project.
func TestProjectFromPayloadCwd(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "src", "pkg")
	for _, d := range []string{filepath.Join(root, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	env := func(vars map[string]string) Env {
		return Env{Getenv: func(k string) string { return vars[k] }, Now: now}
	}
	l := &logger{env: env(nil), event: SessionStart}
	for _, c := range []struct {
		name string
		vars map[string]string
		cwd  string
		want string // "" for no project
	}{
		{"payload cwd in a subdirectory", nil, sub, root},
		{"payload cwd at the root", nil, root, root},
		{"CLAUDE_PROJECT_DIR wins", map[string]string{"CLAUDE_PROJECT_DIR": other}, sub, other},
		{"CLAUDE_PROJECT_DIR without a payload cwd", map[string]string{"CLAUDE_PROJECT_DIR": other}, "", other},
		{"neither: no guessing from the process's cwd", nil, "", ""},
	} {
		p := project(env(c.vars), payload{Cwd: c.cwd}, l)
		switch {
		case c.want == "" && p != nil:
			t.Errorf("%s: project %s, want none", c.name, p.Dir)
		case c.want != "" && (p == nil || p.Dir != c.want):
			t.Errorf("%s: project %+v, want %s", c.name, p, c.want)
		case p != nil && p.LockWait != hookLockWait:
			t.Errorf("%s: lock wait %v, want the hook's %v", c.name, p.LockWait, hookLockWait)
		}
	}
}

func TestDecideStop(t *testing.T) {
	running := orchestrate.Place{Run: orchestrate.Run{Workflow: "w"}, Exists: true, Status: "in_progress", State: "research", Section: "phase"}
	with := func(f func(p *orchestrate.Place)) orchestrate.Place {
		p := running
		f(&p)
		return p
	}
	for _, c := range []struct {
		name   string
		place  orchestrate.Place
		active bool
		block  bool
	}{
		{"in progress", running, false, true},
		{"in progress, after our block", with(func(p *orchestrate.Place) { p.Run.StopBlocks = 1 }), true, true},
		{"blocked enough without progress", with(func(p *orchestrate.Place) { p.Run.StopBlocks = MaxStopBlocks }), true, false},
		{"a fresh stop counts from zero", with(func(p *orchestrate.Place) { p.Run.StopBlocks = MaxStopBlocks }), false, true},
		{"halted on a failed step", with(func(p *orchestrate.Place) { p.Run.Halted = "research_2 wrote no report" }), false, false},
		{"finished", with(func(p *orchestrate.Place) { p.Status = "complete" }), false, false},
		{"waiting for a person", with(func(p *orchestrate.Place) { p.Status = "awaiting_approval" }), false, false},
		{"paused from a shell", with(func(p *orchestrate.Place) { p.Status = "paused" }), false, false},
		{"cancelled from a shell", with(func(p *orchestrate.Place) { p.Status = "cancelled" }), false, false},
		{"not created yet", orchestrate.Place{Run: orchestrate.Run{Workflow: "w"}, Section: "start"}, false, true},
	} {
		if got := decideStop(c.place, c.active); got.Block != c.block {
			t.Errorf("%s: block %t, want %t", c.name, got.Block, c.block)
		}
	}
}

// TestPluginHooksAreTheRegistrations: the plugin's hooks/hooks.json runs
// every hook of Registrations (which a project install writes), with the
// same matcher, and nothing else.
func TestPluginHooksAreTheRegistrations(t *testing.T) {
	b, err := fs.ReadFile(flowstate.Plugin, "hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for event, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				arg := h.Command[strings.LastIndex(h.Command, " ")+1:]
				got = append(got, event+" "+g.Matcher+" "+arg)
			}
		}
	}
	for _, r := range Registrations() {
		want = append(want, r.Event+" "+r.Matcher+" "+r.Arg)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hooks/hooks.json runs\n%q\nRegistrations are\n%q", got, want)
	}
}

// TestSupervisorStep: the Bash calls bindAgent binds are a subagent's
// flowstate phase-plan or phase-verify --supervisor, however flowstate is
// named and whatever global flags come first; nothing else.
func TestSupervisorStep(t *testing.T) {
	for _, c := range []struct {
		agent, command string
		want           bool
	}{
		{"a1", "flowstate phase-plan --supervisor", true},
		{"a1", `"$FLOWSTATE_BIN" phase-plan --supervisor`, true},
		{"a1", "${FLOWSTATE_BIN} phase-verify --supervisor --wait 90s", true},
		{"a1", "flowstate --workflow w-1 phase-verify --supervisor", true},
		{"a1", "/p/.claude/bin/flowstate phase-plan --supervisor 2>&1", true},
		{"a1", "cd /p && flowstate phase-plan --supervisor", true},
		{"", "flowstate phase-plan --supervisor", false},
		{"a1;x", "flowstate phase-plan --supervisor", false},
		{"a1", "flowstate phase-plan", false},
		{"a1", "flowstate supervisor-record --supervisor reviews -", false},
		{"a1", "flowstate status; phase-plan --supervisor", false},
		{"a1", "phase-plan --supervisor flowstate", false},
		{"a1", "ls -la", false},
		{"a1", "flowstate phase-plan --supervisor #" + strings.Repeat("x", maxStepCommand), false},
	} {
		in, _ := json.Marshal(map[string]string{"command": c.command})
		if _, got := supervisorStep(payload{ToolName: "Bash", AgentID: c.agent, ToolInput: in}); got != c.want {
			t.Errorf("%q by agent %q: %v, want %v", c.command, c.agent, got, c.want)
		}
	}
}

// TestMainThreadBashFindsNoProject: a Bash call of the main thread, which
// every session makes all the time, is answered before the hook looks for
// its project: here one whose state directory is a link, which the
// search would log.
func TestMainThreadBashFindsNoProject(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, ".claude", "state")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CLAUDE_PROJECT_DIR": dir, "HOME": home}
	run := func(agent string) {
		in, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": dir, "tool_name": "Bash", "agent_id": agent,
			"tool_input": map[string]string{"command": "flowstate phase-plan --supervisor"}})
		Run(PreToolUse, Env{Stdin: strings.NewReader(string(in)), Getenv: func(k string) string { return vars[k] }, Now: now})
	}
	run("")
	log := filepath.Join(home, ".claude", "flowstate-hooks.log")
	if b, err := os.ReadFile(log); !os.IsNotExist(err) {
		t.Errorf("the main thread's Bash call looked for its project: %s", b)
	}
	run("a1") // a supervisor's step does: the test sees the search
	if _, err := os.ReadFile(log); err != nil {
		t.Errorf("a supervisor's step did not look for its project: %v", err)
	}
}
