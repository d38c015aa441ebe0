package fsx

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// hostile makes, in a fresh directory, one of each thing a cloned
// repository can leave where flowstate expects a regular file, named by
// what it is, plus the outside file the links name.
func hostile(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = t.TempDir()
	outside = filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, make := range map[string]func(string) error{
		"link":     func(p string) error { return os.Symlink(outside, p) },
		"dangling": func(p string) error { return os.Symlink(outside+".missing", p) },
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dir":      func(p string) error { return os.Mkdir(p, DirPerm) },
		"device":   func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		if err := make(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, outside
}

// TestOpenFileRefuses: every way of opening one of flowstate's files
// refuses a link (dangling too, without creating its target), a FIFO
// (without waiting for a writer or reader), a directory and a device,
// with exit 2 naming the path and what it is; the outside file is
// untouched.
func TestOpenFileRefuses(t *testing.T) {
	dir, outside := hostile(t)
	want := map[string]string{"link": "a symlink", "dangling": "a symlink", "fifo": "a FIFO", "dir": "a directory", "device": "a symlink"}
	opens := map[string]func(path string) error{
		"read":    func(p string) error { _, err := ReadFile(p, 1<<20); return err },
		"tail":    func(p string) error { _, err := ReadTail(p, 1<<20); return err },
		"append":  func(p string) error { return AppendLine(p, []byte("x")) },
		"durable": func(p string) error { _, _, err := AppendLineDurable(p, []byte("x"), nil, 1<<20); return err },
		"new":     func(p string) error { return WriteNew(p, []byte("x")) },
		"lock": func(p string) error {
			l, err := Acquire(p, time.Second)
			l.Release()
			return err
		},
	}
	for name, what := range want {
		for op, open := range opens {
			path := filepath.Join(dir, name)
			done := make(chan error, 1)
			go func() { done <- open(path) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s of a %s blocked", op, name)
			}
			if fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), path+" is "+what) {
				t.Errorf("%s of a %s: %v; want exit 2 saying it is %s", op, name, err, what)
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "the user's\n" {
		t.Errorf("the outside file became %q", b)
	}
	if _, err := os.Lstat(outside + ".missing"); err == nil {
		t.Error("a dangling link's target was created")
	}
}

// TestReadFileBound: a file over the bound is refused before it is read
// (exit 4, naming it); one at the bound is read whole.
func TestReadFileBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), FilePerm); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the bound: %q, %v", b, err)
	}
	if _, err := ReadFile(p, 9); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), p) {
		t.Errorf("over the bound: %v", err)
	}
	if _, err := ReadFile(p+".missing", 9); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// TestReadTail: the last lines that fit the bound, whole.
func TestReadTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one\ntwo\nthree\n"), FilePerm); err != nil {
		t.Fatal(err)
	}
	for bound, want := range map[int]string{100: "one\ntwo\nthree\n", 14: "one\ntwo\nthree\n", 10: "three\n", 9: "three\n", 5: ""} {
		if b, err := ReadTail(p, bound); err != nil || string(b) != want {
			t.Errorf("ReadTail(%d) = %q, %v; want %q", bound, b, err, want)
		}
	}
}

// TestAppendBounds: a torn tail longer than any line flowstate writes is
// refused (exit 4) rather than searched to the file's start under the
// lock, and a durable append past its bound writes nothing (ErrFull).
func TestAppendBounds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxTornTail + 1<<20); err != nil { // sparse, no newline
		t.Fatal(err)
	}
	f.Close()
	if err := AppendLine(p, []byte("x")); fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "without a newline") {
		t.Errorf("append after a huge torn tail: %v", err)
	}
	q := filepath.Join(t.TempDir(), "g")
	if err := WriteFile(q, []byte("12345\n")); err != nil {
		t.Fatal(err)
	}
	if size, _, err := AppendLineDurable(q, []byte("abc"), nil, 9); !errors.Is(err, ErrFull) || size != 6 {
		t.Errorf("past the bound: size %d, %v", size, err)
	}
	if size, _, err := AppendLineDurable(q, []byte("ab"), nil, 9); err != nil || size != 9 {
		t.Errorf("at the bound: size %d, %v", size, err)
	}
}

// TestOpenRegular: a file flowstate reads but does not own may be a link
// (followed), but a FIFO, a directory or a device is refused at once.
func TestOpenRegular(t *testing.T) {
	dir, _ := hostile(t)
	if f, err := OpenRegular(filepath.Join(dir, "link")); err != nil {
		t.Errorf("a link to a regular file: %v", err)
	} else {
		f.Close()
	}
	for name, what := range map[string]string{"fifo": "a FIFO", "dir": "a directory", "device": "a device"} {
		path := filepath.Join(dir, name)
		if _, err := OpenRegular(path); fail.Code(err) != fail.Usage || !strings.Contains(err.Error(), path+" is "+what) {
			t.Errorf("OpenRegular of a %s: %v", name, err)
		}
	}
}

// TestReadNamed: what a person names is read through a link and from a
// pipe to its end, and the bound holds as for ReadFile, even on a device
// that never ends.
func TestReadNamed(t *testing.T) {
	dir, _ := hostile(t)
	if _, err := ReadNamed(filepath.Join(dir, "link"), 1<<20); err != nil {
		t.Errorf("through a link: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(bytes.Repeat([]byte("x"), 100<<10))
		w.Close()
	}()
	if b, err := ReadNamed(fmt.Sprintf("/dev/fd/%d", r.Fd()), 1<<20); err != nil || len(b) != 100<<10 {
		t.Errorf("a pipe: %d bytes, %v", len(b), err)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), FilePerm); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNamed(p, 9); fail.Code(err) != fail.Invalid {
		t.Errorf("over the bound: %v", err)
	}
	if _, err := ReadNamed(filepath.Join(dir, "device"), 1<<20); fail.Code(err) != fail.Invalid {
		t.Errorf("a device that never ends: %v", err)
	}
	if _, err := ReadNamed(filepath.Join(dir, "missing"), 9); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// TestReadRegular: a link is read through, a FIFO is refused at once (no
// hang), and the bound holds as for ReadFile.
func TestReadRegular(t *testing.T) {
	dir, _ := hostile(t)
	if _, err := ReadRegular(filepath.Join(dir, "link"), 1<<20); err != nil {
		t.Errorf("through a link: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "fifo"), 1<<20); fail.Code(err) != fail.Usage {
		t.Errorf("a FIFO: %v", err)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), FilePerm); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(p, 9); fail.Code(err) != fail.Invalid {
		t.Errorf("over the bound: %v", err)
	}
}
