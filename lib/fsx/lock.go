package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// DefaultWait bounds how long a writer waits for a lock before exit 5.
const DefaultWait = 10 * time.Second

// Lock is a held exclusive lock: flock(2) on the directory that holds the
// lock file, then on the lock file itself.
//
// A flock belongs to an inode, not to a name. When the lock file is
// deleted or replaced while a writer holds it (by hand, a cleanup script,
// a sync tool), the next writer creates or finds another inode at the
// path and locks that: two writers at once, and the slower one's update
// is lost. A directory holding files cannot be deleted, nor replaced by
// a rename, so the lock on it stays one lock whatever happens to the
// file; moving the whole directory away moves the workflow's files with
// it. The file's lock is what others see and can take: an older
// flowstate that locks only the file, or a person holding it with
// flock(1).
//
// After each flock the descriptor must still be what is at its path
// (same device and inode). If it is not (the file was removed or
// replaced between the open and the flock), that lock means nothing: it
// is dropped and taken again on what is there now.
type Lock struct{ dir, file *flock.Flock }

// waited is how long this process waited for locks, for Waited.
var waited atomic.Int64

// Waited returns how long this process has waited for locks in all:
// with FLOWSTATE_LOCK_TIMING set, each command says on stderr how long
// it waited (bench/cmd/fsload measures lock waits with it).
func Waited() time.Duration { return time.Duration(waited.Load()) }

// Acquire takes the exclusive lock of path (created 0600 if missing) and
// of its directory, waiting at most wait in all, then fails with exit 5
// naming the file. The wait is a blocking flock(2), not polling: the
// kernel wakes waiters as soon as the holder releases, so 32 writers do
// not starve each other.
//
// The lock file is opened like every other file (OpenFile's flags): a
// dangling symlink at path must not make flowstate create the file it
// names, and a FIFO there must not block the open. flock(2) ignores
// O_NONBLOCK. What was locked must be a regular file, else the lock
// means nothing.
func Acquire(path string, wait time.Duration) (*Lock, error) {
	start := time.Now()
	defer func() { waited.Add(int64(time.Since(start))) }()
	deadline := start.Add(wait)
	dir, err := lockAt(filepath.Dir(path), os.O_RDONLY|syscall.O_DIRECTORY, path, deadline, wait)
	if err != nil {
		return nil, err
	}
	file, err := lockAt(path, os.O_RDONLY|os.O_CREATE, path, deadline, wait)
	if err != nil {
		_ = dir.Unlock()
		return nil, err
	}
	return &Lock{dir: dir, file: file}, nil
}

// lockAt takes the flock on what is at p (opened with flag and safeFlags)
// by deadline, and again whenever what it locked is no longer at p. name
// is the lock file, for messages.
func lockAt(p string, flag int, name string, deadline time.Time, wait time.Duration) (*flock.Flock, error) {
	for {
		fl := flock.New(p, flock.SetPermissions(FilePerm), flock.SetFlag(flag|safeFlags))
		ok, err := take(fl, time.Until(deadline))
		if err != nil {
			return nil, lockError(p, err)
		}
		if !ok {
			return nil, fail.Lockedf("lock %s is held by another process for more than %s; wait for it to finish or raise FLOWSTATE_LOCK_WAIT", name, wait)
		}
		same, err := stillAt(fl)
		if err != nil {
			_ = fl.Unlock()
			return nil, err
		}
		if same {
			return fl, nil
		}
		_ = fl.Unlock()
		if time.Now().After(deadline) {
			return nil, fail.Lockedf("lock %s was removed or replaced again and again for %s; stop whatever deletes it and retry", name, wait)
		}
	}
}

// take flocks fl, waiting at most wait; false when the wait ran out.
func take(fl *flock.Flock, wait time.Duration) (bool, error) {
	ok, err := fl.TryLock()
	if err != nil || ok || wait <= 0 {
		return ok, err
	}
	done := make(chan error, 1)
	go func() { done <- fl.Lock() }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err == nil, err
	case <-timer.C:
		// The blocked flock may still succeed later; release it then, so
		// an in-process caller never leaks a held lock.
		go func() {
			if <-done == nil {
				_ = fl.Unlock()
			}
		}()
		return false, nil
	}
}

// stillAt reports whether the locked descriptor is what is at its path
// now: the same device and inode. The lock file must be a regular file.
func stillAt(fl *flock.Flock) (bool, error) {
	held, err := fl.Stat()
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", fl.Path(), err)
	}
	if !held.IsDir() && !held.Mode().IsRegular() {
		return false, notRegular(fl.Path(), held.Mode())
	}
	now, err := os.Lstat(fl.Path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("lock %s: %w", fl.Path(), err)
	}
	return os.SameFile(held, now), nil
}

// lockError is openError for the lock file, naming the lock otherwise.
func lockError(path string, err error) error {
	if refused := openError(path, err); refused != err {
		return refused
	}
	return fmt.Errorf("lock %s: %w", path, err)
}

// Release drops the lock. Safe to call on nil.
func (l *Lock) Release() {
	if l != nil {
		_ = l.file.Unlock()
		_ = l.dir.Unlock()
	}
}
