// Package installtest tests `flowstate install`, `uninstall` and `doctor`
// against settings.json fixtures, running the real binary in a bare
// environment as Claude Code's hooks would.
package installtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

var bin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &bin) }

const (
	startCmd = `"$CLAUDE_PROJECT_DIR"/.claude/bin/flowstate hook session-start`
	endCmd   = `"$CLAUDE_PROJECT_DIR"/.claude/bin/flowstate hook session-end`
)

// run runs the binary in a bare environment; it returns stdout, stderr
// and the exit code.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, err := testenv.ExitCode(cmd.Run())
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errs, code := run(t, dir, args...)
	if code != 0 {
		t.Fatalf("flowstate %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return errs
}

// project makes a project whose settings.json is the fixture ("" for
// none) and whose .gitignore lacks a final newline.
func project(t *testing.T, fixture string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fixture != "" {
		b, err := os.ReadFile(filepath.Join("testdata", "settings", fixture))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ".claude", "settings.json"), b)
	}
	return dir
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshot records every file, directory and link under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	return testenv.Snapshot(t, dir)
}

// sameSnapshot reports each path that differs between two snapshots.
func sameSnapshot(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for _, d := range testenv.TreeDiff(want, got) {
		t.Errorf("%s: %s", what, d)
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// withoutOurs removes flowstate's handler groups from decoded settings,
// and the hooks containers that install created, to compare with the
// user's original.
func withoutOurs(settings, orig map[string]any) map[string]any {
	hooks, _ := settings["hooks"].(map[string]any)
	origHooks, _ := orig["hooks"].(map[string]any)
	for ev, list := range hooks {
		var kept []any
		for _, g := range list.([]any) {
			s, _ := json.Marshal(g)
			if !strings.Contains(string(s), "/.claude/bin/flowstate hook ") {
				kept = append(kept, g)
			}
		}
		if _, had := origHooks[ev]; !had && len(kept) == 0 {
			delete(hooks, ev)
			continue
		}
		if kept == nil {
			kept = []any{}
		}
		hooks[ev] = kept
	}
	if _, had := orig["hooks"]; !had && len(hooks) == 0 {
		delete(settings, "hooks")
	}
	return settings
}

// topKeys lists the top-level keys of a JSON object in file order.
func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// countOurs counts flowstate handlers per event and checks each is the
// last group of its event, after the user's.
func countOurs(t *testing.T, settings map[string]any) map[string]int {
	t.Helper()
	n := map[string]int{}
	hooks, _ := settings["hooks"].(map[string]any)
	for ev, list := range hooks {
		groups := list.([]any)
		for i, g := range groups {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				cmd := h.(map[string]any)["command"].(string)
				if cmd == startCmd || cmd == endCmd {
					n[ev+" "+cmd]++
					if i != len(groups)-1 {
						t.Errorf("%s: flowstate's group is not after the user's", ev)
					}
				}
			}
		}
	}
	return n
}

func TestInstallReinstallUninstall(t *testing.T) {
	for _, fixture := range []string{"", "empty-object.json", "user-hooks.json", "permissions-model.json", "odd-order.json", "unicode.json"} {
		t.Run("settings="+fixture, func(t *testing.T) {
			dir := project(t, fixture)
			before := snapshot(t, dir)
			settingsPath := filepath.Join(dir, ".claude", "settings.json")
			orig, _ := os.ReadFile(settingsPath)

			mustRun(t, dir, "install")
			got := readFile(t, settingsPath)
			settings := decode(t, got).(map[string]any)
			want := map[string]int{"SessionStart " + startCmd: 1, "SessionEnd " + endCmd: 1}
			if n := countOurs(t, settings); !reflect.DeepEqual(n, want) {
				t.Errorf("flowstate handlers = %v, want one per event", n)
			}
			if fixture != "" {
				origV := decode(t, orig).(map[string]any)
				if user := withoutOurs(settings, origV); !reflect.DeepEqual(user, origV) {
					t.Errorf("user settings changed:\n got %v\nwant %v", user, origV)
				}
				keys, origKeys := topKeys(t, got), topKeys(t, orig)
				if len(keys) < len(origKeys) || !slices.Equal(keys[:len(origKeys)], origKeys) {
					t.Errorf("key order %v, want %v first", keys, origKeys)
				}
				if b := readFile(t, filepath.Join(dir, ".claude", "bin", "settings.json.flowstate-backup")); !bytes.Equal(b, orig) {
					t.Errorf("backup differs from the original settings")
				}
			}
			if fixture == "unicode.json" {
				for _, s := range []string{`"caf\u00e9 \"quoted\" back\\slash"`, "世界 🚀", `"line\nbreak\ttab"`} {
					if !bytes.Contains(got, []byte(s)) {
						t.Errorf("settings lost the bytes %s", s)
					}
				}
			}
			// The state directory ignores itself (lib/store): the user's
			// .gitignore is not touched.
			if gi := readFile(t, filepath.Join(dir, ".gitignore")); string(gi) != "node_modules/\n*.log" {
				t.Errorf(".gitignore = %q; want it untouched", gi)
			}
			cmd := string(readFile(t, filepath.Join(dir, ".claude", "commands", "supervise.md")))
			if strings.Contains(cmd, "subagent_type: flowstate:") {
				t.Errorf("installed command still namespaced:\n%s", cmd)
			}
			if st, err := os.Stat(filepath.Join(dir, ".claude", "bin", "flowstate")); err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("binary not installed executable: %v", err)
			}

			installed := snapshot(t, dir)
			mustRun(t, dir, "install")
			sameSnapshot(t, "reinstall", installed, snapshot(t, dir))

			if out, errs, code := run(t, dir, "doctor"); code != 0 {
				t.Errorf("doctor on a fresh install: exit %d\n%s%s", code, out, errs)
			}

			mustRun(t, dir, "uninstall")
			sameSnapshot(t, "uninstall", before, snapshot(t, dir))
		})
	}
}

func TestInvalidSettingsRefused(t *testing.T) {
	dir := project(t, "")
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), []byte(`{"model": "opus",`))
	before := snapshot(t, dir)
	_, errs, code := run(t, dir, "install")
	if code != 4 || !strings.Contains(errs, "settings.json is not valid JSON") {
		t.Errorf("exit %d, stderr %q; want 4 and a message about settings.json", code, errs)
	}
	sameSnapshot(t, "refused install", before, snapshot(t, dir))
}

// TestSettingsFIFORefused: a settings.json that is a FIFO (a cloned
// repository may carry one) is refused at once, not read forever, by
// install and by doctor, and install writes nothing.
func TestSettingsFIFORefused(t *testing.T) {
	dir := project(t, "")
	fifo := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	before := snapshot(t, dir)
	_, errs, code := run(t, dir, "install")
	if code != 2 || !strings.Contains(errs, "settings.json is a FIFO") {
		t.Errorf("install: exit %d, stderr %q; want 2 naming the FIFO", code, errs)
	}
	sameSnapshot(t, "refused install", before, snapshot(t, dir))
	// Installed, then the settings replaced by a FIFO: doctor says so.
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "install")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, dir, "doctor")
	if code == 0 || !strings.Contains(out, "settings.json is a FIFO") {
		t.Errorf("doctor: exit %d, stdout %q; want the FIFO named", code, out)
	}
}

func TestUserChangesSurvive(t *testing.T) {
	dir := project(t, "user-hooks.json")
	own := []byte("# my own coordinate\n")
	writeFile(t, filepath.Join(dir, ".claude", "commands", "coordinate.md"), own)
	errs := mustRun(t, dir, "install")
	if !strings.Contains(errs, "kept your .claude/commands/coordinate.md") {
		t.Errorf("install did not say it kept the user's own command: %s", errs)
	}

	edited := filepath.Join(dir, ".claude", "agents", "plan-architect.md")
	writeFile(t, edited, append(readFile(t, edited), "\nMy note.\n"...))
	settingsPath := filepath.Join(dir, ".claude", "settings.json")
	settings := bytes.Replace(readFile(t, settingsPath), []byte(`"hooks": {`), []byte(`"model": "haiku",
  "hooks": {`), 1)
	writeFile(t, settingsPath, settings)

	errs = mustRun(t, dir, "install")
	if !strings.Contains(errs, "kept .claude/agents/plan-architect.md") {
		t.Errorf("reinstall did not keep the edited agent: %s", errs)
	}
	errs = mustRun(t, dir, "uninstall")
	if !bytes.Equal(readFile(t, filepath.Join(dir, ".claude", "commands", "coordinate.md")), own) {
		t.Errorf("uninstall touched the user's own command")
	}
	if !bytes.Contains(readFile(t, edited), []byte("My note.")) || !strings.Contains(errs, "kept .claude/agents/plan-architect.md") {
		t.Errorf("uninstall removed an edited agent or did not say so: %s", errs)
	}
	after := readFile(t, settingsPath)
	if bytes.Contains(after, []byte("flowstate hook")) || !bytes.Contains(after, []byte(`"model": "haiku"`)) ||
		!bytes.Contains(after, []byte("MY_VAR")) || !bytes.Contains(after, []byte("log-session-end")) {
		t.Errorf("uninstall after a settings edit: want flowstate's hooks out and the user's in:\n%s", after)
	}
	if !strings.Contains(errs, ".claude/bin/settings.json.flowstate-backup") {
		t.Errorf("uninstall did not point at the backup: %s", errs)
	}
	// The backup stays, out of git's sight; the binary is gone.
	left, _ := os.ReadDir(filepath.Join(dir, ".claude", "bin"))
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".gitignore settings.json.flowstate-backup" {
		t.Errorf(".claude/bin after uninstall holds %v, want the backup and the .gitignore that keeps it out of git", names)
	}
}

func TestForceReplacesChangedFiles(t *testing.T) {
	dir := project(t, "")
	mustRun(t, dir, "install")
	agent := filepath.Join(dir, ".claude", "agents", "doc-writer.md")
	orig := readFile(t, agent)
	writeFile(t, agent, []byte("mine"))
	mustRun(t, dir, "install", "--force")
	if !bytes.Equal(readFile(t, agent), orig) {
		t.Errorf("--force did not restore the agent")
	}
}

// TestForceKeepsUsersFiles: install --force replaces the user's own
// command and their edit of an installed agent, keeping each beside it
// with its mode; doctor says so before; uninstall puts both back, byte
// for byte, and leaves no backup behind.
func TestForceKeepsUsersFiles(t *testing.T) {
	dir := project(t, "")
	own := filepath.Join(dir, ".claude", "commands", "coordinate.md")
	writeFile(t, own, []byte("# my own coordinate\n"))
	if err := os.Chmod(own, 0o640); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "install")
	if out, _, code := run(t, dir, "doctor"); code != 0 || !strings.Contains(out, "which keeps yours as .claude/commands/coordinate.md.flowstate-backup and uninstall puts it back") {
		t.Errorf("doctor on a kept command: exit %d, want 0 and a warning that names the backup --force makes\n%s", code, out)
	}
	agent := filepath.Join(dir, ".claude", "agents", "plan-architect.md")
	edited := append(readFile(t, agent), "\nMy note.\n"...)
	writeFile(t, agent, edited)
	before := snapshot(t, dir)

	errs := mustRun(t, dir, "install", "--force")
	for _, f := range []struct {
		path string
		mine []byte
	}{{own, []byte("# my own coordinate\n")}, {agent, edited}} {
		if bytes.Equal(readFile(t, f.path), f.mine) {
			t.Errorf("--force did not replace %s", f.path)
		}
		if got := readFile(t, f.path+".flowstate-backup"); !bytes.Equal(got, f.mine) {
			t.Errorf("%s.flowstate-backup holds %q, want the user's file", f.path, got)
		}
		rel, _ := filepath.Rel(dir, f.path)
		if !strings.Contains(errs, "replaced your "+rel+"; yours is kept as "+rel+".flowstate-backup") {
			t.Errorf("install --force did not say where it kept %s:\n%s", rel, errs)
		}
	}
	if st, err := os.Stat(own + ".flowstate-backup"); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the backup's mode: %v, %v; want the user's 0640", st, err)
	}
	mustRun(t, dir, "install", "--force") // nothing of the user's left to back up
	if _, err := os.Stat(own + ".flowstate-backup.2"); err == nil {
		t.Error("a second --force backed up flowstate's own file")
	}

	errs = mustRun(t, dir, "uninstall")
	after := snapshot(t, dir)
	for rel := range after {
		if strings.Contains(rel, "flowstate-backup") {
			t.Errorf("uninstall left %s", rel)
		}
	}
	for _, f := range []string{own, agent} {
		rel, _ := filepath.Rel(dir, f)
		if before[rel] == "" || after[rel] != before[rel] {
			t.Errorf("uninstall did not put back the user's %s: %q, want %q", rel, after[rel], before[rel])
		}
	}
	if !strings.Contains(errs, "put back your .claude/commands/coordinate.md") {
		t.Errorf("uninstall did not say it put the command back:\n%s", errs)
	}
}

// TestFailedForceKeepsItsRecord: install --force that replaces the
// user's command and then fails (.claude/bin/flowstate is a directory)
// still records the backup it made, so a retry and uninstall put the
// user's command back. Before, the manifest was written only on
// success: uninstall deleted the command and left the backup.
func TestFailedForceKeepsItsRecord(t *testing.T) {
	dir := project(t, "")
	own := filepath.Join(dir, ".claude", "commands", "coordinate.md")
	writeFile(t, own, []byte("# my own coordinate\n"))
	binDir := filepath.Join(dir, ".claude", "bin", "flowstate")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, dir, "install", "--force"); code == 0 {
		t.Fatalf("install --force with a directory where the binary goes: exit 0\n%s", errs)
	}
	if got := readFile(t, own+".flowstate-backup"); string(got) != "# my own coordinate\n" {
		t.Fatalf("the backup holds %q", got)
	}
	if err := os.Remove(binDir); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "install", "--force")
	if _, err := os.Stat(own + ".flowstate-backup.2"); err == nil {
		t.Error("the retry backed up flowstate's own file")
	}
	errs := mustRun(t, dir, "uninstall")
	if got, err := os.ReadFile(own); err != nil || string(got) != "# my own coordinate\n" {
		t.Errorf("uninstall after a failed install --force and a retry: the command is %q, %v; want the user's back\n%s", got, err, errs)
	}
	if _, err := os.Stat(own + ".flowstate-backup"); err == nil {
		t.Error("uninstall left the backup")
	}
}

// TestUnrecordedBackupAdopted: a project an older flowstate left with
// flowstate's command in place of the user's, their file beside it as
// .flowstate-backup and no record of it (its install failed before
// writing the manifest): install records the backup, and uninstall puts
// the user's command back.
func TestUnrecordedBackupAdopted(t *testing.T) {
	ref := project(t, "")
	mustRun(t, ref, "install")
	ours := readFile(t, filepath.Join(ref, ".claude", "commands", "coordinate.md"))

	dir := project(t, "")
	own := filepath.Join(dir, ".claude", "commands", "coordinate.md")
	writeFile(t, own, ours)
	writeFile(t, own+".flowstate-backup", []byte("# my own coordinate\n"))
	mustRun(t, dir, "install")
	mustRun(t, dir, "uninstall")
	if got, err := os.ReadFile(own); err != nil || string(got) != "# my own coordinate\n" {
		t.Errorf("uninstall: the command is %q, %v; want the user's back from the backup", got, err)
	}
}

func TestDoctorFindsProblems(t *testing.T) {
	dir := project(t, "user-hooks.json")
	mustRun(t, dir, "install")
	state := filepath.Join(dir, ".claude", "state")
	sessions := filepath.Join(state, "sessions")
	writeFile(t, filepath.Join(sessions, "old-session"), []byte("gone-workflow\n"))
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(sessions, "old-session"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	settingsPath := filepath.Join(dir, ".claude", "settings.json")
	s := decode(t, readFile(t, settingsPath)).(map[string]any)
	delete(s["hooks"].(map[string]any), "SessionEnd")
	b, _ := json.MarshalIndent(s, "", "  ")
	writeFile(t, settingsPath, b)
	writeFile(t, filepath.Join(dir, ".claude", "commands", "coordinate.md"), []byte("changed"))
	plugin := t.TempDir()
	writeFile(t, filepath.Join(plugin, "hooks", "hooks.json"), []byte("{}"))

	out, errs, code := run(t, dir, "doctor", "--plugin-dir", plugin)
	if code != 2 || !strings.Contains(errs, "doctor found 6 problem(s)") {
		t.Errorf("doctor: exit %d, stderr %q; want 2 and 6 problems", code, errs)
	}
	for _, want := range []string{
		"FAIL .claude/settings.json lacks flowstate's SessionEnd hook",
		"FAIL installed files were changed since (install and uninstall keep them): .claude/commands/coordinate.md",
		"other users can read workflow state", "fix: chmod 700 " + state,
		"1 stale session pointers: old-session (its workflow no longer exists)",
		// A state directory made by hand (or an older flowstate) lacks the
		// .gitignore that keeps it out of git.
		"FAIL " + filepath.Join(state, ".gitignore") + " is missing or changed: workflow state could be committed", "fix: write it again: echo '*' > " + filepath.Join(state, ".gitignore"),
		"has no bin/flowstate", "run ./install.sh --plugin in " + plugin,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	stale := "#!/bin/sh\necho 'flowstate 0.0.1 (commit abc)'\n"
	writeFile(t, filepath.Join(dir, ".claude", "bin", "flowstate"), []byte(stale))
	if err := os.Chmod(filepath.Join(dir, ".claude", "bin", "flowstate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, dir, "doctor"); !strings.Contains(out, `FAIL .claude/bin/flowstate is "flowstate 0.0.1 (commit abc)", but this is flowstate`) {
		t.Errorf("doctor did not report the old binary:\n%s", out)
	}
	if err := os.Remove(filepath.Join(dir, ".claude", "bin", "flowstate")); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, dir, "doctor"); !strings.Contains(out, "FAIL .claude/bin/flowstate is missing") {
		t.Errorf("doctor did not report the missing binary:\n%s", out)
	}
}

// TestDoctorWarnsPluginToo: a project install beside the enabled plugin
// (every command and hook twice) is a warning, from the user's or the
// project's settings; a later settings file can disable the plugin again.
func TestDoctorWarnsPluginToo(t *testing.T) {
	dir := project(t, "")
	mustRun(t, dir, "install")
	home := t.TempDir()
	doctor := func() (string, int) {
		t.Helper()
		cmd := exec.Command(bin, "doctor")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
		out, err := cmd.Output()
		code, err := testenv.ExitCode(err)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := doctor(); code != 0 || strings.Contains(out, "WARN") {
		t.Fatalf("install alone: exit %d\n%s", code, out)
	}
	user := filepath.Join(home, ".claude", "settings.json")
	writeFile(t, user, []byte(`{"enabledPlugins": {"flowstate@flowstate-marketplace": true, "other@x": true}}`))
	out, code := doctor()
	if code != 0 || !strings.Contains(out, "WARN flowstate is installed in "+dir+"/.claude and the plugin flowstate@flowstate-marketplace is enabled in "+user+": every command is there twice") ||
		!strings.Contains(out, "fix: keep one: ./install.sh --uninstall "+dir) {
		t.Errorf("plugin enabled for the user: exit %d\n%s", code, out)
	}
	local := filepath.Join(dir, ".claude", "settings.local.json")
	writeFile(t, local, []byte(`{"enabledPlugins": {"flowstate@flowstate-marketplace": false}}`))
	if out, code := doctor(); code != 0 || strings.Contains(out, "WARN") {
		t.Errorf("plugin disabled for the project: exit %d\n%s", code, out)
	}
}

func TestDoctorWithoutInstall(t *testing.T) {
	dir := t.TempDir()
	out, _, code := run(t, dir, "doctor")
	if code != 2 || !strings.Contains(out, "flowstate is not installed in") || !strings.Contains(out, "./install.sh") {
		t.Errorf("doctor in an empty dir: exit %d\n%s", code, out)
	}
}

// TestInstallScript runs ./install.sh as a user would: it builds the
// binary with Go and installs, says what to do next, then uninstalls.
// Options go anywhere; --force reaches flowstate; anything else is a
// usage error.
func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	dir := project(t, "permissions-model.json")
	before := snapshot(t, dir)
	script := filepath.Join(testenv.RepoRoot(), "install.sh")
	env := append(os.Environ(), "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin")
	installSh := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(script, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code, err := testenv.ExitCode(err)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	// The user's own /coordinate is kept: the install succeeds with a
	// warning, and its Next names what runs flowstate's workflow instead
	// and how to get flowstate's /coordinate without losing theirs.
	own := filepath.Join(dir, ".claude", "commands", "coordinate.md")
	writeFile(t, own, []byte("# my own coordinate\n"))
	out, code := installSh(dir)
	if code != 0 || !strings.Contains(out, "WARN .claude/commands/coordinate.md is your own file, not flowstate's (install kept it): /coordinate is not flowstate's") ||
		!strings.Contains(out, "In Claude Code, in "+dir+": /orchestrate --scope full-implementation DESCRIPTION (your own /coordinate stays yours") ||
		!strings.Contains(out, "./install.sh --force "+dir+", which keeps yours as .claude/commands/coordinate.md.flowstate-backup") ||
		strings.Contains(out, "not complete") || !bytes.Equal(readFile(t, own), []byte("# my own coordinate\n")) {
		t.Errorf("install.sh over the user's own command: exit %d\n%s", code, out)
	}
	// --force, written before or after the directory, replaces it and
	// keeps it beside; uninstall puts the first one back and names the other.
	for i, args := range [][]string{{dir, "--force"}, {"--force", dir}} {
		writeFile(t, own, []byte(fmt.Sprintf("# my own coordinate %d\n", i)))
		if out, code := installSh(args...); code != 0 || bytes.Contains(readFile(t, own), []byte("my own")) {
			t.Errorf("install.sh %v: exit %d, coordinate.md not replaced\n%s", args, code, out)
		}
	}
	errs := mustRun(t, dir, "uninstall")
	if got := readFile(t, own); string(got) != "# my own coordinate 0\n" || !strings.Contains(errs, "put back your .claude/commands/coordinate.md") ||
		!strings.Contains(errs, "coordinate.md.flowstate-backup.2") {
		t.Errorf("uninstall after --force: coordinate.md is %q\n%s", got, errs)
	}
	if got := readFile(t, own+".flowstate-backup.2"); string(got) != "# my own coordinate 1\n" {
		t.Errorf("the second backup holds %q", got)
	}
	for _, f := range []string{own, own + ".flowstate-backup.2"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Dir(own)); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "uninstall after --force", before, snapshot(t, dir))

	// What it builds, and what to do next, including flowstate from a
	// terminal.
	out, code = installSh(dir)
	bin := filepath.Join(dir, ".claude", "bin", "flowstate")
	for _, want := range []string{"install.sh: building flowstate ", "In Claude Code, in " + dir + ": /coordinate DESCRIPTION", "In a terminal, flowstate is " + bin, "export PATH=" + filepath.Dir(bin) + `:"$PATH"`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("install.sh %s: exit %d, output lacks %q:\n%s", dir, code, want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "commands", "coordinate.md")); err != nil {
		t.Errorf("install.sh did not install the commands: %v", err)
	}

	// Bad command lines: exit 2 with the usage, nothing changed.
	installed := snapshot(t, dir)
	for _, args := range [][]string{{dir, "extra"}, {"--bogus", dir}, {dir, "--frce"}, {"--plugin", dir}, {"--uninstall", "--force", dir}, {"--plugin", "--uninstall"}} {
		if out, code := installSh(args...); code != 2 || !strings.Contains(out, "usage:\n  ./install.sh [--force] [PROJECT_DIR]") {
			t.Errorf("install.sh %v: exit %d; want 2 and the usage\n%s", args, code, out)
		}
	}
	sameSnapshot(t, "rejected command lines", installed, snapshot(t, dir))

	if out, code := installSh(dir, "--uninstall"); code != 0 {
		t.Fatalf("install.sh %s --uninstall: exit %d\n%s", dir, code, out)
	}
	sameSnapshot(t, "install.sh --uninstall", before, snapshot(t, dir))
}

// TestInstallScriptColdCache: where Go has not built flowstate before
// (its build cache empty), install.sh says that the build it starts takes
// a minute or two, silent; the build itself is only printed (-n), not
// waited for.
func TestInstallScriptColdCache(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	src := t.TempDir()
	if err := testenv.SourceTree(src); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(src, "install.sh"), "--plugin")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin", "GOCACHE="+t.TempDir(), "GOFLAGS=-n")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "install.sh: building flowstate ") || !strings.Contains(string(out), "takes a minute or two with no output") {
		t.Errorf("install.sh with a cold Go cache does not say what it builds and how long it takes:\n%s", out)
	}
}

// TestInstallScriptWithoutGo: without Go, install.sh uses a flowstate of
// its version on PATH (as npm installs it), refuses one of another
// version, and says how to get one.
func TestInstallScriptWithoutGo(t *testing.T) {
	for _, d := range []string{"/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			t.Skipf("%s/go exists: no PATH with the basic tools lacks Go here", d)
		}
	}
	src := t.TempDir()
	if err := testenv.SourceTree(src); err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command("sh", filepath.Join(src, "scripts", "build"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(strings.Fields(string(want))[1], "v")
	tools := t.TempDir()
	run := func(stamp string) (string, int) {
		t.Helper()
		writeFile(t, filepath.Join(tools, "flowstate"), []byte("#!/bin/sh\n[ \"$1\" = version ] && echo 'flowstate "+stamp+" (commit abc1234)' && exit 0\necho \"flowstate $*\" >>"+filepath.Join(tools, "log")+"\n"))
		if err := os.Chmod(filepath.Join(tools, "flowstate"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(src, "install.sh"), "proj")
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		code, err := testenv.ExitCode(err)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run(version)
	if log, _ := os.ReadFile(filepath.Join(tools, "log")); code != 0 || !strings.Contains(string(log), "flowstate install --from "+src+" proj") {
		t.Errorf("a flowstate %s on PATH: exit %d, calls %q\n%s", version, code, log, out)
	}
	out, code = run("0.0.1")
	if code != 1 || !strings.Contains(out, "is flowstate 0.0.1 (commit abc1234), but this checkout is flowstate "+version+"; not using it") ||
		!strings.Contains(out, "install Go 1.25+ (https://go.dev/dl/), or flowstate "+version+" from the npm packages (README.md") {
		t.Errorf("a flowstate of another version on PATH: exit %d\n%s", code, out)
	}
}

// TestSymlinkedSettings: a settings.json kept in a dotfiles repository
// and linked into the project stays a link; the edits land in its target.
func TestSymlinkedSettings(t *testing.T) {
	dir := project(t, "")
	target := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	orig := readFile(t, filepath.Join("testdata", "settings", "user-hooks.json"))
	writeFile(t, target, orig)
	link := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "install")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a symlink: %v", err)
	}
	if !bytes.Contains(readFile(t, target), []byte("/.claude/bin/flowstate hook session-start")) {
		t.Errorf("hooks not written to the link's target")
	}
	mustRun(t, dir, "uninstall")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("uninstall replaced the symlink: %v", err)
	}
	if !bytes.Equal(readFile(t, target), orig) {
		t.Errorf("uninstall did not restore the target byte for byte")
	}
}

// TestPlantedInstallNeverReachesOutside: a cloned project can carry a
// manifest and links in .claude. A manifest naming files and directories
// outside .claude (with the right hash) makes uninstall refuse (exit 4),
// not delete them; a .claude/commands or .claude/bin that is a link to a
// directory outside makes install and uninstall refuse (exit 2), not
// write or delete there.
func TestPlantedInstallNeverReachesOutside(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	victim := filepath.Join(outside, "victim")
	writeFile(t, victim, []byte("the user's file\n"))
	if err := os.Mkdir(filepath.Join(outside, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(readFile(t, victim))
	for _, rel := range []string{"../../outside/victim", victim, ".claude/../../../outside/victim"} {
		t.Run("manifest "+rel, func(t *testing.T) {
			dir := filepath.Join(root, "p", "q")
			if err := os.RemoveAll(filepath.Join(root, "p")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, ".claude", "flowstate-manifest.json"), []byte(`{"version":"1","files":{"`+rel+`":"`+hex.EncodeToString(sum[:])+`"},"created_dirs":["../../outside/empty"]}`))
			before := snapshot(t, outside)
			_, errs, code := run(t, dir, "uninstall")
			if code != 4 || !strings.Contains(errs, "manifest") {
				t.Errorf("uninstall: exit %d, stderr %q; want 4 naming the manifest", code, errs)
			}
			sameSnapshot(t, "outside the project", before, snapshot(t, outside))
		})
	}
	for _, link := range []string{".claude/commands", ".claude/bin"} {
		t.Run("linked "+link, func(t *testing.T) {
			dir := project(t, "")
			mustRun(t, dir, "install")
			target := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.Rename(filepath.Join(dir, link), target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, target)
			for _, c := range []string{"uninstall", "install"} {
				if _, errs, code := run(t, dir, c); code != 2 || !strings.Contains(errs, "symlink") {
					t.Errorf("%s: exit %d, stderr %q; want 2 naming the link", c, code, errs)
				}
			}
			sameSnapshot(t, "where the link points", before, snapshot(t, target))
		})
	}
}

// TestPlantedBackupNeverRestoredThroughALink: a cloned project whose
// settings.json is a link to one of the user's files, with a planted
// backup and a manifest whose hashes match both: uninstall never copies
// the backup over the user's file.
func TestPlantedBackupNeverRestoredThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), ".bashrc")
	writeFile(t, victim, []byte("# the distribution's default .bashrc\n"))
	evil := []byte("touch /tmp/pwned\n")
	writeFile(t, filepath.Join(dir, ".claude", "bin", "settings.json.flowstate-backup"), evil)
	if err := os.Symlink(victim, filepath.Join(dir, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	writeFile(t, filepath.Join(dir, ".claude", "flowstate-manifest.json"),
		[]byte(`{"version":"1","files":{},"settings":{"sha256":"`+sum(readFile(t, victim))+`","backup_sha256":"`+sum(evil)+`"}}`))
	before := snapshot(t, filepath.Dir(victim))
	run(t, dir, "uninstall")
	sameSnapshot(t, "the file settings.json links to", before, snapshot(t, filepath.Dir(victim)))

	// A .gitignore linked to the same file, and a manifest saying install
	// added all of it: uninstall would cut it empty and delete it.
	if err := os.Remove(filepath.Join(dir, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	added, _ := json.Marshal(string(readFile(t, victim)))
	writeFile(t, filepath.Join(dir, ".claude", "flowstate-manifest.json"),
		[]byte(`{"version":"1","files":{},"gitignore":{"created":true,"added":`+string(added)+`}}`))
	if _, errs, code := run(t, dir, "uninstall"); code != 4 || !strings.Contains(errs, ".gitignore") {
		t.Errorf("uninstall: exit %d, stderr %q; want 4 naming the manifest's .gitignore record", code, errs)
	}
	sameSnapshot(t, "the file .gitignore links to", before, snapshot(t, filepath.Dir(victim)))
}
