package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

// Workflow is one workflow's directory.
type Workflow struct {
	ID  string
	Dir string
	P   *Project
}

// File names inside a workflow directory.
const (
	lockFile       = "lock"
	stateFile      = "state"
	checkpointFile = "checkpoint.json"
	eventsFile     = "events.jsonl"
	machineFile    = "machine.json"
	logsDir        = "logs"
)

// WorkflowDir returns the directory of workflow id, which need not
// exist, after refusing an invalid id and a symlink on the way to it:
// through one, every read and write of the workflow would land outside
// the project.
func (p *Project) WorkflowDir(id string) (string, error) {
	if err := ValidID(id); err != nil {
		return "", fmt.Errorf("workflow id: %w", err)
	}
	dir := filepath.Join(p.workflowsDir(), id)
	if err := fsx.RefuseSymlinks(p.StateDir, p.workflowsDir(), dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Workflow returns the workflow with id if its directory exists.
func (p *Project) Workflow(id string) (*Workflow, error) {
	dir, err := p.WorkflowDir(id)
	if err != nil {
		return nil, err
	}
	w := &Workflow{ID: id, Dir: dir, P: p}
	if _, err := os.Stat(w.path(checkpointFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fail.Usagef("workflow %q not found in %s; run `flowstate list` to see the project's workflows", id, p.Dir)
		}
		return nil, fmt.Errorf("workflow %s: %w", id, err)
	}
	return w, nil
}

func (w *Workflow) path(name string) string { return filepath.Join(w.Dir, name) }

// CheckpointPath is where the checkpoint lives, for messages and docs.
func (w *Workflow) CheckpointPath() string { return w.path(checkpointFile) }

// EventsPath is the workflow's append-only event log.
func (w *Workflow) EventsPath() string { return w.path(eventsFile) }

// Create makes a new workflow directory with its first checkpoint, an
// empty state file, the custom machine if any, and an "init" event.
func (p *Project) Create(id string, cp, machineJSON []byte) (*Workflow, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("workflow id: %w", err)
	}
	l, err := p.lock()
	if err != nil {
		return nil, err
	}
	defer l.Release()
	w := &Workflow{ID: id, Dir: filepath.Join(p.workflowsDir(), id), P: p}
	if err := os.Mkdir(w.Dir, fsx.DirPerm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fail.Usagef("workflow %q already exists in %s; choose another --workflow id or omit it", id, p.Dir)
		}
		return nil, fmt.Errorf("create workflow %s: %w", id, err)
	}
	if machineJSON != nil {
		if err := fsx.WriteFile(w.path(machineFile), machineJSON); err != nil {
			return nil, err
		}
	}
	// The workflow is invisible until its checkpoint exists, and an empty
	// state file that is lost reads as what it holds: no keys.
	if err := fsx.WriteNew(w.path(stateFile), statefile.Compact(nil)); err != nil {
		return nil, err
	}
	// The init event goes first, while nobody can see the workflow: once
	// the checkpoint is there, another process may append its own events,
	// which must not come before init.
	if err := w.appendEvents([][]byte{eventLine(p.Now(), "init", nil)}); err != nil {
		return nil, err
	}
	if err := fsx.WriteFile(w.path(checkpointFile), cp); err != nil {
		return nil, err
	}
	return w, nil
}

// MachineJSON returns the custom machine of the workflow, or nil when it
// uses the default one.
func (w *Workflow) MachineJSON() ([]byte, error) {
	b, err := os.ReadFile(w.path(machineFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (w *Workflow) lock() (*fsx.Lock, error) {
	return fsx.Acquire(w.path(lockFile), w.P.LockWait)
}

// ReadCheckpoint returns the checkpoint, migrating an older schema in
// place first (under the lock, keeping a backup). A corrupted file or an
// unknown version is an error and the file is left as it is.
func (w *Workflow) ReadCheckpoint() ([]byte, error) {
	data, err := os.ReadFile(w.path(checkpointFile))
	if err != nil {
		return nil, fmt.Errorf("workflow %s: read checkpoint: %w", w.ID, err)
	}
	if current(data) {
		return data, nil
	}
	l, err := w.lock()
	if err != nil {
		return nil, err
	}
	defer l.Release()
	return w.readLocked()
}

// current is the fast path: valid JSON already at the schema version.
// The bash libraries also wrote "2.1", without our workflow_id: those
// still go through Migrate.
func current(data []byte) bool {
	r := gjson.GetManyBytes(data, "schema_version", "workflow_id")
	return r[0].String() == checkpoint.SchemaVersion && r[1].String() != "" && gjson.ValidBytes(data)
}

// readLocked reads the checkpoint while the lock is held, migrating it
// when needed.
func (w *Workflow) readLocked() ([]byte, error) {
	path := w.path(checkpointFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: read checkpoint: %w", w.ID, err)
	}
	if current(data) {
		return data, nil
	}
	out, from, err := checkpoint.Migrate(data)
	if errors.Is(err, checkpoint.ErrNotJSON) {
		return nil, fmt.Errorf("workflow %s: %s: %w; it was changed outside flowstate: repair it by hand, or restore a checkpoint.json.v*.bak that a migration left", w.ID, path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %s: %w", w.ID, path, err)
	}
	if bytes.Equal(out, data) {
		return data, nil
	}
	// The directory is the workflow's identity; an old checkpoint_id
	// (the original's type_project_timestamp) may differ from it.
	if gjson.GetBytes(out, "workflow_id").String() != w.ID {
		if out, err = sjson.SetBytes(out, "workflow_id", w.ID); err != nil {
			return nil, err
		}
	}
	backup := path + ".v" + from + ".bak"
	if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
		if err := fsx.WriteFile(backup, data); err != nil {
			return nil, err
		}
	}
	if err := fsx.WriteFile(path, out); err != nil {
		return nil, err
	}
	now := w.P.Now()
	return out, w.appendEvents([][]byte{eventLine(now, "migrated", map[string]any{"from": from, "to": checkpoint.SchemaVersion, "backup": filepath.Base(backup)})})
}

// Tx is one locked read-modify-write of a workflow. Change Checkpoint;
// add events; Update validates and writes both. Revision is the
// checkpoint's metadata.revision as read, for compare-and-swap callers.
type Tx struct {
	Checkpoint []byte
	Now        time.Time
	Revision   int64
	events     [][]byte
}

// Event records a timestamped event to append once the checkpoint is
// written.
func (tx *Tx) Event(kind string, fields map[string]any) {
	tx.events = append(tx.events, eventLine(tx.Now, kind, fields))
}

// revisionPath counts the checkpoint's writes.
const revisionPath = "metadata.revision"

// Update runs fn under the workflow's lock. The checkpoint is validated
// and replaced atomically only if fn changed it; events are appended
// after it, so a crash between the two loses at most an event, never
// state.
func (w *Workflow) Update(fn func(tx *Tx) error) error {
	l, err := w.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	data, err := w.readLocked()
	if err != nil {
		return err
	}
	rev := gjson.GetBytes(data, revisionPath).Int()
	tx := &Tx{Checkpoint: data, Now: w.P.Now(), Revision: rev}
	if err := fn(tx); err != nil {
		return err
	}
	if !bytes.Equal(tx.Checkpoint, data) {
		if err := refuseCancelled(w.ID, data); err != nil {
			return err
		}
		// Every write counts, whoever makes it, so a reader can tell that
		// the document it loaded is no longer current.
		if tx.Checkpoint, err = sjson.SetBytes(tx.Checkpoint, revisionPath, rev+1); err != nil {
			return err
		}
		if err := checkpoint.Validate(tx.Checkpoint); err != nil {
			return fmt.Errorf("workflow %s: refusing to write an invalid checkpoint: %w", w.ID, err)
		}
		if err := fsx.WriteFile(w.path(checkpointFile), tx.Checkpoint); err != nil {
			return err
		}
	}
	return w.appendEvents(tx.events)
}

// refuseCancelled stops every change to a cancelled workflow (exit 3):
// a person gave it up, and a step still running must not carry on with
// it. Events (agents that finish later) and logs are still appended.
func refuseCancelled(id string, doc []byte) error {
	if gjson.GetBytes(doc, "status").String() != checkpoint.Cancelled {
		return nil
	}
	how := ""
	if r := gjson.GetManyBytes(doc, "hold.by", "hold.reason"); r[0].String() != "" {
		how = " by " + r[0].String()
		if r[1].String() != "" {
			how += ": " + r[1].String()
		}
	}
	return fail.Refusedf("workflow %s was cancelled%s; it refuses every change: start a new one with sm-init", id, how)
}

func eventLine(now time.Time, kind string, fields map[string]any) []byte {
	ev := map[string]any{}
	for k, v := range fields {
		ev[k] = v
	}
	ev["ts"] = now.UTC().Format(time.RFC3339Nano)
	ev["event"] = kind
	b, _ := json.Marshal(ev) // maps of strings and numbers always marshal
	return b
}

// appendEvents appends to events.jsonl; callers hold the lock.
func (w *Workflow) appendEvents(lines [][]byte) error {
	for _, line := range lines {
		if err := fsx.AppendLine(w.path(eventsFile), line); err != nil {
			return err
		}
	}
	return nil
}

// AppendLog appends one JSON value as a line of logs/<name>.jsonl.
func (w *Workflow) AppendLog(name string, value []byte) error {
	if !statefile.ValidKey(name) {
		return fail.Invalidf("log name %q must match [A-Za-z_][A-Za-z0-9_]*", name)
	}
	// Compact rejects what json.Valid would: anything but one JSON value.
	var compact bytes.Buffer
	if err := json.Compact(&compact, value); err != nil {
		return fail.Invalidf("log %s: value is not valid JSON (%v); pass one JSON value, e.g. '{\"ms\": 12}'", name, err)
	}
	l, err := w.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	if err := fsx.EnsureDir(w.path(logsDir)); err != nil {
		return err
	}
	return fsx.AppendLine(filepath.Join(w.path(logsDir), name+".jsonl"), compact.Bytes())
}

// AppendState stores key/value pairs under the lock. One pair is one
// O_APPEND write, so appends stay O(1); the file is compacted when it has
// grown past twice its compacted size, keeping it proportional to the
// number of keys. Several pairs (state-append --stdin) are all or
// nothing: they are merged into a compacted copy that replaces the file
// atomically, since a kill could tear a long multi-line append.
func (w *Workflow) AppendState(pairs [][2]string) error {
	if len(pairs) == 0 {
		return nil
	}
	for _, kv := range pairs {
		if err := statefile.CheckPair(kv[0], kv[1]); err != nil {
			return err
		}
	}
	l, err := w.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	// The checkpoint holds the status; a read of it is a few microseconds
	// of the append's millisecond.
	if cp, err := os.ReadFile(w.path(checkpointFile)); err == nil {
		if err := refuseCancelled(w.ID, cp); err != nil {
			return err
		}
	}
	path := w.path(stateFile)
	if len(pairs) == 1 {
		// The header line holds the base; 64 bytes are more than it takes.
		var head [64]byte
		size, n, err := fsx.AppendLineDurable(path, statefile.EncodeLine(pairs[0][0], pairs[0][1]), head[:])
		if err != nil {
			return err
		}
		header, _, _ := bytes.Cut(head[:n], []byte("\n"))
		if !statefile.ShouldCompact(size, int64(statefile.Base(header))) {
			return nil
		}
	}
	// Rewriting the state file is rare (a compaction or a --stdin batch),
	// so it is where temp files of killed writers go; under the lock no
	// writer of this workflow is in flight. Not on every write: it costs a
	// directory read.
	_ = fsx.RemoveStrayTemps(w.Dir, time.Time{}) // best effort: a stray temp wastes space, nothing else
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	values := statefile.Parse(data).Values
	if len(pairs) > 1 {
		for _, kv := range pairs {
			values[kv[0]] = kv[1]
		}
	}
	return fsx.WriteFile(path, statefile.Compact(values))
}

// LoadState reads the key/value state; damaged lines come back as
// warnings, never as errors.
func (w *Workflow) LoadState() (statefile.State, error) {
	data, err := os.ReadFile(w.path(stateFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return statefile.State{}, fmt.Errorf("workflow %s: read state: %w", w.ID, err)
	}
	// The State's strings share data, which nothing else holds or changes:
	// no second copy of a file that may hold 10,000 keys.
	return statefile.ParseString(unsafe.String(unsafe.SliceData(data), len(data))), nil
}
