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

// TestMainThreadBashFindsNoProject: a Bash call that names no flowstate,
// which every session makes all the time, is answered before the hook
// looks for its project: here one whose state directory is a link, which
// the search would log.
func TestMainThreadBashFindsNoProject(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, ".claude", "state")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CLAUDE_PROJECT_DIR": dir, "HOME": home}
	run := func(command string) {
		in, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": dir, "tool_name": "Bash",
			"tool_input": map[string]string{"command": command}})
		Run(PreToolUse, Env{Stdin: strings.NewReader(string(in)), Getenv: func(k string) string { return vars[k] }, Now: now})
	}
	run("go test ./... && git status")
	log := filepath.Join(home, ".claude", "flowstate-hooks.log")
	if b, err := os.ReadFile(log); !os.IsNotExist(err) {
		t.Errorf("a Bash call naming no flowstate looked for its project: %s", b)
	}
	run("flowstate phase-plan") // a step may be granted: the test sees the search
	if _, err := os.ReadFile(log); err != nil {
		t.Errorf("a flowstate step did not look for its project: %v", err)
	}
}
