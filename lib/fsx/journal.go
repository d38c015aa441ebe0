package fsx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Journal is an append-only file of lines (events.jsonl, logs/, the
// state file) open for appending. Opening it is where its torn tail is
// cut; opening it before any other write of a change lets a refused
// journal (a symlink, a FIFO, a read-only file) stop the change before
// it starts. An append that fails leaves the file as it was.
type Journal struct {
	f    *os.File
	path string
	size int64
}

// OpenJournal opens path for appending (created 0600 when missing),
// through OpenFile, refusing a read-only file. If the file ends in a
// torn line (a writer was killed mid-write), the tail is cut, so the
// next line does not glue onto garbage. Callers hold the lock and Close
// the journal.
func OpenJournal(path string) (*Journal, error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = writable(path, st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	j := &Journal{f: f, path: path, size: st.Size()}
	if err := j.cutTornTail(); err != nil {
		f.Close()
		return nil, fmt.Errorf("append %s: %w", path, err)
	}
	return j, nil
}

// Append appends lines, each followed by a newline, in a single write(2)
// with O_APPEND, so concurrent readers see either none or all of them.
// A write that fails (a full disk, an I/O error) is undone: the file is
// cut back to its size before, so a refused append changes nothing.
//
// No fsync: this is for append-only journals (events.jsonl, logs/) that
// nothing restores state from. Atomicity does not need one (a single
// O_APPEND write, and readers skip a torn line), and the data is in the
// page cache for every later process at once; only a power loss or
// kernel crash can drop the last lines, which costs history, never
// state. The fsync was ~0.26 ms of every sm-transition.
func (j *Journal) Append(lines ...[]byte) error {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := make([]byte, 0, n)
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	if _, err := j.f.Write(buf); err != nil {
		return j.undo(fmt.Errorf("append %s: %w", j.path, err))
	}
	// The caller's lock keeps other writers out, so the size is known
	// without another stat.
	j.size += int64(len(buf))
	return nil
}

// undo cuts the file back to the size the journal knows after a failed
// append, and returns err, saying so if even that failed: then part of
// the append may be left (a torn line readers skip and the next append
// cuts, or lines the caller must say count for nothing).
func (j *Journal) undo(err error) error {
	if terr := j.Truncate(j.size); terr != nil {
		return fmt.Errorf("%w; cutting the file back failed too (%v), so part of it may be left", err, terr)
	}
	return err
}

// Size is the journal's size: what it held when opened (after a torn
// tail was cut) plus what was appended since.
func (j *Journal) Size() int64 { return j.size }

// Truncate cuts the journal back to size bytes, a size it had: to take
// back lines a change appended before the change failed.
func (j *Journal) Truncate(size int64) error {
	if err := j.f.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s: %w", j.path, err)
	}
	j.size = size
	return nil
}

// DropTail cuts the journal's last lines while drop says so of the last
// one: lines a writer appended for a change it never committed. A last
// line longer than any flowstate writes is not one of those.
func (j *Journal) DropTail(drop func(line []byte) bool) error {
	for j.size > 0 {
		start, line, err := j.lastLine()
		if errors.Is(err, errNoNewline) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", j.path, err)
		}
		if !drop(line) {
			return nil
		}
		if err := j.Truncate(start); err != nil {
			return err
		}
	}
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
// checkpoint advanced past a value that is gone. When the fsync fails
// (EIO), the line is cut off again: a value whose write was refused
// must not be read back as stored.
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
	before := j.size
	if err := j.Append(line); err != nil {
		return 0, 0, err
	}
	if err := j.f.Sync(); err != nil {
		j.size = before
		return 0, 0, j.undo(fmt.Errorf("append %s: %w", path, err))
	}
	if n, err = j.f.ReadAt(head, 0); err != nil && err != io.EOF {
		return 0, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return j.size, n, nil
}

// maxTornTail bounds how far back the journal looks for the last
// newline: no append writes a longer line than a state value of
// limit.Max bytes, every one escaped. A longer unterminated tail was not
// written by flowstate; scanning a gigabyte of it under the lock would
// be the cost a hostile file imposes.
const maxTornTail = 2*limit.Max + 4096

// errNoNewline is a tail longer than maxTornTail without a newline.
var errNoNewline = fail.Invalidf("the file ends in more than %d MiB without a newline, which flowstate never writes; move it away", maxTornTail>>20)

// cutTornTail truncates the journal after its last newline when its last
// byte is not one.
func (j *Journal) cutTornTail() error {
	if j.size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := j.f.ReadAt(last, j.size-1); err != nil || last[0] == '\n' {
		return err
	}
	nl, err := j.lastNewline(j.size - 1)
	if err != nil {
		return err
	}
	return j.Truncate(nl + 1)
}

// lastLine returns the journal's last line (without its newline) and
// where it starts; the journal ends in a newline.
func (j *Journal) lastLine() (start int64, line []byte, err error) {
	nl, err := j.lastNewline(j.size - 1)
	if err != nil {
		return 0, nil, err
	}
	start = nl + 1
	line = make([]byte, j.size-1-start)
	if _, err := j.f.ReadAt(line, start); err != nil {
		return 0, nil, err
	}
	return start, line, nil
}

// lastNewline is the offset of the last newline before end, -1 when
// there is none. It reads back in blocks, the first small, since what
// it looks for is usually one short line away.
func (j *Journal) lastNewline(end int64) (int64, error) {
	block := int64(4 << 10)
	buf := make([]byte, block)
	for pos := end; pos > 0; {
		if end-pos > maxTornTail {
			return 0, errNoNewline
		}
		from := max(pos-block, 0)
		n, err := j.f.ReadAt(buf[:pos-from], from)
		if err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i), nil
		}
		pos = from
		if block < 1<<20 {
			block *= 4
			buf = make([]byte, block)
		}
	}
	return -1, nil
}
