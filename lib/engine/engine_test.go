package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	on := Inputs{InClaude: true, Hooks: true, Saved: true}
	with := func(f func(*Inputs)) Inputs { in := on; f(&in); return in }
	tests := []struct {
		name string
		in   Inputs
		want string
	}{
		{"tool on, nothing says otherwise", on, Workflow},
		{"outside Claude Code", with(func(in *Inputs) { in.InClaude = false }), Steps},
		{"the definition asks for steps", with(func(in *Inputs) { in.Definition = Steps }), Steps},
		{"the definition asks for the workflow engine", with(func(in *Inputs) { in.Definition = Workflow }), Workflow},
		{"FLOWSTATE_ENGINE=steps", with(func(in *Inputs) { in.Override = Steps }), Steps},
		{"FLOWSTATE_ENGINE=workflow wins over a setting", with(func(in *Inputs) { in.Override = Workflow; in.Disable = "1" }), Workflow},
		{"FLOWSTATE_ENGINE=workflow without hooks", with(func(in *Inputs) { in.Override = Workflow; in.Hooks = false }), Steps},
		{"no hooks", with(func(in *Inputs) { in.Hooks = false }), Steps},
		{"no saved workflow", with(func(in *Inputs) { in.Saved = false }), Steps},
		{"CLAUDE_CODE_DISABLE_WORKFLOWS=1", with(func(in *Inputs) { in.Disable = "1" }), Steps},
		{"CLAUDE_CODE_DISABLE_WORKFLOWS=0", with(func(in *Inputs) { in.Disable = "0" }), Workflow},
		{"CLAUDE_CODE_WORKFLOWS=0", with(func(in *Inputs) { in.Enable = "0" }), Steps},
		{"CLAUDE_CODE_WORKFLOWS=false", with(func(in *Inputs) { in.Enable = "false" }), Steps},
		{"disableWorkflows in a settings file", with(func(in *Inputs) { in.Settings = [][]byte{[]byte(`{}`), []byte(`{"disableWorkflows": true}`)} }), Steps},
		{"enableWorkflows false", with(func(in *Inputs) { in.Settings = [][]byte{[]byte(`{"enableWorkflows": false}`)} }), Steps},
		{"enableWorkflows true", with(func(in *Inputs) {
			in.Settings = [][]byte{[]byte(`{"enableWorkflows": true, "disableWorkflows": false}`)}
		}), Workflow},
		{"a settings file that does not parse", with(func(in *Inputs) { in.Settings = [][]byte{[]byte(`{"disableWorkflows": tru`)} }), Workflow},
		{"the transcript offers the tool, a setting says off", with(func(in *Inputs) {
			in.Tools, in.ToolsKnown, in.Disable = []string{"Bash", "Workflow"}, true, "1"
		}), Workflow},
		{"the transcript does not offer it (an org policy)", with(func(in *Inputs) { in.Tools, in.ToolsKnown = []string{"Agent", "Bash"}, true }), Steps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Choose(tt.in)
			if got != tt.want || why == "" {
				t.Errorf("Choose = %s (%q), want %s", got, why, tt.want)
			}
		})
	}
}

func TestSettingsArg(t *testing.T) {
	files := map[string]string{"/s.json": `{"disableWorkflows": true}`}
	read := func(p string) []byte {
		if b, ok := files[p]; ok {
			return []byte(b)
		}
		return nil
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"claude", "-p", "x"}, ""},
		{[]string{"claude", "--settings", "/s.json", "-p"}, `{"disableWorkflows": true}`},
		{[]string{"claude", "--settings={\"enableWorkflows\":false}"}, `{"enableWorkflows":false}`},
		{[]string{"claude", "--settings", ` {"a":1}`}, ` {"a":1}`},
		{[]string{"claude", "--settings"}, ""},
		{[]string{"claude", "--settings", "/missing.json"}, ""},
	} {
		if got := string(settingsArg(tt.args, read)); got != tt.want {
			t.Errorf("settingsArg(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestRequestTools(t *testing.T) {
	shape := `{"type":"api-request-shape","shape":{"system":"x","tools":[{"name":"Agent"},{"name":"Bash"},{"name":"Workflow"}]}}`
	for _, tt := range []struct {
		name, transcript string
		want             string
		ok               bool
	}{
		{"after other lines", `{"type":"queue-operation"}` + "\n" + `{"type":"user"}` + "\n" + shape + "\n", "Agent Bash Workflow", true},
		{"no newline at the end", shape, "Agent Bash Workflow", true},
		{"none", `{"type":"user"}` + "\n", "", false},
		{"a line that only mentions it", `{"type":"user","text":"api-request-shape"}` + "\n", "", false},
		{"a line too long, then the shape", `{"type":"x","pad":"` + strings.Repeat("a", maxShapeLine) + `"}` + "\n" + shape + "\n", "Agent Bash Workflow", true},
	} {
		got, ok := RequestTools(strings.NewReader(tt.transcript))
		if strings.Join(got, " ") != tt.want || ok != tt.ok {
			t.Errorf("%s: RequestTools = %v, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRead: the inputs read from a session's files: a settings file that
// turns workflows off, and the tools of the session transcript.
func TestRead(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "CLAUDE_CODE_SESSION_ID": "s-1", "CLAUDE_CODE_DISABLE_WORKFLOWS": "1"}
	getenv := func(k string) string { return env[k] }
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, ".claude", "settings.local.json"), `{"disableWorkflows": true}`)
	in := Read(getenv, project)
	if !in.InClaude || in.Disable != "1" || in.ToolsKnown || len(in.Settings) != 1 {
		t.Fatalf("Read = %+v", in)
	}
	write(filepath.Join(home, ".claude", "projects", "-p", "s-1.jsonl"), `{"type":"api-request-shape","shape":{"tools":[{"name":"Bash"}]}}`+"\n")
	if in = Read(getenv, project); !in.ToolsKnown || strings.Join(in.Tools, " ") != "Bash" {
		t.Errorf("Read tools = %v, %v", in.Tools, in.ToolsKnown)
	}
	if got, _ := Choose(Inputs{InClaude: true, Hooks: true, Saved: true, Tools: in.Tools, ToolsKnown: true}); got != Steps {
		t.Errorf("a transcript without the Workflow tool chose %s", got)
	}
}

func TestFindSaved(t *testing.T) {
	project, plugin := t.TempDir(), t.TempDir()
	if _, ok := FindSaved(project, plugin, "coordinate"); ok {
		t.Error("found a saved workflow in empty directories")
	}
	for path, text := range map[string]string{
		filepath.Join(plugin, ".claude-plugin", "plugin.json"):   `{"name": "flowstate"}`,
		filepath.Join(plugin, "workflows", "coordinate-flow.js"): "x",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s, ok := FindSaved(project, plugin, "coordinate"); !ok || s.Name != "flowstate:coordinate-flow" {
		t.Errorf("the plugin's: %+v, %v", s, ok)
	}
	own := filepath.Join(project, ".claude", "workflows", "coordinate-flow.js")
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, ok := FindSaved(project, plugin, "coordinate"); !ok || s.Name != "coordinate-flow" || s.Path != own {
		t.Errorf("a project install's comes first: %+v, %v", s, ok)
	}
}

func TestClaudeConfigDir(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLAUDE_CONFIG_DIR": "/c", "HOME": "/h"}, "/c"},
		{map[string]string{"HOME": "/h"}, "/h/.claude"},
		{nil, ""},
	} {
		if got := ClaudeConfigDir(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("ClaudeConfigDir(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}
