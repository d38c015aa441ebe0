package hook

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fsx"
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
// them.
func StalePointers(p *store.Project, now time.Time) ([]Pointer, error) {
	dir := filepath.Dir(p.SessionPointer("x"))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byID, err := summaries(p)
	if err != nil {
		return nil, err
	}
	var found []pointerFile
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		pf := pointerFile{Session: e.Name(), Modified: info.ModTime()}
		if isPointerName(pf.Session) && !fresh(pf, now) {
			// Read only what may be judged stale. An unreadable pointer
			// names no workflow and is judged as one whose workflow is gone.
			pf.Workflow, _ = p.SessionWorkflow(pf.Session)
		}
		found = append(found, pf)
	}
	return stale(found, byID, now), nil
}

// pointerFile is a session pointer as found on disk.
type pointerFile struct {
	Session  string    // the file name: the session id
	Modified time.Time // last written: when the session last pointed here
	Workflow string    // the workflow id it holds; "" if unread or unreadable
}

// isPointerName excludes names no session id can have, among them the
// atomic writers' hidden temps (an id never starts with a dot).
func isPointerName(name string) bool { return store.ValidID(name) == nil }

// fresh pointers are kept whatever their workflow: the session may still
// be resumed the same day.
func fresh(pf pointerFile, now time.Time) bool { return now.Sub(pf.Modified) < StaleAfter }

// stale decides which pointers no longer serve anything: old enough, and
// their workflow finished or gone from byID. An active workflow keeps
// its pointer however old, since `resume` finds it through the pointer;
// so does an unreadable one, which may be active behind a damaged file.
func stale(ptrs []pointerFile, byID map[string]store.Summary, now time.Time) []Pointer {
	var out []Pointer
	for _, pf := range ptrs {
		if !isPointerName(pf.Session) || fresh(pf, now) {
			continue
		}
		s, ok := byID[pf.Workflow]
		switch {
		case !ok:
			out = append(out, Pointer{Session: pf.Session, Workflow: pf.Workflow, Why: "its workflow no longer exists"})
		case s.Finished():
			out = append(out, Pointer{Session: pf.Session, Workflow: pf.Workflow, Why: "its workflow is finished"})
		}
	}
	return out
}

func summaries(p *store.Project) (map[string]store.Summary, error) {
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	m := make(map[string]store.Summary, len(all))
	for _, s := range all {
		m[s.ID] = s
	}
	return m, nil
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
	cutoff := now.Add(-tempAge)
	removeTemps(filepath.Dir(p.SessionPointer("x")), cutoff, l)
	all, err := p.List()
	if err != nil {
		l.printf("sweep: %v", err)
		return
	}
	for _, s := range all {
		if w, err := p.Workflow(s.ID); err == nil {
			removeTemps(w.Dir, cutoff, l)
		}
	}
}

// endSession removes the session's pointer and stray temp files when its
// workflow is finished (or gone); an unfinished workflow keeps everything
// so `resume` finds it.
func endSession(p *store.Project, session string, now time.Time, l *logger) {
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
	byID, err := summaries(p)
	if err != nil {
		l.printf("%v", err)
		return
	}
	pointer, temps := atEnd(id, byID)
	if !pointer {
		return
	}
	if err := p.ClearSession(session, id); err != nil {
		l.printf("clear session pointer %s: %v", session, err)
	}
	if !temps {
		return
	}
	if w, err := p.Workflow(id); err == nil {
		// Finished: nobody writes to it any more, so every temp is stray.
		removeTemps(w.Dir, now.Add(time.Second), l)
	}
}

// atEnd decides what SessionEnd cleans for the workflow id the session
// pointed at: nothing unless it is finished (an unreadable one may still
// be active); else the pointer, and the workflow's temp files when the
// workflow still exists.
func atEnd(id string, byID map[string]store.Summary) (pointer, temps bool) {
	s, ok := byID[id]
	if ok && !s.Finished() {
		return false, false
	}
	return true, ok
}

// removeTemps deletes the temp files atomic writers leave when killed
// (".checkpoint.json123…", ".state123…": a dot, the target's name, a
// random number) that were last modified before cutoff.
func removeTemps(dir string, cutoff time.Time, l *logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.printf("sweep %s: %v", dir, err)
		}
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !stray(e.Name(), info.Mode(), info.ModTime(), cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.printf("remove stray temp file: %v", err)
		}
	}
}

// stray is a temp file (by name) that is a regular file and was last
// written before cutoff: younger ones may belong to a writer in flight.
func stray(name string, mode fs.FileMode, modified, cutoff time.Time) bool {
	return fsx.IsTempName(name) && mode.IsRegular() && modified.Before(cutoff)
}
