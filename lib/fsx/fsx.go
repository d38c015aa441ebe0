// Package fsx owns the write path every piece of shared state goes
// through: an exclusive flock on a sidecar lock file with a bounded wait,
// and atomic replacement (temp file beside the target, fsync, rename).
// It knows nothing about what the files contain.
package fsx

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Permissions of everything flowstate creates: state is private to the user.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// DefaultWait bounds how long a writer waits for a lock before exit 5.
const DefaultWait = 10 * time.Second

// Lock is a held exclusive lock. The lock file is never deleted: deleting
// it would let two holders lock two different inodes.
type Lock struct{ fl *flock.Flock }

// Acquire takes the exclusive lock on path (created 0600 if missing),
// waiting at most wait, then fails with exit 5 naming the file. The wait
// is a blocking flock(2), not polling: the kernel wakes waiters as soon
// as the holder releases, so 32 writers do not starve each other.
func Acquire(path string, wait time.Duration) (*Lock, error) {
	fl := flock.New(path, flock.SetPermissions(FilePerm))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		return &Lock{fl: fl}, nil
	}
	done := make(chan error, 1)
	go func() { done <- fl.Lock() }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return &Lock{fl: fl}, nil
	case <-timer.C:
		// The blocked flock may still succeed later; release it then, so
		// an in-process caller never leaks a held lock.
		go func() {
			if <-done == nil {
				_ = fl.Unlock()
			}
		}()
		return nil, fail.Lockedf("lock %s is held by another process for more than %s; wait for it to finish or raise FLOWSTATE_LOCK_WAIT", path, wait)
	}
}

// Release drops the lock. Safe to call on nil.
func (l *Lock) Release() {
	if l != nil {
		_ = l.fl.Unlock()
	}
}

// WriteFile replaces path atomically: temp file in the same directory
// (so the rename never crosses a file system), fsync, rename, 0600.
func WriteFile(path string, data []byte) error {
	err := renameio.WriteFile(path, data, FilePerm, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(FilePerm))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// AppendLine appends one line in a single write(2) with O_APPEND, so
// concurrent readers see either none or all of it. If the file ends in a
// torn line (a writer was killed mid-write), the tail is cut first so
// the new line does not glue onto garbage. Callers hold the lock.
func AppendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, FilePerm)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	defer f.Close()
	if err := cutTornTail(f); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	return f.Sync()
}

// cutTornTail truncates f after its last newline when its last byte is
// not one.
func cutTornTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	size := st.Size()
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	// Scan back in blocks for the last newline.
	const block = 4096
	buf := make([]byte, block)
	for end := size; end > 0; {
		start := max(end-block, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil {
			return err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return f.Truncate(start + int64(i) + 1)
			}
		}
		end = start
	}
	return f.Truncate(0)
}

// EnsureDir creates dir (and parents) with 0700 and refuses a directory
// that is a symlink, since state must not be redirected elsewhere.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return fmt.Errorf("create %s: %w (check that the project directory is writable)", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if st.Mode()&fs.ModeSymlink != 0 || !st.IsDir() {
		return fail.Usagef("%s is a symlink or not a directory; flowstate keeps state only in a real directory (remove the link and retry)", dir)
	}
	return nil
}
