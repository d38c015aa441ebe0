// Package fsx owns the way to every file flowstate keeps: one open that
// never follows a symlink, never blocks and takes only regular files
// (OpenFile), an exclusive lock with a bounded wait that stays one
// writer's whatever happens to its file (lock.go), and atomic replacement (temp file beside the target, fsync,
// rename). A cloned repository can carry anything in .claude/state, so
// nothing here trusts what it finds there. It knows nothing about what
// the files contain.
package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Permissions of everything flowstate creates: state is private to the user.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// WriteFile replaces path atomically: temp file in the same directory
// (so the rename never crosses a file system), fsync, rename, 0600.
// NewPendingFile rather than renameio.WriteFile: the latter adds
// WithExistingPermissions, an lstat of the target per write that buys
// nothing when every file is 0600 anyway. With WithTempDir there is no
// probing for a temp dir either: open(O_EXCL), fstat, write, fsync,
// close, rename.
//
// A read-only file at path is refused (writable): rename(2) would
// replace it whatever its mode.
func WriteFile(path string, data []byte) error {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		if err := writable(path, st.Mode()); err != nil {
			return err
		}
	}
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(FilePerm))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer t.Cleanup()
	if _, err := t.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := t.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteNew creates path with data: no temp file, no fsync. Only for a
// file in a directory no reader can see yet (a workflow is visible once
// its checkpoint is renamed in) whose loss in a power failure is harmless.
// The empty state file of a new workflow is one: an empty or missing
// state file reads as no keys. That spares sm-init one fsync and rename.
func WriteNew(path string, data []byte) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RemoveStrayTemps deletes the temp files WriteFile leaves in dir when its
// process is killed between creating and renaming one (renameio names
// them "." + the target's name + a random number) that were last
// modified before cutoff. A zero cutoff removes them all: for a caller
// holding the lock every writer into dir takes (store's compaction), or
// for a workflow nobody writes to any more, since no writer is in flight.
// Others (the session-start sweep) pass a cutoff older than any write
// could take. It costs a directory read, so callers run it on rare paths.
// A missing dir has nothing to remove; a linked one is refused (ReadDir).
func RemoveStrayTemps(dir string, cutoff time.Time) error {
	entries, err := ReadDir(dir)
	if err != nil {
		return fmt.Errorf("remove stray temp files: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !isTempName(e.Name()) {
			continue // most entries: no stat for them
		}
		info, err := e.Info()
		if err != nil || !stray(e.Name(), info.Mode(), info.ModTime(), cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stray temp file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// stray is a temp file (by name) that is a regular file and was last
// written before cutoff, if there is one: younger ones may belong to a
// writer in flight.
func stray(name string, mode fs.FileMode, modified, cutoff time.Time) bool {
	return isTempName(name) && mode.IsRegular() && (cutoff.IsZero() || modified.Before(cutoff))
}

// isTempName reports a WriteFile temp file name: a dot, a name, digits.
func isTempName(name string) bool {
	if len(name) < 3 || name[0] != '.' {
		return false
	}
	last := name[len(name)-1]
	return last >= '0' && last <= '9'
}

// ReadDir lists one of flowstate's own directories, refusing (exit 2) a
// link or anything but a directory there: a sweep that lists a linked
// sessions/ or runs/ would delete what it finds in the directory the
// link names, outside the project. Callers check the directories above
// dir (the state directory) the same way. A missing dir has no entries.
func ReadDir(dir string) ([]fs.DirEntry, error) {
	if exists, err := realDir(dir); err != nil || !exists {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return entries, nil
}

// EnsureDir creates dir (and parents) with 0700 and refuses a directory
// that is a symlink, since state must not be redirected elsewhere. An
// existing directory costs one lstat.
func EnsureDir(dir string) error {
	exists, err := realDir(dir)
	if err != nil || exists {
		return err
	}
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return fmt.Errorf("create %s: %w (check that the project directory is writable)", dir, err)
	}
	// Again: a link put there since the first look would have been
	// followed by MkdirAll, which accepts a link to a directory.
	_, err = realDir(dir)
	return err
}

// RefuseSymlinks fails when one of dirs is a symlink (dangling or not) or
// no directory: through a link, every read and write of the state would
// land outside the project. A dir that does not exist passes.
func RefuseSymlinks(dirs ...string) error {
	for _, d := range dirs {
		if _, err := realDir(d); err != nil {
			return err
		}
	}
	return nil
}

// realDir is the one symlink check: it lstats dir, never following a
// link, so a dangling link is caught too (MkdirAll would fail on it with
// a puzzling "file exists"). exists is false when nothing is there.
func realDir(dir string) (exists bool, err error) {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("stat %s: %w", dir, err)
	case st.Mode()&fs.ModeSymlink != 0 || !st.IsDir():
		return false, fail.Usagef("%s is a symlink or not a directory; flowstate keeps state only in a real directory inside the project (replace it with one and retry)", dir)
	}
	return true, nil
}
