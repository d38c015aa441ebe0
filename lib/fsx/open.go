package fsx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// safeFlags go into every open of a file flowstate keeps. O_NOFOLLOW: a
// symlink planted at the path (a dangling one too, even with O_CREAT)
// fails the open instead of sending the read or write, or the creation,
// wherever it points. O_NONBLOCK: a FIFO fails (writing, ENXIO) or opens
// at once (reading) instead of waiting for the other end forever; on a
// regular file it changes nothing.
const safeFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// OpenFile opens one of flowstate's own files (flag as os.OpenFile's,
// created 0600) and refuses, with exit 2 naming the path, a symlink and
// anything but a regular file: a FIFO, a device such as /dev/zero or
// /dev/full, a socket, a directory. Every read and write of a file in
// the state directory goes through it (WriteFile's temp file is created
// with O_EXCL, which no link survives either); the hooks use it for the
// files Claude Code names. A missing file is an error wrapping
// fs.ErrNotExist.
func OpenFile(path string, flag int) (*os.File, error) {
	return open(path, flag|safeFlags)
}

// OpenRegular opens for reading a file flowstate does not own but reads,
// named by data a repository may carry (a worker's report, a file a
// record lists): a link is followed, since the path itself may point
// anywhere, but the open never blocks and anything but a regular file is
// refused (exit 2), since a FIFO would block the read forever and a
// device never end it.
func OpenRegular(path string) (*os.File, error) {
	return open(path, os.O_RDONLY|syscall.O_NONBLOCK)
}

func open(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag, FilePerm)
	if err != nil {
		return nil, openError(path, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = notRegular(path, st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openError explains a refused open (see refusal); other errors are
// os.OpenFile's, which name the path.
func openError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if r := refusal(path, pe.Err); r != nil {
			return r
		}
	}
	return err
}

// refusal is notRegular for an open that failed because of what is at
// path: O_NOFOLLOW fails with ELOOP on a link, O_NONBLOCK with ENXIO on
// a FIFO nobody reads, a write open of a directory with EISDIR, O_EXCL
// with EEXIST on anything. A write open of a read-only file fails with
// EACCES (unless flowstate runs as root): readOnly, as for root. nil for
// any other failure.
func refusal(path string, errno error) error {
	switch {
	case errors.Is(errno, syscall.ELOOP), errors.Is(errno, syscall.ENXIO), errors.Is(errno, syscall.EISDIR), errors.Is(errno, syscall.EEXIST):
		if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
			return notRegular(path, st.Mode())
		}
	case errors.Is(errno, syscall.EACCES):
		if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
			return writable(path, st.Mode())
		}
	}
	return nil
}

// writable refuses a file its owner may not write (no u+w, as after
// chmod 0400): someone made it read-only, perhaps to keep it as it is,
// and flowstate does not replace it or append to it behind their back.
// The mode bits decide, not access(2), so root is refused the same way.
// Exit 1, as for the permission error a non-root write would get.
func writable(path string, mode fs.FileMode) error {
	if mode.Perm()&0o200 != 0 {
		return nil
	}
	return fmt.Errorf("%s is read-only (mode %04o); flowstate writes no file made read-only: make it writable (chmod u+w) to let it change", path, mode.Perm())
}

// notRegular is the one refusal of a file that is not a plain file.
func notRegular(path string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode&fs.ModeSymlink != 0:
		what = "a symlink"
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	}
	return fail.Usagef("%s is %s; flowstate opens only regular files, and never through a link: remove it and retry", path, what)
}

// ReadFile reads one of flowstate's own files whole, through OpenFile,
// refusing (exit 4) one larger than max bytes before reading it: a file
// of a cloned repository may be of any size. A missing file is an error
// wrapping fs.ErrNotExist.
func ReadFile(path string, max int) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return readAll(f, path, max)
}

// ReadRegular reads whole, through OpenRegular, a file flowstate does not
// own (a project's .claude/settings.json, which a user may link to a
// shared one): a link is followed, a FIFO or device is refused instead of
// hanging the read, and one larger than max bytes is refused (exit 4).
func ReadRegular(path string, max int) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	return readAll(f, path, max)
}

// ReadNamed reads whole a file a person names on the command line (a
// FILE argument, --machine FILE). They chose it, so unlike a file a
// repository carries it may be a link or a pipe (`--machine <(...)`),
// read to its end; more than max bytes is refused (exit 4). A missing
// file is an error wrapping fs.ErrNotExist.
func ReadNamed(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return readAll(f, path, max)
}

// readAll reads f, opened from path, whole and closes it; more than max
// bytes is refused.
func readAll(f *os.File, path string, max int) ([]byte, error) {
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if st.Size() > int64(max) {
		return nil, limit.TooLarge(path, max)
	}
	// One read of the size fstat gave, plus a byte to see growth since.
	b := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(b) > max {
			return nil, limit.TooLarge(path, max)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// ReadPrefix reads at most the first n bytes of path, through OpenFile:
// for a file of which only the start matters (the first line of a
// transcript), however large it is.
func ReadPrefix(path string, n int64) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// ReadTail reads the last max bytes of one of flowstate's own files, for
// an append-only journal that is read for what happened last: when the
// file is larger than bound, the read starts after the first newline of
// its last bound bytes, so the result is whole lines.
func ReadTail(path string, bound int) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	off := max(st.Size()-int64(bound), 0)
	b := make([]byte, st.Size()-off)
	n, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b = b[:n]
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	return b, nil
}
