package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/hook"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Finding is one check of doctor: what was found and, when it is a
// problem (or, with Warn, something that works but should not stay so),
// how to fix it.
type Finding struct {
	OK   bool
	Warn bool
	What string
	Fix  string
}

// Report is the findings as doctor prints them, a line each (ok, WARN,
// FAIL) with the fix below, and how many are problems.
func Report(findings []Finding) (text string, problems int) {
	var b strings.Builder
	for _, f := range findings {
		switch {
		case f.OK:
			fmt.Fprintf(&b, "ok   %s\n", f.What)
			continue
		case f.Warn:
			fmt.Fprintf(&b, "WARN %s\n", f.What)
		default:
			problems++
			fmt.Fprintf(&b, "FAIL %s\n", f.What)
		}
		if f.Fix != "" {
			fmt.Fprintf(&b, "     fix: %s\n", f.Fix)
		}
	}
	return b.String(), problems
}

// DoctorOptions of Doctor.
type DoctorOptions struct {
	Version   string // the running binary's `flowstate version` line, to spot an installed one of another build
	PluginDir string // a plugin checkout to check as well; "" for none
	// ClaudeConfig is Claude Code's user configuration directory
	// (CLAUDE_CONFIG_DIR, else ~/.claude), whose settings.json may enable
	// the flowstate plugin; "" when unknown.
	ClaudeConfig string
	Now          time.Time
}

// Doctor checks the installation in dir (and the plugin dir, if given)
// and says what is wrong and how to fix it.
func Doctor(dir string, o DoctorOptions) ([]Finding, error) {
	dir, err := projectDir(dir)
	if err != nil {
		return nil, err
	}
	d := &doctor{dir: dir, o: o}
	m, err := readManifest(dir)
	switch {
	case err == nil:
		d.binary()
		d.settings()
		d.files(m)
		d.kept(m)
		d.pluginToo()
	case errors.Is(err, fs.ErrNotExist):
		if o.PluginDir == "" {
			d.bad(fmt.Sprintf("flowstate is not installed in %s/.claude (no %s)", dir, manifestRel),
				fmt.Sprintf("run ./install.sh %s, or `flowstate install %s`; or use the plugin (claude --plugin-dir)", dir, dir))
		}
	default:
		d.bad(err.Error(), "restore it from version control, or delete it and run `flowstate install "+dir+"`")
	}
	d.stateDir()
	if o.PluginDir != "" {
		d.plugin()
	}
	return d.out, nil
}

type doctor struct {
	dir string
	o   DoctorOptions
	out []Finding
}

func (d *doctor) ok(what string)       { d.out = append(d.out, Finding{OK: true, What: what}) }
func (d *doctor) bad(what, fix string) { d.out = append(d.out, Finding{What: what, Fix: fix}) }
func (d *doctor) warn(what, fix string) {
	d.out = append(d.out, Finding{Warn: true, What: what, Fix: fix})
}

func (d *doctor) reinstall() string {
	return "run `flowstate install " + d.dir + "` (or ./install.sh " + d.dir + ")"
}

// binary runs the installed binary's `version` to see that it works and
// is the same version as this one.
func (d *doctor) binary() {
	bin := filepath.Join(d.dir, binRel)
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		d.bad(binRel+" is missing or not executable: the hooks and bash blocks cannot run it", d.reinstall())
		return
	}
	installed, err := versionOf(bin)
	if err != nil {
		d.bad(fmt.Sprintf("%s does not run (%v)", binRel, err), d.reinstall())
		return
	}
	if installed != d.o.Version {
		d.bad(fmt.Sprintf("%s is %q, but this is %s", binRel, installed, d.o.Version), d.reinstall())
		return
	}
	d.ok(binRel + ": " + installed)
}

func (d *doctor) settings() {
	b, err := readProjectFile(filepath.Join(d.dir, settingsRel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.bad(settingsRel+" is missing: no hooks run", d.reinstall())
		return
	case err != nil:
		d.bad(err.Error(), "then "+d.reinstall())
		return
	}
	if _, err := parseSettings(b); err != nil {
		d.bad(err.Error(), "fix the JSON, then "+d.reinstall())
		return
	}
	if missing := missingHooks(b); len(missing) > 0 {
		d.bad(fmt.Sprintf("%s lacks flowstate's %s hook(s): bash blocks will not find flowstate or the project", settingsRel, strings.Join(missing, " and ")), d.reinstall())
		return
	}
	d.ok(settingsRel + ": flowstate's hooks present (" + hookNames() + ")")
}

// files reports installed files that are missing or changed since.
func (d *doctor) files(m *Manifest) {
	var missing, changed []string
	for _, rel := range slices.Sorted(maps.Keys(m.Files)) {
		if rel == binRel || m.Files[rel] == local {
			continue // the binary is checked by running it; the rest of localDir is one machine's
		}
		b, err := readProjectFile(filepath.Join(d.dir, filepath.FromSlash(rel)))
		switch {
		case err != nil:
			missing = append(missing, rel)
		case hash(b) != m.Files[rel]:
			changed = append(changed, rel)
		}
	}
	if len(missing) > 0 {
		d.bad("installed files are missing: "+strings.Join(missing, ", "), d.reinstall())
	}
	if len(changed) > 0 {
		d.bad("installed files were changed since (install and uninstall keep them): "+strings.Join(changed, ", "),
			"keep your versions, or run `flowstate install --force "+d.dir+"` to restore flowstate's (yours are kept as FILE"+backupSuffix+", and uninstall puts them back)")
	}
	if len(missing)+len(changed) == 0 {
		d.ok(fmt.Sprintf("%d installed files unchanged (flowstate %s)", len(m.Files), m.Version))
	}
}

// kept reports the user's own files that install left in place of
// flowstate's: a command or agent of that name is not flowstate's.
func (d *doctor) kept(m *Manifest) {
	for _, rel := range m.Kept {
		if _, err := os.Stat(filepath.Join(d.dir, filepath.FromSlash(rel))); err != nil {
			d.bad(rel+" is missing: flowstate's was not installed, since your own file was there then", d.reinstall())
			continue
		}
		d.warn(rel+" is your own file, not flowstate's (install kept it): "+what(rel)+" is not flowstate's", keptFix(d.dir, rel))
	}
}

// what names what a file under .claude is to Claude Code: /name for a
// command, the agent name for an agent.
func what(rel string) string {
	name := strings.TrimSuffix(path.Base(rel), ".md")
	if strings.HasPrefix(rel, ".claude/commands/") {
		return "/" + name
	}
	return "the agent " + name
}

// pluginToo warns when the flowstate plugin is active beside the project
// install: Claude Code then has every command twice (/coordinate and
// /flowstate:coordinate) and runs every hook twice.
func (d *doctor) pluginToo() {
	where := ""
	switch {
	case d.o.PluginDir != "":
		where = "the plugin at " + d.o.PluginDir + " is loaded too"
	default:
		where = enabledPlugin(d.o.ClaudeConfig, d.dir)
	}
	if where == "" {
		return
	}
	d.warn("flowstate is installed in "+d.dir+"/.claude and "+where+": every command is there twice (/coordinate and /flowstate:coordinate) and every hook runs twice",
		"keep one: ./install.sh --uninstall "+d.dir+", or remove the plugin (/plugin uninstall "+pluginName+" in Claude Code, or drop --plugin-dir)")
}

// pluginName is the plugin's name (.claude-plugin/plugin.json): enabled
// plugins are keyed NAME@MARKETPLACE.
const pluginName = "flowstate"

// enabledPlugin says which settings file enables the flowstate plugin for
// the project, "" when none does: the user's, the project's and the
// project's local settings, a later one overriding an earlier one.
func enabledPlugin(claudeConfig, dir string) string {
	files := []string{filepath.Join(dir, settingsRel), filepath.Join(dir, ".claude", "settings.local.json")}
	if claudeConfig != "" {
		files = append([]string{filepath.Join(claudeConfig, "settings.json")}, files...)
	}
	enabled := map[string]string{} // plugin id -> the file that enabled it; deleted when disabled
	for _, f := range files {
		b, err := readProjectFile(f)
		if err != nil {
			continue
		}
		gjson.GetBytes(b, "enabledPlugins").ForEach(func(k, v gjson.Result) bool {
			if name, _, _ := strings.Cut(k.String(), "@"); name == pluginName {
				if v.Type == gjson.True {
					enabled[k.String()] = f
				} else {
					delete(enabled, k.String())
				}
			}
			return true
		})
	}
	ids := slices.Sorted(maps.Keys(enabled))
	if len(ids) == 0 {
		return ""
	}
	return "the plugin " + ids[0] + " is enabled in " + enabled[ids[0]]
}

// stateDir checks that workflow state is private and writable, and that
// no stale session pointers pile up (which means SessionStart never runs).
func (d *doctor) stateDir() {
	p, err := store.ProjectAt(func(string) string { return "" }, d.dir)
	if err != nil {
		d.bad(err.Error(), "")
		return
	}
	st, err := os.Lstat(p.StateDir)
	if errors.Is(err, fs.ErrNotExist) {
		d.ok(".claude/state/ does not exist yet (created by the first workflow)")
		return
	}
	switch {
	case err != nil:
		d.bad(err.Error(), "")
		return
	case st.Mode()&fs.ModeSymlink != 0 || !st.IsDir():
		d.bad(p.StateDir+" is a symlink or not a directory: flowstate refuses to use it", "replace it with a real directory: rm "+p.StateDir+" && mkdir -m 700 "+p.StateDir)
		return
	case st.Mode().Perm()&0o077 != 0:
		d.bad(fmt.Sprintf("%s has mode %v: other users can read workflow state", p.StateDir, st.Mode().Perm()), "chmod 700 "+p.StateDir)
	case syscall.Access(p.StateDir, 2 /* W_OK */) != nil:
		d.bad(p.StateDir+" is not writable by you: every flowstate write will fail", "fix its owner or mode: chown -R $(id -u) "+p.StateDir+" && chmod 700 "+p.StateDir)
	default:
		d.ok(".claude/state/ is private and writable")
	}
	d.stateGitignore(p)
	stale, err := hook.StalePointers(p, d.o.Now)
	if err != nil {
		d.bad("session pointers: "+err.Error(), "")
		return
	}
	if len(stale) > 0 {
		var ids []string
		for _, s := range stale {
			ids = append(ids, s.Session+" ("+s.Why+")")
		}
		d.bad(fmt.Sprintf("%d stale session pointers: %s; the SessionStart hook clears them, so it does not seem to run", len(stale), strings.Join(ids, ", ")),
			"check the hooks above; the pointers are safe to delete, e.g. rm "+p.SessionPointer(stale[0].Session))
	}
}

// stateGitignore checks that workflow state stays out of git: through
// the state directory's own .gitignore (lib/store writes it), or a line of
// the project's.
func (d *doctor) stateGitignore(p *store.Project) {
	if b, err := readProjectFile(p.GitignorePath()); err == nil && slices.Contains(strings.Split(string(b), "\n"), "*") {
		d.ok(".claude/state/.gitignore keeps workflow state out of git")
		return
	}
	if b, _ := readProjectFile(filepath.Join(d.dir, gitignoreRel)); ignoresStateDir(b) {
		d.ok(".gitignore keeps workflow state (" + stateIgnore + ") out of git")
		return
	}
	d.bad(p.GitignorePath()+" is missing or changed: workflow state could be committed",
		"write it again: echo '*' > "+p.GitignorePath()+" (flowstate writes it when it creates the state directory)")
}

// plugin checks a plugin checkout (claude --plugin-dir DIR).
func (d *doctor) plugin() {
	dir := d.o.PluginDir
	if _, err := os.Stat(filepath.Join(dir, "hooks", "hooks.json")); err != nil {
		d.bad(dir+" has no hooks/hooks.json: it is not the flowstate plugin", "point --plugin-dir at the flowstate repository")
		return
	}
	bin := filepath.Join(dir, "bin", "flowstate")
	rebuild := "run ./install.sh --plugin in " + dir
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		d.bad("plugin "+dir+" has no bin/flowstate: bash blocks find flowstate only if the SessionStart hook finds one of the plugin's version on PATH (the npm packages: README, \"Install and run\") or can build one (Go)", rebuild)
		return
	}
	have, err := versionOf(bin)
	if err != nil {
		d.bad(fmt.Sprintf("plugin %s: bin/flowstate does not run (%v)", dir, err), rebuild)
		return
	}
	// What the checkout builds now, as hooks/run-hook compares it; a
	// plugin without scripts/build is compared with this binary instead.
	want, from := d.o.Version, "this is"
	if b, err := versionOf("sh", filepath.Join(dir, "scripts", "build"), "--version"); err == nil {
		want, from = b, "the checkout builds"
	}
	if !sameBuild(have, want) {
		d.bad(fmt.Sprintf("plugin %s: bin/flowstate is %q, but %s %s (a git pull since the build?)", dir, have, from, want),
			rebuild+" (the SessionStart hook rebuilds it too, when Go is installed)")
		return
	}
	d.ok("plugin " + dir + ": bin/flowstate: " + have)
}

// versionOf runs `NAME ARGS...`, by default `NAME version`, and returns
// its output's first line.
func versionOf(name string, args ...string) (string, error) {
	if len(args) == 0 {
		args = []string{"version"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// sameBuild is true when have, a `flowstate version` line, is the build
// want names. A want whose commit is unknown (built outside a git checkout)
// names a version only, as hooks/run-hook decides.
func sameBuild(have, want string) bool {
	if base, ok := strings.CutSuffix(want, " (commit unknown)"); ok {
		return strings.HasPrefix(have, base+" (commit ")
	}
	return have == want
}

// ignoresStateDir is true when a line of the .gitignore content ignores
// the state directory, itself or through .claude/.
func ignoresStateDir(gitignore []byte) bool {
	for _, line := range strings.Split(string(gitignore), "\n") {
		if ignoresState(line) {
			return true
		}
	}
	return false
}

func ignoresState(line string) bool {
	switch strings.TrimSpace(line) {
	case stateIgnore, "/" + stateIgnore, ".claude/state", "/.claude/state", ".claude/", "/.claude/", ".claude", "/.claude":
		return true
	}
	return false
}
