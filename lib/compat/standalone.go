package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Checkpoints without a workflow. The original's checkpoint functions
// stood on their own, one file per save under .claude/data/checkpoints
// (CHECKPOINTS_DIR), and so do compat's when the shell names no
// workflow (call.named). The files are schema 2.1 documents, as the
// original's restore_checkpoint migrated them, so every function reads
// and edits them as it does a workflow's checkpoint. Every write takes
// one lock (CHECKPOINTS_DIR/.lock), reads, and replaces the file by
// rename: concurrent increments all count and a reader never sees half a
// file, where the original lost updates to a fixed temp name.

// checkpointsDir is the original's CHECKPOINTS_DIR.
func checkpointsDir(p *store.Project) string {
	return filepath.Join(p.Dir, ".claude", "data", "checkpoints")
}

// lockFiles takes the lock of the checkpoint files compat writes outside
// a workflow, creating CHECKPOINTS_DIR (never through a link).
func lockFiles(p *store.Project) (*fsx.Lock, error) {
	dir := checkpointsDir(p)
	if err := fsx.RefuseSymlinks(filepath.Join(p.Dir, ".claude"), filepath.Dir(dir)); err != nil {
		return nil, err
	}
	if err := fsx.EnsureDir(dir); err != nil {
		return nil, err
	}
	return fsx.Acquire(filepath.Join(dir, ".lock"), p.LockWait)
}

// readFile reads a JSON file compat writes or a caller names: a regular
// file, never through a link, within limit.Max.
func readFile(path string) ([]byte, error) {
	doc, err := fsx.ReadFile(path, limit.Max)
	if err == nil {
		err = checkpoint.CheckJSON(doc, path)
	}
	return doc, err
}

// inFiles refuses a file compat would write that is not in
// CHECKPOINTS_DIR (or a directory of its own below it): a FILE argument
// often comes from a loaded state value, which a cloned repository can
// set, and compat writes no file of the user's elsewhere. The directories
// from the file's up to CHECKPOINTS_DIR must be real ones, never links;
// the file itself is opened without following one.
func inFiles(p *store.Project, path string) error {
	dir := checkpointsDir(p)
	refuse := fail.Usagef("%s is not in %s (CHECKPOINTS_DIR): only the checkpoint files there and workflow checkpoints are written", path, dir)
	top, err := os.Lstat(dir)
	if err != nil || !top.IsDir() {
		return refuse
	}
	for d := filepath.Dir(filepath.Clean(path)); ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return refuse
		}
		if os.SameFile(fi, top) {
			return nil
		}
		if filepath.Dir(d) == d {
			return refuse
		}
	}
}

// editFile replaces the JSON file at path, which must be in
// CHECKPOINTS_DIR (inFiles), by fn's result, under the lock; nothing is
// written when fn fails or changes nothing.
func editFile(p *store.Project, path string, fn func(doc []byte) ([]byte, error)) error {
	if err := inFiles(p, path); err != nil {
		return err // before the lock, which would create CHECKPOINTS_DIR
	}
	l, err := lockFiles(p)
	if err != nil {
		return err
	}
	defer l.Release()
	doc, err := readFile(path)
	if err != nil {
		return err
	}
	out, err := fn(doc)
	if err != nil || bytes.Equal(out, doc) {
		return err
	}
	return fsx.WriteFile(path, out)
}

// migrateFile migrates the checkpoint file at path, which must be in
// CHECKPOINTS_DIR (inFiles), to schema 2.1 in place, keeping the
// original as path.backup (backupFile), as the original's
// migrate_checkpoint_format did; it returns the migrated document. When
// the migrated file cannot be written, the backup just made is removed:
// nothing changed. (lib/store's readLocked does the same for a
// workflow's checkpoint, which has events to commit with it.)
func migrateFile(p *store.Project, path string) ([]byte, error) {
	if err := inFiles(p, path); err != nil {
		return nil, err // before the lock, which would create CHECKPOINTS_DIR
	}
	l, err := lockFiles(p)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	doc, err := readFile(path)
	if err != nil {
		return nil, err
	}
	out, _, err := p.MigrateFile(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return doc, nil
	}
	backup, err := backupFile(path, doc)
	if err != nil {
		return nil, err
	}
	if err := fsx.WriteFile(path, out); err != nil {
		_ = os.Remove(backup) // nobody has seen it: the migration did not happen
		return nil, err
	}
	return out, nil
}

// backupFile writes data to a new file path.backup, or path.backup.2,
// path.backup.3, ... when that is taken: an earlier migration's backup
// (an older original) is never overwritten. It returns the path.
func backupFile(path string, data []byte) (string, error) {
	for n := 1; ; n++ {
		backup := path + ".backup"
		if n > 1 {
			backup += "." + strconv.Itoa(n)
		}
		switch _, err := os.Lstat(backup); {
		case errors.Is(err, fs.ErrNotExist):
			return backup, fsx.WriteFile(backup, data)
		case err != nil:
			return "", err
		}
	}
}

// newFile writes what data makes of its name to a new file dir/base.json,
// or base_2.json, base_3.json, ... when that is taken (the original's
// one-second names overwrote each other), under the lock, and returns
// its path.
func newFile(p *store.Project, dir, base string, data func(name string) ([]byte, error)) (string, error) {
	l, err := lockFiles(p)
	if err != nil {
		return "", err
	}
	defer l.Release()
	if err := fsx.EnsureDir(dir); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name += "_" + strconv.Itoa(n)
		}
		path := filepath.Join(dir, name+".json")
		switch _, err := os.Lstat(path); {
		case errors.Is(err, fs.ErrNotExist):
			b, err := data(name)
			if err != nil {
				return "", err
			}
			return path, fsx.WriteFile(path, b)
		case err != nil:
			return "", err
		}
	}
}

// fileStamp is the original's file time stamp: UTC, to the second.
func fileStamp(now time.Time) string { return now.UTC().Format("20060102_150405") }

// fileNames refuses a workflow type or project name (when given) that is
// no plain file name: they name files, and match them.
func fileNames(typ, project string) error {
	if err := fileName("workflow type", typ); err != nil || project == "" {
		return err
	}
	return fileName("project name", project)
}

// fileName refuses a name part that is no plain file name.
func fileName(what, s string) error {
	if err := store.ValidID(s); err != nil {
		return fail.Invalidf("%s: %w", what, err)
	}
	return nil
}

// newCheckpoint is the document the original's save_checkpoint TYPE
// PROJECT STATE wrote as checkpoint id (its state_machine, phase_data,
// supervisor_state and error_state taken from the state), migrated to
// schema 2.1 as its restore_checkpoint did, with the rest of the state
// applied as SaveLegacyDoc applies it to a workflow's (so tests_passing
// false stays false). migrate is the project's migration of a checkpoint
// file (store.Project.MigrateFile).
func newCheckpoint(id, typ, project string, state []byte, stat Stat, now time.Time, migrate func([]byte) ([]byte, string, error)) ([]byte, error) {
	if err := CheckLegacyState(state); err != nil {
		return nil, err
	}
	st := gjson.ParseBytes(state)
	ts := checkpoint.Timestamp(now)
	skeleton := map[string]any{
		checkpoint.PathSchemaVersion: "2.1", "checkpoint_id": id, "workflow_type": typ, checkpoint.PathProjectName: project,
		checkpoint.PathDescription: st.Get(checkpoint.PathDescription).String(), checkpoint.PathCreatedAt: ts, checkpoint.PathUpdatedAt: ts,
		checkpoint.PathStatus: checkpoint.InProgress, checkpoint.PathStateMachine: nil,
		checkpoint.PathMetadata: map[string]any{"checkpoint_id": id, "project_name": project, "created_at": ts, "updated_at": ts},
	}
	if s := st.Get(checkpoint.PathStatus); s.Type == gjson.String {
		skeleton[checkpoint.PathStatus] = s.Str // the original's state.status // "in_progress"; Migrate checks it
	}
	// Sections the original took from the state, under the checkpoint's
	// names; in a workflow they are flowstate's, here the file's own.
	for _, k := range []string{checkpoint.PathStateMachine, checkpoint.PathPhaseData, checkpoint.PathSupervisorState, checkpoint.PathErrorState} {
		if v := st.Get(k); v.IsObject() {
			skeleton[k] = json.RawMessage(v.Raw)
		}
	}
	raw, err := checkpoint.Encode(skeleton)
	if err != nil {
		return nil, err
	}
	doc, _, err := migrate(raw)
	if err != nil {
		return nil, err
	}
	return SaveLegacyDoc(doc, state, typ, project, stat, now)
}

// saveFile is save_checkpoint TYPE PROJECT STATE without a workflow: a
// new file TYPE_PROJECT_STAMP.json in CHECKPOINTS_DIR; its path.
func (c *call) saveFile(typ, project string, state []byte) (string, error) {
	if err := fileNames(typ, project); err != nil {
		return "", err
	}
	p, err := c.proj()
	if err != nil {
		return "", err
	}
	if err := CheckLegacyState(state); err != nil {
		return "", err // before the lock
	}
	// The checkpoint's id is its file's name.
	return newFile(p, checkpointsDir(p), typ+"_"+project+"_"+fileStamp(c.Now()), func(id string) ([]byte, error) {
		return newCheckpoint(id, typ, project, state, FileStat(c.Cwd), c.Now(), p.MigrateFile)
	})
}

// savedFile is the newest checkpoint file of TYPE (and PROJECT) in
// CHECKPOINTS_DIR, by time and then name, migrated in place as the
// original's restore_checkpoint did. A file of another type whose name
// only starts like it (the original's prefix match) is not taken.
func (c *call) savedFile(typ, project string) (string, []byte, error) {
	if err := fileNames(typ, project); err != nil {
		return "", nil, err
	}
	p, err := c.proj()
	if err != nil {
		return "", nil, err
	}
	pattern := typ + "_*.json"
	if project != "" {
		pattern = typ + "_" + project + "_*.json"
	}
	names, err := filepath.Glob(filepath.Join(checkpointsDir(p), pattern))
	if err != nil {
		return "", nil, err
	}
	type cand struct {
		path  string
		mtime time.Time
	}
	var cands []cand
	for _, path := range names {
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		doc, err := readFile(path)
		if err != nil || !ofType(doc, typ) {
			continue
		}
		cands = append(cands, cand{path, fi.ModTime()})
	}
	if len(cands) == 0 {
		return "", nil, fail.Usagef("No checkpoint found for workflow type: %s%s in %s", typ, ofProject(project), checkpointsDir(p))
	}
	newest := slices.MaxFunc(cands, func(a, b cand) int {
		if d := a.mtime.Compare(b.mtime); d != 0 {
			return d
		}
		return strings.Compare(a.path, b.path)
	})
	doc, err := migrateFile(p, newest.path)
	return newest.path, doc, err
}

// ofType reports whether doc, whose file name matched TYPE_*, is a save
// of typ: its workflow_type says so when it has one (an older checkpoint
// has not, and its project_name may differ from its file's).
func ofType(doc []byte, typ string) bool {
	t := gjson.GetBytes(doc, "workflow_type")
	return !t.Exists() || t.String() == typ
}

func ofProject(project string) string {
	if project == "" {
		return ""
	}
	return " and project " + project
}

// deleteFiles removes every checkpoint file of TYPE and PROJECT, as the
// original's checkpoint_delete did; it returns how many.
func (c *call) deleteFiles(typ, project string) (int, error) {
	if err := fileNames(typ, project); err != nil {
		return 0, err
	}
	p, err := c.proj()
	if err != nil {
		return 0, err
	}
	l, err := lockFiles(p)
	if err != nil {
		return 0, err
	}
	defer l.Release()
	names, err := filepath.Glob(filepath.Join(checkpointsDir(p), typ+"_"+project+"_*.json"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, path := range names {
		if doc, err := readFile(path); err == nil && ofType(doc, typ) {
			if err := os.Remove(path); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// commandFile is the design's checkpoint of COMMAND without a workflow:
// CHECKPOINTS_DIR/COMMAND.json.
func (c *call) commandFile(command string) (*store.Project, string, error) {
	name := strings.TrimPrefix(command, "/")
	if err := fileName("command", name); err != nil {
		return nil, "", err
	}
	p, err := c.proj()
	if err != nil {
		return nil, "", err
	}
	return p, filepath.Join(checkpointsDir(p), name+".json"), nil
}

// saveCommandFile is the design's save_checkpoint COMMAND JSON without a
// workflow: the file is replaced by JSON, as the design's did.
func (c *call) saveCommandFile(command string, data []byte) error {
	if err := checkpoint.CheckJSON(data, "the checkpoint"); err != nil {
		return err
	}
	p, path, err := c.commandFile(command)
	if err != nil {
		return err
	}
	l, err := lockFiles(p)
	if err != nil {
		return err
	}
	defer l.Release()
	return fsx.WriteFile(path, append(bytes.TrimSpace(data), '\n'))
}

// tmpFile is a file the original's state-persistence.sh kept in
// .claude/tmp: NAME.json of save_json_checkpoint, NAME.jsonl of
// append_jsonl_log. Like the original, it needs CLAUDE_PROJECT_DIR, which
// loading compat sets.
func (c *call) tmpFile(name, ext string) (string, error) {
	if !namedCheckpoint().MatchString(name) {
		return "", fail.Invalidf("name %q must match %s", name, namedCheckpoint())
	}
	if c.Getenv("CLAUDE_PROJECT_DIR") == "" {
		return "", fail.Usagef("ERROR: CLAUDE_PROJECT_DIR not set (eval \"$(flowstate compat)\" sets it)")
	}
	p, err := c.proj()
	if err != nil {
		return "", err
	}
	if err := ensureTmp(p); err != nil {
		return "", err
	}
	return filepath.Join(tmpDir(p), name+ext), nil
}
