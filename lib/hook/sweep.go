package hook

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// StaleAfter is how long a finished workflow's session pointer is kept:
// long enough that resuming the session the same day still finds it.
const StaleAfter = 24 * time.Hour

// tempAge is when a writer's temp file counts as stray: an atomic write
// takes milliseconds, so after a minute its writer was killed.
const tempAge = time.Minute

// hookLockWait bounds lock waits inside a hook; a busy lock means someone
// is working, and the cleanup can wait for the next session.
const hookLockWait = 200 * time.Millisecond

// Pointer is a session pointer that no longer serves anything.
type Pointer struct {
	Session  string
	Workflow string // the id it held when judged; "" if it named none
	Why      string
}

// StalePointers lists the session pointers older than StaleAfter whose
// workflow is finished or gone. Doctor reports them; SessionStart clears
// them. Only the checkpoints of those old pointers' workflows are read.
func StalePointers(p *store.Project, now time.Time) ([]Pointer, error) {
	found, err := sessionFiles(p.SessionsDir())
	if err != nil {
		return nil, err
	}
	return stale(found, newSummaries(p), now), nil
}

// summaries is a project whose workflow summaries are read once per
// sweep: any number of pointers and records may name one workflow, whose
// checkpoint can be megabytes (2,000 old pointers to one workflow once
// kept session start busy for most of a minute).
type summaries struct {
	*store.Project
	seen map[string]summary
}

type summary struct {
	s  store.Summary
	ok bool
}

func newSummaries(p *store.Project) *summaries {
	return &summaries{Project: p, seen: map[string]summary{}}
}

func (c *summaries) Summary(id string) (store.Summary, bool) {
	got, known := c.seen[id]
	if !known {
		got.s, got.ok = c.Project.Summary(id)
		c.seen[id] = got
	}
	return got.s, got.ok
}

// pointerFile is a session pointer, or another file named by its
// session, as found on disk.
type pointerFile struct {
	Session  string    // the file name: the session id
	Modified time.Time // last written: when the session last pointed here
}

// sessionFiles lists the regular files of dir, a directory of one file
// per session; a missing dir has none, a linked one is refused.
func sessionFiles(dir string) ([]pointerFile, error) {
	entries, err := fsx.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var found []pointerFile
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		found = append(found, pointerFile{Session: e.Name(), Modified: info.ModTime()})
	}
	return found, nil
}

// lookup is what judging a pointer reads from the project
// (*store.Project); tests fake it.
type lookup interface {
	SessionWorkflow(session string) (string, error)
	Summary(id string) (store.Summary, bool)
}

// isPointerName excludes names no session id can have, among them the
// atomic writers' hidden temps (an id never starts with a dot).
func isPointerName(name string) bool { return store.ValidID(name) == nil }

// fresh pointers are kept whatever their workflow: the session may still
// be resumed the same day.
func fresh(pf pointerFile, now time.Time) bool { return now.Sub(pf.Modified) < StaleAfter }

// stale decides which pointers no longer serve anything: old enough, and
// their workflow finished or gone. An active workflow keeps its pointer
// however old, since `resume` finds it through the pointer; so does an
// unreadable one, which may be active behind a damaged file. Pointers
// and workflows are read only for the old ones.
func stale(ptrs []pointerFile, lk lookup, now time.Time) []Pointer {
	var out []Pointer
	for _, pf := range ptrs {
		if !isPointerName(pf.Session) || fresh(pf, now) {
			continue
		}
		// An unreadable pointer names no workflow: judged as gone.
		id, _ := lk.SessionWorkflow(pf.Session)
		s, ok := lk.Summary(id)
		switch {
		case !ok:
			out = append(out, Pointer{Session: pf.Session, Workflow: id, Why: "its workflow no longer exists"})
		case s.Finished():
			out = append(out, Pointer{Session: pf.Session, Workflow: id, Why: "its workflow is finished"})
		}
	}
	return out
}

// recordLookup is what judging a session's records reads: lookup, and
// the workflow of the session's run record ("" for none).
type recordLookup interface {
	lookup
	RunWorkflow(session string) string
}

// staleRecord decides whether a session's records (orchestrate's run and
// prompt records) serve nothing: last written more than StaleAfter ago,
// no session pointer left (the sweep clears stale ones first), and no run
// of a workflow still active. A live session keeps its prompt record, and
// with it the guard on a person's decisions, as long as it has a pointer
// or a running command.
func staleRecord(pf pointerFile, lk recordLookup, now time.Time) bool {
	if !isPointerName(pf.Session) || fresh(pf, now) {
		return false
	}
	if id, err := lk.SessionWorkflow(pf.Session); err != nil || id != "" {
		return false
	}
	id := lk.RunWorkflow(pf.Session)
	if id == "" {
		return true
	}
	s, ok := lk.Summary(id)
	return !ok || s.Finished()
}

// projectRecords is the recordLookup of a project on disk.
type projectRecords struct{ *summaries }

func (p projectRecords) RunWorkflow(session string) string {
	r, _ := orchestrate.ReadRun(p.Project, session)
	return r.Workflow
}

// sweepRecords removes the session records that serve nothing, one small
// file per session that would otherwise pile up; under the project lock,
// which the steps writing them take.
func sweepRecords(p *store.Project, now time.Time, l *logger) {
	lk := projectRecords{newSummaries(p)}
	err := p.Locked(func() error {
		for _, dir := range orchestrate.SessionRecordDirs(p) {
			found, err := sessionFiles(dir)
			if err != nil {
				return err
			}
			for _, pf := range found {
				if !staleRecord(pf, lk, now) {
					continue
				}
				if err := os.Remove(filepath.Join(dir, pf.Session)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		l.printf("sweep: session records: %v", err)
	}
}

// sweep clears stale session pointers and stray temp files of every
// workflow. It runs at session start, when no block of the new session
// is writing yet.
func sweep(p *store.Project, now time.Time, l *logger) {
	if _, err := os.Stat(p.StateDir); err != nil {
		return // flowstate never ran here: nothing to sweep, nothing to create
	}
	stale, err := StalePointers(p, now)
	if err != nil {
		l.printf("sweep: %v", err)
		return
	}
	for _, sp := range stale {
		if err := p.ClearSession(sp.Session, sp.Workflow); err != nil {
			l.printf("sweep: clear session pointer %s: %v", sp.Session, err)
		}
	}
	sweepRecords(p, now, l)
	if err := p.ClearHalfCreated(); err != nil {
		l.printf("sweep: %v", err)
	}
	cutoff := now.Add(-tempAge)
	removeTemps(p.SessionsDir(), cutoff, l)
	ids, err := p.WorkflowIDs()
	if err != nil {
		l.printf("sweep: %v", err)
		return
	}
	for _, id := range ids {
		// A workflow refused here (behind a symlink) is left alone; every
		// command that touches it says why.
		if dir, err := p.WorkflowDir(id); err == nil {
			removeTemps(dir, cutoff, l)
		}
	}
}

// endSession removes the session's pointer and stray temp files when its
// workflow is finished (or gone); an unfinished workflow keeps everything
// so `resume` finds it. Only that one workflow's checkpoint is read:
// SessionEnd hooks share a budget of about a second.
func endSession(p *store.Project, session string, l *logger) {
	if store.ValidID(session) != nil {
		l.printf("session id %q is not a valid id; nothing cleaned", session)
		return
	}
	id, err := p.SessionWorkflow(session)
	if err != nil {
		l.printf("%v", err)
		return
	}
	if id == "" {
		return
	}
	pointer, temps := atEnd(p.Summary(id))
	if !pointer {
		return
	}
	if err := p.ClearSession(session, id); err != nil {
		l.printf("clear session pointer %s: %v", session, err)
	}
	if !temps {
		return
	}
	if dir, err := p.WorkflowDir(id); err == nil {
		// Finished: nobody writes to it any more, so every temp is stray.
		removeTemps(dir, time.Time{}, l)
	}
}

// atEnd decides what SessionEnd cleans for the workflow the session
// pointed at (s, and whether it exists): nothing unless it is finished
// (an unreadable one may still be active); else the pointer, and the
// workflow's temp files when the workflow still exists.
func atEnd(s store.Summary, exists bool) (pointer, temps bool) {
	if exists && !s.Finished() {
		return false, false
	}
	return true, exists
}

// removeTemps deletes the stray temp files of dir written before cutoff
// (all of them with a zero cutoff), logging what fails.
func removeTemps(dir string, cutoff time.Time, l *logger) {
	if err := fsx.RemoveStrayTemps(dir, cutoff); err != nil {
		l.printf("sweep: %v", err)
	}
}
