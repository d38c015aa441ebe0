package fsx

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestJournalLinesAndTail: several lines go in one append, Truncate takes
// them back, and DropTail cuts the last lines only while they match.
func TestJournalLinesAndTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "events.jsonl")
	long := strings.Repeat("x", 10<<10) // past the first block read back
	if err := os.WriteFile(p, []byte("keep\n"+long+"\n"), FilePerm); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(p)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	before := j.Size()
	if err := j.Append([]byte("a1"), []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if err := j.Truncate(before); err != nil {
		t.Fatal(err)
	}
	if err := j.Append([]byte("drop1"), []byte("drop2")); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = j.DropTail(func(line []byte) bool {
		seen = append(seen, string(line[:min(len(line), 5)]))
		return bytes.HasPrefix(line, []byte("drop"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "drop2 drop1 xxxxx"; strings.Join(seen, " ") != want {
		t.Errorf("DropTail saw %q, want %q", seen, want)
	}
	if b, _ := os.ReadFile(p); string(b) != "keep\n"+long+"\n" || j.Size() != int64(len(b)) {
		t.Errorf("left %d bytes, size %d", len(b), j.Size())
	}
	if err := j.DropTail(func([]byte) bool { return true }); err != nil || j.Size() != 0 {
		t.Errorf("dropping every line: size %d, %v", j.Size(), err)
	}
}

// TestReadOnlyRefused: a file its owner made read-only is neither
// replaced nor appended to, whoever runs flowstate (root too), with an
// error that names it and how to allow the write; it stays as it was.
func TestReadOnlyRefused(t *testing.T) {
	dir := t.TempDir()
	for name, write := range map[string]func(string) error{
		"replace": func(p string) error { return WriteFile(p, []byte("new\n")) },
		"append":  func(p string) error { return AppendLine(p, []byte("new")) },
		"durable": func(p string) error { _, _, err := AppendLineDurable(p, []byte("new"), nil, 1<<20); return err },
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("old\n"), 0o400); err != nil {
			t.Fatal(err)
		}
		err := write(p)
		if err == nil || fail.Code(err) != fail.Unexpected || !strings.Contains(err.Error(), p+" is read-only (mode 0400)") || !strings.Contains(err.Error(), "chmod u+w") {
			t.Errorf("%s of a read-only file: %v", name, err)
		}
		st, _ := os.Stat(p)
		if b, _ := os.ReadFile(p); string(b) != "old\n" || st.Mode().Perm() != 0o400 {
			t.Errorf("%s changed the read-only file: %q, %v", name, b, st.Mode())
		}
	}
}
