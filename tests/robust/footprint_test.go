package robust

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritesOnlyItsStateDir runs every command in a project whose other
// files, HOME and TMPDIR are snapshotted: nothing outside
// .claude/state may change. It runs with umask 000 so that the modes
// checked afterwards (directories 0700, files 0600) come from flowstate
// itself, not from a kind umask.
func TestWritesOnlyItsStateDir(t *testing.T) {
	p := newProject(t)
	for path, content := range map[string]string{
		"project/src/main.go":           "package main\n",
		"project/.git/HEAD":             "ref: refs/heads/main\n",
		"project/.claude/settings.json": "{}\n",
		"project/.claude/commands/x.md": "# x\n",
		"home/.bashrc":                  "# rc\n",
		"home/.claude/settings.json":    "{}\n",
		"tmp/machine.json":              customMachine,
		"tmp/classification.json":       `{"workflow_type":"research-only","confidence":0.9,"research_complexity":1,"research_topics":["a"],"reasoning":"r"}`,
	} {
		full := filepath.Join(p.Root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.wrap(`umask 000; exec "$flowstate" "$@"`)
	p.setenv("CLAUDE_CODE_SESSION_ID=session-1")
	before := snapshot(t, p.Root, "project/.claude/state")

	id := p.newWorkflow("footprint")
	p.ok("sm-init", "--workflow", "custom", "--description", "d", "--command", "review", "--scope", "quick", "--machine", filepath.Join(p.Root, "tmp/machine.json"))
	p.ok("sm-init", "--workflow", "classified", "--description", "d", "--command", "c", "--classification", "@"+filepath.Join(p.Root, "tmp/classification.json"))
	for _, c := range [][]string{
		{"sm-transition", "research", "--reason", "start"}, {"sm-transition", "plan"},
		{"state-append", "K", "v"}, {"state-get", "K"}, {"state-load"}, {"state-load", "--json"},
		{"checkpoint-set", "phase_data.plan.n", "1"}, {"checkpoint-set", "--increment", "phase_data.plan.n"},
		{"checkpoint-set", "--append", "phase_data.plan.items", `"a"`}, {"checkpoint-get", "phase_data.plan"},
		{"log-append", "metrics", `{"ms":1}`}, {"sm-fail", "--error", "boom"}, {"sm-retry"}, {"sm-next"},
		{"sm-status"}, {"sm-status", "--json"}, {"list"}, {"list", "--json"}, {"version"}, {"help", "exit-codes"},
		{"--workflow", "custom", "sm-transition", "review"},
	} {
		p.ok(c...)
	}
	p.okCall(call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("A=1\nB=two\n")})
	p.okCall(call{Args: []string{"checkpoint-save"}, Stdin: strings.NewReader(p.ok("checkpoint-load"))})
	// Enough appends to trigger compaction, which rewrites the state file.
	for i := range 40 {
		p.okCall(call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("BIG=" + strings.Repeat("x", 512) + string(rune('a'+i%26)) + "\n")})
	}
	p.checkIntact(id)

	sameTree(t, "outside .claude/state", before, snapshot(t, p.Root, "project/.claude/state"))
	var files int
	err := filepath.WalkDir(p.stateDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = fs.ModeDir | 0o700
		} else {
			files++
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files under .claude/state, all private", files)
}

const customMachine = `{"name":"review","initial":"start","transitions":{"start":["review"],"review":["done","start"],"done":[]},"scopes":{"quick":{"terminal":"done","route":["start","review","done"]}}}`
