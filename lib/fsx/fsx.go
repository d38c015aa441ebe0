// Package fsx owns the way to every file flowstate keeps: one open that
// never follows a symlink, never blocks and takes only regular files
// (OpenFile), an exclusive lock with a bounded wait that stays one
// writer's whatever happens to its file (lock.go), and atomic replacement (temp file beside the target, fsync,
// rename). A cloned repository can carry anything in .claude/state, so
// nothing here trusts what it finds there. It knows nothing about what
// the files contain.
package fsx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
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
func WriteFile(path string, data []byte) error {
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

// Journal is an append-only file of lines (events.jsonl, logs/, the
// state file) open for appending. Opening it is where its torn tail is
// cut; opening it before any other write of a change lets a refused
// journal (a symlink, a FIFO) stop the change before it starts.
type Journal struct {
	f    *os.File
	size int64
}

// OpenJournal opens path for appending (created 0600 when missing),
// through OpenFile. If the file ends in a torn line (a writer was killed
// mid-write), the tail is cut, so the next line does not glue onto
// garbage. Callers hold the lock and Close the journal.
func OpenJournal(path string) (*Journal, error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return nil, err
	}
	size, err := cutTornTail(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("append %s: %w", path, err)
	}
	return &Journal{f: f, size: size}, nil
}

// Append appends one line in a single write(2) with O_APPEND, so
// concurrent readers see either none or all of it.
//
// No fsync: this is for append-only journals (events.jsonl, logs/) that
// nothing restores state from. Atomicity does not need one (a single
// O_APPEND write, and readers skip a torn line), and the data is in the
// page cache for every later process at once; only a power loss or
// kernel crash can drop the last lines, which costs history, never
// state. The fsync was ~0.26 ms of every sm-transition.
func (j *Journal) Append(line []byte) error {
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := j.f.Write(buf); err != nil {
		return fmt.Errorf("append %s: %w", j.f.Name(), err)
	}
	// The caller's lock keeps other writers out, so the size is known
	// without another stat.
	j.size += int64(len(buf))
	return nil
}

// Close closes the journal's file.
func (j *Journal) Close() error { return j.f.Close() }

// AppendLine appends one line to the journal at path (OpenJournal, then
// Append). Callers hold the lock.
func AppendLine(path string, line []byte) error {
	j, err := OpenJournal(path)
	if err != nil {
		return err
	}
	defer j.Close()
	return j.Append(line)
}

// ErrFull is AppendLineDurable's refusal to grow a file past its bound.
var ErrFull = errors.New("the line would take the file past its size bound")

// AppendLineDurable is AppendLine followed by fsync, for the key/value
// state file. Its single-pair append stands in for the temp-file-and-
// rename write of a compaction, so it keeps that write's durability: a
// value state-append acknowledged (exit 0) must survive a power loss
// like one checkpoint-set wrote, or a later command could find its
// checkpoint advanced past a value that is gone.
//
// It returns the file's size after the append and reads its first bytes
// into head (n of them), from the file already open: the state file's
// header and size decide whether to compact, and a second open and stat
// would cost each state-append more than the decision. A line that would
// take the file past bound bytes is not written: ErrFull, with the size.
func AppendLineDurable(path string, line, head []byte, bound int64) (size int64, n int, err error) {
	j, err := OpenJournal(path)
	if err != nil {
		return 0, 0, err
	}
	defer j.Close()
	if j.size+int64(len(line))+1 > bound {
		return j.size, 0, ErrFull
	}
	if err := j.Append(line); err != nil {
		return 0, 0, err
	}
	if err := j.f.Sync(); err != nil {
		return 0, 0, fmt.Errorf("append %s: %w", path, err)
	}
	if n, err = j.f.ReadAt(head, 0); err != nil && err != io.EOF {
		return 0, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return j.size, n, nil
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

// maxTornTail bounds how far back cutTornTail looks for the last
// newline: no append writes a longer line than a state value of
// limit.Max bytes, every one escaped. A longer unterminated tail was not
// written by flowstate; scanning a gigabyte of it under the lock would
// be the cost a hostile file imposes.
const maxTornTail = 2*limit.Max + 4096

// cutTornTail truncates f after its last newline when its last byte is
// not one, and returns f's size after that.
func cutTornTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, err
	}
	size := st.Size()
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	// Scan back in blocks for the last newline.
	const block = 64 << 10
	buf := make([]byte, block)
	for end := size; end > 0; {
		if size-end > maxTornTail {
			return 0, fail.Invalidf("the file ends in more than %d MiB without a newline, which flowstate never writes; move it away", maxTornTail>>20)
		}
		start := max(end-block, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			cut := start + int64(i) + 1
			return cut, f.Truncate(cut)
		}
		end = start
	}
	return 0, f.Truncate(0)
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
