// Package install owns putting flowstate into a project's .claude/ and
// taking it out again: commands and agents (de-namespaced for a project),
// the binary, the hooks in settings.json, and a manifest of all of it.
// What a team commits (commands, agents, settings.json, the manifest) is
// the same on every machine; what is one machine's alone (the binary, built
// for its platform, and the backup of settings.json from before the
// install) sits in .claude/bin/, whose own .gitignore keeps git out.
// Uninstall removes exactly what the manifest lists, keeps what the user
// changed since, and puts settings.json back byte for byte when nothing
// else touched it. Doctor says what is wrong with an installation. It
// never touches workflow state under .claude/state/, which keeps itself
// out of git (lib/store), so the project's .gitignore is not edited;
// uninstall still takes out the line older versions added there.
package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/renameio/v2"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

// Paths inside the project, slash-separated as recorded in the manifest.
const (
	manifestRel  = ".claude/flowstate-manifest.json"
	settingsRel  = ".claude/settings.json"
	backupSuffix = ".flowstate-backup" // a user's file --force replaced, kept beside it
	backupRel    = localDir + "/settings.json" + backupSuffix
	legacyBackup = settingsRel + backupSuffix // where versions before 0.2 kept it
	gitignoreRel = ".gitignore"
	stateIgnore  = ".claude/state/"
	// localDir holds what is one machine's: the binary and the backup.
	localDir       = ".claude/bin"
	localGitignore = localDir + "/.gitignore"
	// local is the manifest's mark, in place of a hash, for the files of
	// localDir: they differ from machine to machine (a binary per
	// platform), so the manifest, which a team commits, does not pin
	// them; they are flowstate's, replaced and removed as such.
	local = "local"
)

// Manifest records what install added, so that uninstall removes exactly
// that and doctor can tell which installed files were changed.
type Manifest struct {
	Version   string            `json:"version"`
	Files     map[string]string `json:"files"`                  // project-relative path -> sha256 as installed
	Dirs      []string          `json:"created_dirs,omitempty"` // removed by uninstall when empty
	Settings  SettingsRecord    `json:"settings"`
	Gitignore GitignoreRecord   `json:"gitignore"`
	// Kept lists files install did not write because the user's own file
	// of that name was there (their own /coordinate, say): doctor reports
	// them, since the command or agent of that name is not flowstate's.
	Kept []string `json:"kept_user_files,omitempty"`
	// Backups lists, per installed file, the user's files install
	// --force replaced there, oldest first: uninstall puts the first back.
	Backups map[string][]Backup `json:"backups,omitempty"`

	wrote bool // this install changed something in the project
}

// record writes, for an install that failed part way, the manifest of
// what it did: the files it installed and the backups it made, and
// every file the last install recorded that this one did not get to
// (still there, or gone, which uninstall passes over).
func (m *Manifest) record(dir string, old *Manifest) error {
	for rel, sum := range old.Files {
		if _, ok := m.Files[rel]; !ok {
			m.Files[rel] = sum
		}
	}
	if err := writeManifest(dir, m); err != nil {
		return fmt.Errorf("the install failed part way and its record of what it did could not be written either (%w); look for *%s files beside .claude's files, which are yours", err, backupSuffix)
	}
	return nil
}

// Backup is a user's file that install --force replaced, kept beside it
// as Path (the installed file's path plus backupSuffix, and a number
// when that name was taken).
type Backup struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// SettingsRecord is what install did to .claude/settings.json.
type SettingsRecord struct {
	Created bool   `json:"created,omitempty"`       // there was no settings.json before
	SHA256  string `json:"sha256,omitempty"`        // settings.json as install left it
	Backup  string `json:"backup_sha256,omitempty"` // the backup of the user's settings.json
}

// GitignoreRecord is what an older install did to the project's
// .gitignore, for uninstall to undo.
type GitignoreRecord struct {
	Created bool   `json:"created,omitempty"`
	Added   string `json:"added,omitempty"` // the exact bytes appended
}

// Options of Install.
type Options struct {
	Assets  fs.FS     // the plugin tree: commands/, agents/
	Binary  string    // the flowstate binary to copy to .claude/bin/flowstate
	Version string    // recorded in the manifest
	Force   bool      // also overwrite installed files the user changed
	Log     io.Writer // messages for people
}

// file is one file install wants in the project.
type file struct {
	rel   string
	data  []byte
	mode  fs.FileMode
	local bool // one machine's (localDir): recorded as local, not by hash
}

// Install installs flowstate into dir/.claude. Run again, it updates what
// changed and, when nothing did, writes nothing. Failing part way, it
// still writes the manifest of what it did (record), so that a user's
// file --force replaced is not left without the record uninstall puts
// it back by.
func Install(dir string, o Options) (err error) {
	dir, err = projectDir(dir)
	if err != nil {
		return err
	}
	// Refuse bad settings before writing anything, so a failed install
	// leaves no files without a manifest to remove them.
	switch cur, err := readProjectFile(filepath.Join(dir, settingsRel)); {
	case err == nil:
		if _, err := parseSettings(cur); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	old, err := readManifest(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	m := &Manifest{Version: o.Version, Files: map[string]string{}, Backups: map[string][]Backup{}}
	if old != nil {
		m.Dirs, m.Settings, m.Gitignore = old.Dirs, old.Settings, old.Gitignore
		maps.Copy(m.Backups, old.Backups)
	} else {
		old = &Manifest{Files: map[string]string{}}
	}
	want, err := wanted(o)
	if err != nil {
		return err
	}
	rels := []string{settingsRel, manifestRel, backupRel}
	for _, f := range want {
		rels = append(rels, f.rel)
	}
	if err := refuseLinks(dir, rels); err != nil {
		return err
	}
	defer func() {
		if err != nil && m.wrote {
			err = errors.Join(err, m.record(dir, old))
		}
	}()
	for _, f := range want {
		if err := m.mkdirs(dir, path.Dir(f.rel)); err != nil {
			return err
		}
		if err := installFile(dir, f, old, m, o); err != nil {
			return err
		}
	}
	for rel, sum := range old.Files {
		if _, still := m.Files[rel]; !still {
			m.wrote = true
			removeFile(dir, rel, sum, o.Log)
			m.putBack(dir, rel, o.Log)
		}
	}
	if err := m.installSettings(dir); err != nil {
		return err
	}
	if err := writeManifest(dir, m); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "flowstate: %s/.claude has flowstate %s: %d files, hooks in settings.json (%s)\n", dir, o.Version, len(m.Files), hookNames())
	nextSteps(o.Log, dir, m.Kept)
	return nil
}

// nextSteps tells the user what to do now: the commands are used from
// Claude Code, whose bash blocks find the binary through the SessionStart
// hook; a terminal does not have .claude/bin on its PATH. A command of
// flowstate's name that is the user's own (kept) is not offered as
// flowstate's: the line says what runs flowstate's workflow instead.
func nextSteps(log io.Writer, dir string, kept []string) {
	bin := filepath.Join(dir, filepath.FromSlash(binRel))
	start := "/coordinate DESCRIPTION (also /orchestrate, /supervise, /workflow-status, /workflow-resume, /workflow-approve, /workflow-reject)"
	if slices.Contains(kept, coordinateRel) {
		start = "/orchestrate --scope full-implementation DESCRIPTION (your own /coordinate stays yours: " + keptFix(dir, coordinateRel) + ")"
	}
	fmt.Fprintf(log, `Next:
  In Claude Code, in %s: %s.
  In a terminal, flowstate is %s; to type just flowstate there:
    export PATH=%s:"$PATH"
  flowstate doctor %s checks the installation; flowstate uninstall %s (or ./install.sh --uninstall) removes it.
`, dir, start, bin, statefile.Quote(filepath.Dir(bin)), statefile.Quote(dir), statefile.Quote(dir))
}

// coordinateRel is flowstate's main command, which Next offers first.
const coordinateRel = ".claude/commands/coordinate.md"

// keptFix says how to get flowstate's file where the user's own rel was
// kept, and that --force loses nothing.
func keptFix(dir, rel string) string {
	return fmt.Sprintf("move yours away and install again, or replace it with ./install.sh --force %s, which keeps yours as %s%s and uninstall puts it back", statefile.Quote(dir), rel, backupSuffix)
}

func projectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fail.Usagef("project directory %s does not exist; create it or pass another", abs)
	}
	return abs, nil
}

// wanted lists the files to install: commands, agents and saved
// workflows from the plugin tree, rewritten for a project, and the
// binary.
func wanted(o Options) ([]file, error) {
	var out []file
	for _, top := range []string{"commands", "agents", "workflows"} {
		err := fs.WalkDir(o.Assets, top, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == top {
				return fs.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, ".js") {
				return err
			}
			b, err := fs.ReadFile(o.Assets, p)
			if err != nil {
				return err
			}
			out = append(out, file{rel: ".claude/" + p, data: rewrite(b), mode: 0o644})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read plugin %s: %w", top, err)
		}
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("read the flowstate binary to install: %w", err)
	}
	return append(out,
		file{rel: binRel, data: bin, mode: 0o755, local: true},
		file{rel: localGitignore, data: []byte("# flowstate: this machine's binary and settings backup, never committed\n*\n"), mode: 0o644, local: true},
	), nil
}

// In a project, commands and agents are not namespaced: the plugin's
// /flowstate:x is /x and agent flowstate:x is x, in a task block and in
// a saved workflow's step agent. Compiled on first use: every flowstate
// process would otherwise compile them at start-up.
var (
	agentRef = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`((?:subagent_type|STEP_AGENT)\s*[:=]\s*["']?)flowstate:`)
	})
	commandRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^\w./-])/flowstate:`) })
)

func rewrite(b []byte) []byte {
	b = agentRef().ReplaceAll(b, []byte("${1}"))
	return commandRef().ReplaceAll(b, []byte("${1}/"))
}

// installFile writes f unless the user owns or changed what is there.
func installFile(dir string, f file, old, m *Manifest, o Options) error {
	abs := filepath.Join(dir, filepath.FromSlash(f.rel))
	sum := hash(f.data)
	record := sum
	if f.local {
		record = local
	}
	cur, err := readProjectFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case hash(cur) == sum:
		m.Files[f.rel] = record
		m.adoptBackup(dir, f.rel, old)
		return nil
	case old.Files[f.rel] == local, f.local && old.Files[f.rel] != "":
		// This machine's own file (the binary) that flowstate installed:
		// replaced by this install's.
	case o.Force:
		// What the user wrote there is theirs, even when forced: kept
		// beside it. An older flowstate's file, unchanged, is not.
		if hash(cur) != old.Files[f.rel] {
			if err := m.backUp(dir, f.rel, cur, o.Log); err != nil {
				return err
			}
		}
	case old.Files[f.rel] == "":
		fmt.Fprintf(o.Log, "flowstate: kept your %s (not installed by flowstate): %s stays yours and flowstate's is not installed; %s\n", f.rel, what(f.rel), keptFix(dir, f.rel))
		m.Kept = append(m.Kept, f.rel)
		return nil
	case hash(cur) != old.Files[f.rel]:
		fmt.Fprintf(o.Log, "flowstate: kept %s: you changed it since it was installed; pass --force to replace it\n", f.rel)
		m.Files[f.rel] = old.Files[f.rel]
		return nil
	}
	m.wrote = true
	if err := writeFile(abs, f.data, f.mode); err != nil {
		return err
	}
	m.Files[f.rel] = record
	return nil
}

// adoptBackup records the backup beside rel (rel + backupSuffix) that
// an install of an older flowstate made and then failed before writing
// its manifest: rel holds flowstate's file, which no manifest lists, and
// no backup of it is recorded. Uninstall can then put the user's file
// back.
func (m *Manifest) adoptBackup(dir, rel string, old *Manifest) {
	if old.Files[rel] != "" || len(m.Backups[rel]) > 0 {
		return
	}
	name := rel + backupSuffix
	b, err := readProjectFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return
	}
	m.Backups[rel] = []Backup{{Path: name, SHA256: hash(b)}}
}

// backUp keeps the user's file data, about to be replaced at rel, beside
// it (rel + backupSuffix, or that and a number when the name is taken),
// with the mode it had, and records it for uninstall.
func (m *Manifest) backUp(dir, rel string, data []byte, log io.Writer) error {
	if bs := m.Backups[rel]; len(bs) > 0 && bs[len(bs)-1].SHA256 == hash(data) {
		// Kept already, by an install that failed before replacing it.
		if b, err := readProjectFile(filepath.Join(dir, filepath.FromSlash(bs[len(bs)-1].Path))); err == nil && hash(b) == hash(data) {
			return nil
		}
	}
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	_, mode, err := readWithMode(abs)
	if err != nil {
		return err
	}
	name := rel + backupSuffix
	for n := 2; ; n++ {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name))); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s%s.%d", rel, backupSuffix, n)
	}
	m.wrote = true
	if err := writeFile(filepath.Join(dir, filepath.FromSlash(name)), data, mode); err != nil {
		return err
	}
	m.Backups[rel] = append(m.Backups[rel], Backup{Path: name, SHA256: hash(data)})
	fmt.Fprintf(log, "flowstate: replaced your %s; yours is kept as %s, and uninstall puts it back\n", rel, name)
	return nil
}

// putBack restores, once flowstate's file at rel is gone, the first file
// of the user's that install --force replaced there, and names the later
// ones (their edits of flowstate's file, replaced by a later --force),
// which stay where they are. A backup that is gone or changed since is
// left alone, and so is every backup while rel still exists (flowstate's
// file, changed by the user and so kept).
func (m *Manifest) putBack(dir, rel string, log io.Writer) {
	backups := m.Backups[rel]
	if len(backups) == 0 {
		return
	}
	later := backups[1:]
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	first := filepath.Join(dir, filepath.FromSlash(backups[0].Path))
	b, err := readProjectFile(first)
	_, there := os.Lstat(abs)
	switch {
	case err != nil || hash(b) != backups[0].SHA256:
		fmt.Fprintf(log, "flowstate: did not put back %s: it is missing or was changed since install kept your %s there\n", backups[0].Path, rel)
	case there == nil:
		fmt.Fprintf(log, "flowstate: your %s from before the install is in %s\n", rel, backups[0].Path)
	default:
		if err := os.Rename(first, abs); err != nil {
			fmt.Fprintf(log, "flowstate: could not put back your %s from %s: %v\n", rel, backups[0].Path, err)
			break
		}
		fmt.Fprintf(log, "flowstate: put back your %s\n", rel)
		delete(m.Backups, rel)
	}
	for _, b := range later {
		fmt.Fprintf(log, "flowstate: your %s as a later install --force found it is in %s\n", rel, b.Path)
	}
}

// removeFile deletes an installed file unless it was changed since.
func removeFile(dir, rel, sum string, log io.Writer) {
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	cur, err := readProjectFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		fmt.Fprintf(log, "flowstate: kept %s: %v\n", rel, err)
	case sum != local && hash(cur) != sum:
		fmt.Fprintf(log, "flowstate: kept %s: it was changed after flowstate installed it; delete it yourself if you do not need it\n", rel)
	default:
		if err := os.Remove(abs); err != nil {
			fmt.Fprintf(log, "flowstate: could not remove %s: %v\n", rel, err)
		}
	}
}

// mkdirs creates rel and its missing parents, recording each one created.
func (m *Manifest) mkdirs(dir, rel string) error {
	if rel == "." {
		return nil
	}
	if err := m.mkdirs(dir, path.Dir(rel)); err != nil {
		return err
	}
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.Mkdir(abs, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	m.wrote = true
	if !slices.Contains(m.Dirs, rel) {
		m.Dirs = append(m.Dirs, rel)
		slices.Sort(m.Dirs)
	}
	return nil
}

// installSettings adds the hooks to settings.json, backing up the user's
// file the first time (when it holds no flowstate hooks yet).
func (m *Manifest) installSettings(dir string) error {
	link := filepath.Join(dir, settingsRel)
	abs := realPath(link)
	cur, mode, err := readWithMode(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if m.Settings.SHA256 == "" {
			m.Settings.Created = true
		}
	case err != nil:
		return err
	}
	if cur != nil && m.Settings.SHA256 != "" && hash(cur) != m.Settings.SHA256 {
		// Edited since the last install: neither the backup nor "no file"
		// is these settings without flowstate's hooks any more, so
		// uninstall must take the hooks out rather than restore.
		m.Settings.Backup, m.Settings.Created = "", false
	}
	next, err := addHooks(cur)
	if err != nil {
		return err
	}
	if err := moveLegacyBackup(dir); err != nil {
		return err
	}
	if !bytes.Equal(next, cur) {
		m.wrote = true
		if cur != nil && !hasOurs(cur) {
			if err := writeFile(filepath.Join(dir, filepath.FromSlash(backupRel)), cur, mode); err != nil {
				return err
			}
			m.Settings.Backup = hash(cur)
			m.Settings.Created = false
		}
		if err := writeFile(abs, next, mode); err != nil {
			return err
		}
	}
	m.Settings.SHA256 = hash(next)
	return nil
}

// moveLegacyBackup moves the backup an older version left beside
// settings.json, where git saw it, into localDir.
func moveLegacyBackup(dir string) error {
	old, now := filepath.Join(dir, filepath.FromSlash(legacyBackup)), filepath.Join(dir, filepath.FromSlash(backupRel))
	if _, err := os.Lstat(old); err != nil {
		return nil
	}
	if _, err := os.Lstat(now); err == nil {
		return nil // both: keep both, the user decides
	}
	if err := os.Rename(old, now); err != nil {
		return fmt.Errorf("move %s to %s: %w", legacyBackup, backupRel, err)
	}
	return nil
}

// gitignoreRemoval takes an older install's addition back out of
// .gitignore: cut from the end when it is still there, else the state
// line wherever the user moved it.
func gitignoreRemoval(cur []byte, added string) []byte {
	if next, ok := bytes.CutSuffix(cur, []byte(added)); ok {
		return next
	}
	var next []byte
	for _, l := range strings.SplitAfter(string(cur), "\n") {
		if strings.TrimRight(l, "\r\n") != stateIgnore {
			next = append(next, l...)
		}
	}
	return next
}

// Uninstall removes what the manifest lists, keeping files the user
// changed, and restores settings.json and .gitignore.
func Uninstall(dir string, log io.Writer) error {
	dir, err := projectDir(dir)
	if err != nil {
		return err
	}
	m, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fail.Usagef("no flowstate installation in %s (no %s); nothing to uninstall", dir, manifestRel)
	}
	if err != nil {
		return err
	}
	files := slices.Sorted(maps.Keys(m.Files))
	if err := refuseLinks(dir, append(files, settingsRel, backupRel)); err != nil {
		return err
	}
	if err := m.uninstallSettings(dir, log); err != nil {
		return err
	}
	_, kept := os.Lstat(filepath.Join(dir, filepath.FromSlash(backupRel)))
	for _, rel := range files {
		if rel == localGitignore && kept == nil {
			continue // the backup it keeps out of git is still there
		}
		removeFile(dir, rel, m.Files[rel], log)
		m.putBack(dir, rel, log)
	}
	if err := m.uninstallGitignore(dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, manifestRel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for i := len(m.Dirs) - 1; i >= 0; i-- { // sorted, so children come after parents
		_ = os.Remove(filepath.Join(dir, filepath.FromSlash(m.Dirs[i]))) // only succeeds when empty
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "state")); err == nil {
		fmt.Fprintf(log, "flowstate: kept .claude/state/ (workflow state); delete it if you no longer need it\n")
	}
	fmt.Fprintf(log, "flowstate: uninstalled from %s\n", dir)
	return nil
}

func (m *Manifest) uninstallSettings(dir string, log io.Writer) error {
	link := filepath.Join(dir, settingsRel)
	abs := realPath(link)
	cur, mode, err := readWithMode(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	backup := filepath.Join(dir, filepath.FromSlash(backupRel))
	if _, err := os.Lstat(backup); err != nil {
		backup = filepath.Join(dir, filepath.FromSlash(legacyBackup)) // an older install's
	}
	// Through a link, the backup (a file of the project, which a cloned
	// one can plant with the manifest's hashes to match) is never copied
	// over the file the link names: that could be any of the user's
	// files. Only flowstate's hooks are taken out of it.
	linked := abs != link
	if hash(cur) == m.Settings.SHA256 {
		if m.Settings.Created {
			return os.Remove(link)
		}
		if b, err := readProjectFile(backup); err == nil && hash(b) == m.Settings.Backup && !linked {
			if os.Rename(backup, abs) == nil { // the user's bytes and mode, exactly
				return nil
			}
			// The settings are a symlink into another file system.
			if err := writeFile(abs, b, mode); err != nil {
				return err
			}
			return os.Remove(backup)
		}
	}
	next, err := removeHooks(cur)
	if err != nil {
		return err
	}
	if !bytes.Equal(next, cur) {
		if err := writeFile(abs, next, mode); err != nil {
			return err
		}
	}
	msg := "flowstate: settings.json changed after install, so only flowstate's hooks were taken out of it"
	if linked {
		msg = "flowstate: settings.json is a link, so only flowstate's hooks were taken out of " + abs
	}
	if _, err := os.Stat(backup); err == nil {
		rel, _ := filepath.Rel(dir, backup)
		msg += "; your settings from before the install are in " + filepath.ToSlash(rel)
	}
	fmt.Fprintln(log, msg)
	return nil
}

func (m *Manifest) uninstallGitignore(dir string) error {
	if m.Gitignore.Added == "" {
		return nil
	}
	abs := realPath(filepath.Join(dir, gitignoreRel))
	cur, mode, err := readWithMode(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	next := gitignoreRemoval(cur, m.Gitignore.Added)
	if len(next) == 0 && m.Gitignore.Created {
		return os.Remove(abs)
	}
	return writeFile(abs, next, mode)
}

func readManifest(dir string) (*Manifest, error) {
	b, err := readProjectFile(filepath.Join(dir, manifestRel))
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fail.Invalidf("%s is damaged (%v); restore it from version control or delete it and install again", manifestRel, err)
	}
	if m.Files == nil {
		m.Files = map[string]string{}
	}
	// A cloned project can carry the manifest: uninstall must not be
	// made to delete what it names outside .claude.
	for _, rel := range slices.Concat(slices.Collect(maps.Keys(m.Files)), m.Dirs, m.Kept, slices.Collect(maps.Keys(m.Backups))) {
		if !inClaude(rel) {
			return nil, fail.Invalidf("%s lists %q, which is not a path inside .claude, so flowstate did not write it; restore the manifest from version control or delete it and install again", manifestRel, rel)
		}
	}
	// A backup is only ever beside the file it was replaced by.
	for rel, backups := range m.Backups {
		for _, b := range backups {
			if !inClaude(b.Path) || !strings.HasPrefix(b.Path, rel+backupSuffix) || strings.Contains(strings.TrimPrefix(b.Path, rel+backupSuffix), "/") {
				return nil, fail.Invalidf("%s lists %q as a backup of %s, which flowstate never names so; restore the manifest from version control or delete it and install again", manifestRel, b.Path, rel)
			}
		}
	}
	// An older install appended only the state line to .gitignore; other
	// bytes would have uninstall cut them from (or delete) whatever file
	// a linked .gitignore names.
	if a := m.Gitignore.Added; a != "" && strings.TrimPrefix(a, "\n") != stateIgnore+"\n" {
		return nil, fail.Invalidf("%s says install added %q to .gitignore, which flowstate never adds; restore the manifest from version control or delete it and install again", manifestRel, a)
	}
	return m, nil
}

// inClaude reports whether rel, a manifest's slash-separated path, is a
// clean path inside the project's .claude.
func inClaude(rel string) bool {
	return rel == path.Clean(rel) && (rel == ".claude" || strings.HasPrefix(rel, ".claude/"))
}

// refuseLinks fails (exit 2) when a directory on the way from the
// project dir to the file rel (.claude, .claude/commands, ...) is a
// link: installing or removing through one would write or delete
// outside the project. settings.json and .gitignore themselves may be
// links (dotfiles); their directories may not.
func refuseLinks(dir string, rels []string) error {
	for _, rel := range rels {
		var chain []string
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			chain = append(chain, filepath.Join(dir, filepath.FromSlash(d)))
		}
		slices.Reverse(chain)
		if err := fsx.RefuseSymlinks(chain...); err != nil {
			return err
		}
	}
	return nil
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, manifestRel), append(b, '\n'), 0o644)
}

// writeFile replaces path atomically. Not fsx.WriteFile: that makes files
// 0600 for private state, while these are project files (often committed)
// and the user's settings keep the mode they had.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	if err := renameio.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// realPath follows a symlink, so that a settings.json or .gitignore kept
// elsewhere (a dotfiles repository) is edited where it lives instead of
// being replaced by a copy.
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}

// readWithMode returns a file and its permissions; 0644 for a new file.
func readWithMode(path string) ([]byte, fs.FileMode, error) {
	b, err := readProjectFile(path)
	if err != nil {
		return nil, 0o644, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0o644, err
	}
	return b, st.Mode().Perm(), nil
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// projectFileMax bounds what install and doctor read of a project: its
// settings and the files flowstate installed (the binary is the largest).
const projectFileMax = limit.MaxState

// readProjectFile reads a file of the project, which may come from a
// cloned repository: a FIFO or device there is refused instead of hanging
// install, and so is a file past projectFileMax. A link is followed, as
// realPath follows it for writing (users keep settings.json in their
// dotfiles).
func readProjectFile(path string) ([]byte, error) {
	return fsx.ReadRegular(path, projectFileMax)
}
