// Package store owns the on-disk layout under <project>/.claude/state:
// finding the project, workflow ids, session pointers, resolving which
// workflow a bash block means, and the locked read-modify-write of each
// workflow's files. It never interprets checkpoint fields beyond what
// resolution and listing need; lib/sm, lib/orchestrate, lib/workers and
// lib/app decide what to write.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
)

// Project is a project directory and its state directory.
type Project struct {
	Dir      string
	StateDir string
	LockWait time.Duration
	Now      func() time.Time
}

// FindProject locates the project: CLAUDE_PROJECT_DIR, else the nearest
// ancestor of cwd holding .claude or .git, else cwd. No git is run: each
// bash block pays for every process we start.
func FindProject(getenv func(string) string, cwd string) (*Project, error) {
	dir := getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		dir = findRoot(cwd)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project dir %q: %w", dir, err)
	}
	wait := fsx.DefaultWait
	if s := getenv("FLOWSTATE_LOCK_WAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, fail.Usagef("FLOWSTATE_LOCK_WAIT=%q is not a duration like 10s or 500ms", s)
		}
		wait = d
	}
	return &Project{Dir: abs, StateDir: filepath.Join(abs, ".claude", "state"), LockWait: wait, Now: time.Now}, nil
}

func findRoot(cwd string) string {
	for d := cwd; ; {
		for _, marker := range []string{".claude", ".git"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return cwd
		}
		d = parent
	}
}

func (p *Project) workflowsDir() string { return filepath.Join(p.StateDir, "workflows") }

// SessionsDir holds one pointer file per session, named by its id.
func (p *Project) SessionsDir() string { return filepath.Join(p.StateDir, "sessions") }

// SessionPointer is the file naming the current workflow of a session.
func (p *Project) SessionPointer(session string) string {
	return filepath.Join(p.SessionsDir(), session)
}

// ensure creates the state directories (0700) and refuses one that is a
// symlink (fsx.EnsureDir): state must not be redirected elsewhere. The
// state directory comes first, so nothing is created through a link.
func (p *Project) ensure() error {
	for _, d := range []string{p.StateDir, p.workflowsDir(), p.SessionsDir()} {
		if err := fsx.EnsureDir(d); err != nil {
			return err
		}
	}
	return nil
}

// lock takes the project-wide lock that guards creating workflows and
// moving session pointers.
func (p *Project) lock() (*fsx.Lock, error) {
	if err := p.ensure(); err != nil {
		return nil, err
	}
	return fsx.Acquire(filepath.Join(p.StateDir, "lock"), p.LockWait)
}

// SetSession points session at workflow id.
func (p *Project) SetSession(session, id string) error {
	if err := ValidID(session); err != nil {
		return fmt.Errorf("session id: %w", err)
	}
	l, err := p.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	return fsx.WriteFile(p.SessionPointer(session), []byte(id+"\n"))
}

// pointerMax bounds a session pointer read: an id and a newline.
const pointerMax = 1 << 10

// SessionWorkflow reads a session pointer: the workflow id it names, ""
// when there is none or it holds no valid id.
func (p *Project) SessionWorkflow(session string) (string, error) {
	if ValidID(session) != nil {
		return "", nil
	}
	b, err := fsx.ReadFile(p.SessionPointer(session), pointerMax)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read session pointer: %w", err)
	}
	id := string(trimNL(b))
	if ValidID(id) != nil {
		return "", nil
	}
	return id, nil
}

// ClearSession removes a session's pointer if it still names expectID
// ("" for a pointer naming no valid workflow). The session hooks decide
// that a pointer is done with from a read without the lock; checking
// again under the project lock, which SetSession takes too, keeps a
// pointer that was moved to a new workflow in between.
func (p *Project) ClearSession(session, expectID string) error {
	if err := ValidID(session); err != nil {
		return err
	}
	l, err := p.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	id, err := p.SessionWorkflow(session)
	if err != nil || id != expectID {
		return err
	}
	err = os.Remove(p.SessionPointer(session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
