package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

func testWorkflow(t *testing.T, p *Project, id string) *Workflow {
	t.Helper()
	m := machine.Default()
	cp, err := checkpoint.New(checkpoint.Params{
		WorkflowID: id, Command: "coordinate", Description: "d", Scope: "research-only",
		InitialState: m.Initial, TerminalState: "research", Transitions: m.Transitions, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Create(id, cp, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAppendStateStoresReservedKeys: the store keeps any key a shell
// variable can have, reserved names included (the compat layer stores
// what the bash libraries stored); it is state-append that refuses them.
func TestAppendStateStoresReservedKeys(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	if err := w.AppendState([][2]string{{"CLAUDE_PROJECT_DIR", "/elsewhere"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendState([][2]string{{"BASH_ENV", "$(touch x)"}, {"A", "1"}}); err != nil {
		t.Fatal(err)
	}
	st, err := w.LoadState()
	if err != nil {
		t.Fatal(err)
	}
	if st.Values["CLAUDE_PROJECT_DIR"] != "/elsewhere" || st.Values["BASH_ENV"] != "$(touch x)" || st.Values["A"] != "1" {
		t.Errorf("state = %v", st.Values)
	}
	if err := w.AppendState([][2]string{{"BAD;KEY", "v"}}); fail.Code(err) != fail.Invalid {
		t.Errorf("bad key: %v; want exit 4", err)
	}
}

// TestAppendStateCompacts: single appends decide from the size and the
// header the append returns; once the file has more than doubled it is
// compacted, so overwriting one key keeps it small and every value reads.
func TestAppendStateCompacts(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	value := strings.Repeat("v", 100)
	if err := w.AppendState([][2]string{{"OTHER", "o"}, {"KEY", "first"}}); err != nil {
		t.Fatal(err)
	}
	compactions := 0
	prev := int64(0)
	for i := range 200 {
		if err := w.AppendState([][2]string{{"KEY", fmt.Sprint(value, i)}}); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(w.path(stateFile))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() < prev {
			compactions++
		}
		prev = st.Size()
		if limit := int64(4096 + 3*len(value)); st.Size() > 2*limit {
			t.Fatalf("append %d: state file of %d bytes was not compacted", i, st.Size())
		}
	}
	if compactions == 0 {
		t.Error("no compaction in 200 appends of one key")
	}
	data, err := os.ReadFile(w.path(stateFile))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(data, []byte("\n"))
	if statefile.Base(header) == 0 {
		t.Errorf("no base in the header %q", header)
	}
	s, err := w.LoadState()
	if err != nil || s.Values["KEY"] != fmt.Sprint(value, 199) || s.Values["OTHER"] != "o" || len(s.Warnings) != 0 {
		t.Errorf("after compactions: KEY=%.10q… OTHER=%q warnings %q, %v", s.Values["KEY"], s.Values["OTHER"], s.Warnings, err)
	}
}

// TestAppendStateCompactionFails: a single pair is stored by its durable
// append; when the compaction after it fails, the append still succeeds
// and is recorded, the value reads back, and a later append compacts.
// Before, the error made the call fail with the value already stored.
func TestAppendStateCompactionFails(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	failures := 0
	writeCompacted = func(string, []byte) error { failures++; return fmt.Errorf("disk full") }
	defer func() { writeCompacted = fsx.WriteFile }()
	value := strings.Repeat("v", 100)
	for i := 0; failures == 0; i++ {
		if i == 1000 {
			t.Fatal("no compaction in 1000 appends")
		}
		if err := w.AppendState([][2]string{{"KEY", fmt.Sprint(value, i)}}); err != nil {
			t.Fatalf("append %d: %v, with the value stored", i, err)
		}
		if got := w.P.Recorded(); len(got) != i+2 { // created, then one per append
			t.Fatalf("append %d recorded %d: %q", i, len(got), got)
		}
		if s, err := w.LoadState(); err != nil || s.Values["KEY"] != fmt.Sprint(value, i) {
			t.Fatalf("append %d: KEY=%.10q… %v", i, s.Values["KEY"], err)
		}
	}
	// Several pairs replace the file whole: their failure stores nothing.
	if err := w.AppendState([][2]string{{"A", "1"}, {"B", "2"}}); err == nil {
		t.Error("a failed batch succeeded")
	}
	writeCompacted = fsx.WriteFile
	before, _ := os.Stat(w.path(stateFile))
	if err := w.AppendState([][2]string{{"KEY", "last"}}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(w.path(stateFile))
	s, err := w.LoadState()
	if after.Size() >= before.Size() || err != nil || s.Values["KEY"] != "last" || s.Values["A"] != "" {
		t.Errorf("not compacted later: %d → %d bytes, KEY=%q A=%q %v", before.Size(), after.Size(), s.Values["KEY"], s.Values["A"], err)
	}
}

// TestCreateLogsInitFirst: the init event is written before the
// checkpoint makes the workflow visible, so it is always the first.
func TestCreateLogsInitFirst(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	if err := w.Update(func(tx *Tx) error { tx.Event("note", nil); return nil }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(w.EventsPath())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"event":"init"`) || !strings.Contains(lines[1], `"event":"note"`) {
		t.Errorf("events:\n%s", data)
	}
}

// TestAppendLog: one JSON value, compacted onto one line; anything else
// is refused (exit 4) and nothing is written.
func TestAppendLog(t *testing.T) {
	w := testWorkflow(t, testProject(t), "wf-1")
	if err := w.AppendLog("timing", []byte(" {\"ms\": 12,\n \"ok\": true} ")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "{", "1 2", "{} x", "nope"} {
		err := w.AppendLog("timing", []byte(bad))
		if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "log timing: value is not valid JSON") {
			t.Errorf("AppendLog(%q) = %v", bad, err)
		}
	}
	if err := w.AppendLog("bad-name", []byte("1")); fail.Code(err) != fail.Invalid {
		t.Errorf("AppendLog with a bad name = %v", err)
	}
	data, err := os.ReadFile(filepath.Join(w.Dir, "logs", "timing.jsonl"))
	if err != nil || string(data) != "{\"ms\":12,\"ok\":true}\n" {
		t.Errorf("log file %q, %v", data, err)
	}
}
