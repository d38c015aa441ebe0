package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
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
	if err := fsx.RefuseSymlinks(filepath.Dir(p.StateDir), p.StateDir, p.workflowsDir(), dir); err != nil {
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
	// Lstat: a checkpoint that is a link is there, and refused when read.
	if _, err := os.Lstat(w.path(checkpointFile)); err != nil {
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

// StatePath is where workflow id keeps its key/value state, whether or
// not the workflow exists yet: for messages and `[ -f ]` checks (compat's
// STATE_FILE). It is data, never a script to source.
func (p *Project) StatePath(id string) string { return filepath.Join(p.workflowsDir(), id, stateFile) }

// EventsPath is the workflow's append-only event log.
func (w *Workflow) EventsPath() string { return w.path(eventsFile) }

// ReadEvents returns the newest events, whole lines of at most
// limit.Max bytes: the log only grows, and a cloned one may be huge.
// No events yet is no error.
// Events of a change whose checkpoint is not written (yet, or ever) are
// left out (commit).
func (w *Workflow) ReadEvents() ([]byte, error) {
	b, err := fsx.ReadTail(w.EventsPath(), limit.Max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return w.committed(b)
}

// committed cuts off the end of events the lines of an uncommitted
// change. The checkpoint is read after the events, so a change whose
// checkpoint landed in between counts, as it should. Most logs end in a
// line with no revision after the checkpoint's, and cost no read of it.
func (w *Workflow) committed(events []byte) ([]byte, error) {
	rev := int64(-1)
	for len(events) > 0 {
		i := bytes.LastIndexByte(events[:len(events)-1], '\n') + 1
		last := events[i:]
		if gjson.GetBytes(last, "rev").Int() == 0 {
			return events, nil
		}
		if rev < 0 {
			cp, err := w.readCheckpointFile()
			if err != nil {
				return nil, err
			}
			rev = gjson.GetBytes(cp, checkpoint.PathRevision).Int()
		}
		if !uncommitted(last, rev) {
			return events, nil
		}
		events = events[:i]
	}
	return events, nil
}

// creating is where Create builds a workflow: a name no id can have
// (ValidID refuses a leading dot), so List and discovery never see it.
const creating = ".creating"

// Create makes a new workflow (its first checkpoint, an empty state
// file, the custom machine if any, an "init" event) and, when session is
// not empty, points that session at it, all under the project lock. It
// is the one place a workflow comes into being, and it is all or
// nothing: everything is checked before anything is written, the
// workflow is built in a hidden directory and renamed into place once
// complete, and a failure removes what was built. A Create killed half-
// way leaves only the hidden directory, which the next Create clears
// under the same lock before it builds.
func (p *Project) Create(id string, cp, machineJSON []byte, session string) (*Workflow, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("workflow id: %w", err)
	}
	if session != "" {
		if err := ValidID(session); err != nil {
			return nil, fmt.Errorf("session id (CLAUDE_CODE_SESSION_ID): %w; nothing was created", err)
		}
	}
	l, err := p.lock()
	if err != nil {
		return nil, err
	}
	defer l.Release()
	w := &Workflow{ID: id, Dir: filepath.Join(p.workflowsDir(), id), P: p}
	if _, err := os.Lstat(w.Dir); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			return nil, fail.Usagef("workflow %q already exists in %s; choose another --workflow id or omit it", id, p.Dir)
		}
		return nil, fmt.Errorf("create workflow %s: %w", id, err)
	}
	tmp := filepath.Join(p.workflowsDir(), creating)
	if err := clearHalfCreated(tmp); err != nil {
		return nil, fmt.Errorf("create workflow %s: %w", id, err)
	}
	if err := build(tmp, cp, machineJSON, p.Now()); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("create workflow %s: %w; nothing was created", id, err)
	}
	if err := os.Rename(tmp, w.Dir); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("create workflow %s: %w; nothing was created", id, err)
	}
	if session != "" {
		if err := fsx.WriteFile(p.SessionPointer(session), []byte(id+"\n")); err != nil {
			_ = os.RemoveAll(w.Dir) // nobody has seen it: no session points at it yet
			return nil, fmt.Errorf("create workflow %s: point session %s at it: %w; nothing was created", id, session, err)
		}
		p.record("workflow %s created, session %s points at it", id, session)
		return w, nil
	}
	p.record("workflow %s created", id)
	return w, nil
}

// ClearHalfCreated removes what a Create killed halfway left, for the
// session-start sweep; the next Create would clear it too.
func (p *Project) ClearHalfCreated() error {
	tmp := filepath.Join(p.workflowsDir(), creating)
	if _, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// Under the project lock no Create is building: what is there is left over.
	return p.Locked(func() error { return clearHalfCreated(tmp) })
}

// clearHalfCreated removes tmp, Create's hidden directory; RemoveAll
// removes a link planted there, never what it points at.
func clearHalfCreated(tmp string) error {
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clear %s, left by a create that was killed: %w", tmp, err)
	}
	return nil
}

// build writes a new workflow's files into dir, which nobody sees until
// Create renames it into place.
func build(dir string, cp, machineJSON []byte, now time.Time) error {
	if err := os.Mkdir(dir, fsx.DirPerm); err != nil {
		return err
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	if machineJSON != nil {
		if err := fsx.WriteFile(path(machineFile), machineJSON); err != nil {
			return err
		}
	}
	// An empty state file that is lost reads as what it holds: no keys.
	if err := fsx.WriteNew(path(stateFile), statefile.Compact(nil)); err != nil {
		return err
	}
	// The init event goes first: once the workflow is visible, another
	// process may append its own events, which must not come before init.
	if err := fsx.AppendLine(path(eventsFile), eventLine(now, "init", nil)); err != nil {
		return err
	}
	return fsx.WriteFile(path(checkpointFile), cp)
}

// MachineJSON returns the custom machine of the workflow, or nil when it
// uses the default one.
func (w *Workflow) MachineJSON() ([]byte, error) {
	b, err := fsx.ReadFile(w.path(machineFile), limit.Max)
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
	data, err := w.readCheckpointFile()
	if err != nil {
		return nil, err
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

// readCheckpointFile reads checkpoint.json, refusing (without blocking
// or following a link) anything but a regular file, one larger than
// limit.Max, and one that is not UTF-8 or nests deeper than
// limit.MaxDepth: checks of one linear pass, so a hostile file costs no
// more than reading it, and it is refused before the lock is taken.
func (w *Workflow) readCheckpointFile() ([]byte, error) {
	path := w.path(checkpointFile)
	data, err := fsx.ReadFile(path, limit.Max)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: read checkpoint: %w", w.ID, err)
	}
	if err := limit.JSON(data, path); err != nil {
		return nil, fmt.Errorf("workflow %s: %w; flowstate never writes that: restore a backup (checkpoint.json.*.bak) or fix it by hand", w.ID, err)
	}
	return data, nil
}

// current is the fast path: valid JSON already at the schema version.
// The bash libraries also wrote "2.1", without our workflow_id: those
// still go through Migrate.
func current(data []byte) bool {
	return gjson.GetBytes(data, checkpoint.PathSchemaVersion).String() == checkpoint.SchemaVersion &&
		gjson.GetBytes(data, checkpoint.PathWorkflowID).String() != "" && gjson.ValidBytes(data)
}

// Migrate brings a checkpoint written by an older flowstate or by the
// bash libraries to the schema version (checkpoint.Migrate), as every
// checkpoint read from disk is. One that names no scope gets the scope
// the offline classifier reads in its description, as `flowstate
// classify` would: the guess is passed from here, so the checkpoint's
// rules know no words.
func Migrate(data []byte) (out []byte, from string, err error) {
	return checkpoint.Migrate(data, intent.Scope)
}

// MigrateFile is Migrate for a checkpoint file of p that belongs to no
// workflow (one the bash libraries' functions kept): when its command
// has a definition, .claude/flows/COMMAND.json, the definition completes
// it as a workflow's machine.json does (migrate).
func (p *Project) MigrateFile(data []byte) (out []byte, from string, err error) {
	command := strings.TrimPrefix(gjson.GetBytes(data, checkpoint.PathConfigCommand).String(), "/")
	for _, k := range []string{checkpoint.PathCommand, "workflow_type"} {
		if command == "" {
			command = strings.TrimPrefix(gjson.GetBytes(data, k).String(), "/")
		}
	}
	if ValidID(command) != nil {
		return Migrate(data)
	}
	path := filepath.Join(p.Dir, ".claude", "flows", command+".json")
	def, err := fsx.ReadRegular(path, limit.Max)
	if errors.Is(err, fs.ErrNotExist) {
		def, err = nil, nil
	}
	if err != nil {
		return nil, "", err
	}
	return migrateRunning(data, def, path)
}

// migrateRunning migrates data for a workflow running the machine def
// (nil: the default machine); name names def in messages.
func migrateRunning(data, def []byte, name string) (out []byte, from string, err error) {
	if def == nil {
		return Migrate(data)
	}
	m, err := machine.Parse(def)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return checkpoint.MigrateRunning(data, intent.Scope, m)
}

// migrate is Migrate for a checkpoint of w, which runs w's machine: a
// definition's (machine.json) completes a 2.0 document's partial table
// and terminal state from its own scopes.
func (w *Workflow) migrate(data []byte) (out []byte, from string, err error) {
	custom, err := w.MachineJSON()
	if err != nil {
		return nil, "", fmt.Errorf("workflow %s: read machine: %w", w.ID, err)
	}
	return migrateRunning(data, custom, "workflow "+w.ID)
}

// readLocked reads the checkpoint while the lock is held, migrating it
// when needed.
func (w *Workflow) readLocked() ([]byte, error) {
	path := w.path(checkpointFile)
	data, err := w.readCheckpointFile()
	if err != nil {
		return nil, err
	}
	if current(data) {
		return data, nil
	}
	out, from, err := w.migrate(data)
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
	if gjson.GetBytes(out, checkpoint.PathWorkflowID).String() != w.ID {
		if out, err = sjson.SetBytes(out, checkpoint.PathWorkflowID, w.ID); err != nil {
			return nil, err
		}
	}
	// The migrated document is a new revision, so that its event is
	// committed with it (commit).
	rev := gjson.GetBytes(data, checkpoint.PathRevision).Int()
	if out, err = sjson.SetBytes(out, checkpoint.PathRevision, rev+1); err != nil {
		return nil, err
	}
	backup := path + ".v" + from + ".bak"
	made := false
	if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
		if err := fsx.WriteFile(backup, data); err != nil {
			return nil, err
		}
		made = true
	}
	migrated := eventLine(w.P.Now(), "migrated", map[string]any{"from": from, "to": checkpoint.SchemaVersion, "backup": filepath.Base(backup)})
	if err := w.commit(rev, out, [][]byte{migrated}); err != nil {
		if made {
			_ = os.Remove(backup) // nobody has seen it: the migration did not happen
		}
		return nil, err
	}
	return out, nil
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

// Event records a timestamped event to append with the checkpoint
// (commit).
func (tx *Tx) Event(kind string, fields map[string]any) {
	tx.events = append(tx.events, eventLine(tx.Now, kind, fields))
}

// Update runs fn under the workflow's lock. The checkpoint is validated
// and replaced atomically only if fn changed it, together with the
// events fn added (commit): a failure writes neither.
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
	rev := gjson.GetBytes(data, checkpoint.PathRevision).Int()
	tx := &Tx{Checkpoint: data, Now: w.P.Now(), Revision: rev}
	if err := fn(tx); err != nil {
		return err
	}
	var doc []byte
	if !bytes.Equal(tx.Checkpoint, data) {
		if err := refuseCancelled(w.ID, data); err != nil {
			return err
		}
		if len(tx.Checkpoint) > limit.Max {
			return fail.Invalidf("workflow %s: the checkpoint would grow to %d MiB, over the %d MiB it may hold; keep bulk data in files and their paths in the checkpoint; nothing was written", w.ID, len(tx.Checkpoint)>>20, limit.Max>>20)
		}
		// Every write counts, whoever makes it, so a reader can tell that
		// the document it loaded is no longer current.
		if doc, err = sjson.SetBytes(tx.Checkpoint, checkpoint.PathRevision, rev+1); err != nil {
			return err
		}
		if err := checkpoint.Validate(doc); err != nil {
			return fmt.Errorf("workflow %s: refusing to write an invalid checkpoint: %w", w.ID, err)
		}
	}
	return w.commit(rev, doc, tx.events)
}

// commit writes one change under the lock: events, then the checkpoint
// doc of revision rev+1 (nil when the change is events alone).
//
// The event log comes first and the checkpoint is the commit record.
// Events of a checkpoint change carry its revision ("rev"); they count
// only once the checkpoint has that revision. If writing the checkpoint
// fails, the events are cut off again, and the command exits non-zero
// with nothing changed. If the process is killed between the two, or
// the cut fails too, they stay at the end of the log naming a revision
// the checkpoint never reached: ReadEvents leaves them out, and the next
// commit cuts them before it appends. So history never shows a change
// that did not happen, nor misses one that did. Events alone (an
// agent's start) are committed by their append, which a failure undoes.
func (w *Workflow) commit(rev int64, doc []byte, events [][]byte) error {
	if doc == nil && len(events) == 0 {
		return nil
	}
	j, err := fsx.OpenJournal(w.path(eventsFile))
	if err != nil {
		return err
	}
	defer j.Close()
	// Before any append, so that uncommitted lines are always the last.
	if err := j.DropTail(func(line []byte) bool { return uncommitted(line, rev) }); err != nil {
		return err
	}
	if doc != nil {
		for i, e := range events {
			if events[i], err = sjson.SetBytes(e, "rev", rev+1); err != nil {
				return err
			}
		}
	}
	before := j.Size()
	if len(events) > 0 {
		if err := j.Append(events...); err != nil {
			return fmt.Errorf("workflow %s: %w; nothing was written", w.ID, err)
		}
	}
	if doc == nil {
		w.recordCommit(events)
		return nil
	}
	if err := fsx.WriteFile(w.path(checkpointFile), doc); err != nil {
		_ = j.Truncate(before) // if this fails too, the events stay uncommitted: see above
		return fmt.Errorf("workflow %s: %w; nothing was written", w.ID, err)
	}
	w.recordCommit(events)
	return nil
}

// recordCommit notes a commit for a failure's message (Recorded): its
// events' kinds, or the checkpoint when it had none.
func (w *Workflow) recordCommit(events [][]byte) {
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, gjson.GetBytes(e, "event").String())
	}
	if len(kinds) == 0 {
		kinds = []string{"checkpoint"}
	}
	w.P.record("workflow %s: %s", w.ID, strings.Join(kinds, ", "))
	w.P.changedWorkflow(w.ID)
}

// uncommitted reports an event line of the change after revision rev,
// whose checkpoint was never written: commit's record of a change that
// failed or was killed. Only the one revision after the checkpoint's
// counts: a checkpoint restored by hand to an older revision does not
// make the history after it vanish.
func uncommitted(line []byte, rev int64) bool {
	return gjson.GetBytes(line, "rev").Int() == rev+1
}

// refuseCancelled stops every change to a cancelled workflow (exit 3):
// a person gave it up, and a step still running must not carry on with
// it. Events (agents that finish later) and logs are still appended.
func refuseCancelled(id string, doc []byte) error {
	if gjson.GetBytes(doc, checkpoint.PathStatus).String() != checkpoint.Cancelled {
		return nil
	}
	how := ""
	if h := checkpoint.ViewOf(doc).Hold; h != nil && h.By != "" {
		how = " by " + h.By
		if h.Reason != "" {
			how += ": " + h.Reason
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

// AppendLog appends one JSON value as a line of logs/<name>.jsonl. The
// value is checked (limit.JSON, then the syntax) before the lock.
func (w *Workflow) AppendLog(name string, value []byte) error {
	if !statefile.ValidKey(name) {
		return fail.Invalidf("log name %q must match [A-Za-z_][A-Za-z0-9_]*", name)
	}
	if err := limit.JSON(value, "log "+name+": the value"); err != nil {
		return err
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
	if err := fsx.AppendLine(filepath.Join(w.path(logsDir), name+".jsonl"), compact.Bytes()); err != nil {
		return err
	}
	w.P.record("workflow %s: log %s", w.ID, name)
	return nil
}

// AppendState stores key/value pairs under the lock. One pair is one
// O_APPEND write, so appends stay O(1); the file is compacted when it has
// grown past twice its compacted size, keeping it proportional to the
// number of keys, best effort once the pair is stored (an error then
// would say "nothing changed" of a value that is there). Several pairs (state-append --stdin) are all or
// nothing: they are merged into a compacted copy that replaces the file
// atomically, since a kill could tear a long multi-line append. The file
// never grows past limit.MaxState: an append that would is compacted
// first, and refused (exit 4, nothing written) if the state is still too
// large, so every reader can read it whole. A reserved key is stored
// (statefile.CheckStored): whether one may be written is the caller's
// rule, and no reader ever hands it to a shell.
func (w *Workflow) AppendState(pairs [][2]string) error {
	if len(pairs) == 0 {
		return nil
	}
	if err := w.appendState(pairs); err != nil {
		return err
	}
	keys := make([]string, len(pairs))
	for i, kv := range pairs {
		keys[i] = kv[0]
	}
	w.P.record("workflow %s: state %s", w.ID, strings.Join(keys, ", "))
	w.P.changedWorkflow(w.ID)
	return nil
}

func (w *Workflow) appendState(pairs [][2]string) error {
	for _, kv := range pairs {
		if err := statefile.CheckStored(kv[0], kv[1]); err != nil {
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
	cp, err := fsx.ReadFile(w.path(checkpointFile), limit.Max)
	switch {
	case err == nil:
		if err := refuseCancelled(w.ID, cp); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("workflow %s: read checkpoint: %w", w.ID, err)
	}
	path := w.path(stateFile)
	if len(pairs) == 1 {
		// The header line holds the base; 64 bytes are more than it takes.
		var head [64]byte
		size, n, err := fsx.AppendLineDurable(path, statefile.EncodeLine(pairs[0][0], pairs[0][1]), head[:], limit.MaxState)
		switch {
		case errors.Is(err, fsx.ErrFull): // compact, with the pair
		case err != nil:
			return err
		default:
			header, _, _ := bytes.Cut(head[:n], []byte("\n"))
			if statefile.ShouldCompact(size, int64(statefile.Base(header))) {
				// The pair is stored, durably: the compaction is best
				// effort, and a failed one leaves the file as it is, to be
				// compacted by a later append. Its error must not make the
				// call fail, since a non-zero exit says nothing changed.
				_ = w.compactState(path, pairs)
			}
			return nil
		}
	}
	return w.compactState(path, pairs)
}

// writeCompacted replaces the state file by its compacted copy; tests
// make it fail.
var writeCompacted = fsx.WriteFile

// compactState replaces the state file at path by a compacted copy with
// pairs set, atomically: nothing changes when it fails. The caller holds
// the workflow's lock.
func (w *Workflow) compactState(path string, pairs [][2]string) error {
	// Rewriting the state file is rare (a compaction or a --stdin batch),
	// so it is where temp files of killed writers go; under the lock no
	// writer of this workflow is in flight. Not on every write: it costs a
	// directory read.
	_ = fsx.RemoveStrayTemps(w.Dir, time.Time{}) // best effort: a stray temp wastes space, nothing else
	st, err := w.LoadState()
	if err != nil {
		return err
	}
	// A single pair may be in the file already; setting it again is the same.
	for _, kv := range pairs {
		st.Values[kv[0]] = kv[1]
	}
	data := statefile.Compact(st.Values)
	if len(data) > limit.MaxState {
		return fail.Invalidf("workflow %s: the state would grow to %d MiB, over the %d MiB it may hold; keep bulk data in a file and its path in the state; nothing was stored", w.ID, len(data)>>20, limit.MaxState>>20)
	}
	return writeCompacted(path, data)
}

// LoadState reads the key/value state; damaged lines come back as
// warnings, never as errors.
func (w *Workflow) LoadState() (statefile.State, error) {
	data, err := fsx.ReadFile(w.path(stateFile), limit.MaxState)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return statefile.State{}, fmt.Errorf("workflow %s: read state: %w", w.ID, err)
	}
	// The State's strings share data, which nothing else holds or changes:
	// no second copy of a file that may hold 10,000 keys.
	return statefile.ParseString(unsafe.String(unsafe.SliceData(data), len(data))), nil
}
