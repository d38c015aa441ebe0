// Package store owns the on-disk layout under <project>/.claude/state:
// finding the project, workflow ids, session pointers, resolving which
// workflow a bash block means, and the locked read-modify-write of each
// workflow's files. It never interprets checkpoint fields beyond what
// resolution and listing need; lib/sm, lib/orchestrate, lib/supervisor and
// lib/app decide what to write.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Project is a project directory and its state directory.
type Project struct {
	Dir      string
	StateDir string
	LockWait time.Duration
	Now      func() time.Time
	recorded []string
	changed  []string // ids of the workflows this value's writes changed
}

// Recorded lists, in order, what this Project's writes have recorded so
// far, one phrase each ("workflow X: transition"): a command that fails
// after some of its writes must say which stay (docs/architecture.md,
// "What a non-zero exit means").
func (p *Project) Recorded() []string { return p.recorded }

func (p *Project) record(format string, args ...any) {
	p.recorded = append(p.recorded, fmt.Sprintf(format, args...))
}

// Changed lists the workflows this Project's writes changed, each once,
// for what is kept beside a workflow's own files (compat's state file).
func (p *Project) Changed() []string { return p.changed }

func (p *Project) changedWorkflow(id string) {
	if !slices.Contains(p.changed, id) {
		p.changed = append(p.changed, id)
	}
}

// FindProject locates the project: CLAUDE_PROJECT_DIR, else the nearest
// ancestor of cwd holding .claude or .git, else cwd. The search stops
// below $HOME: the .claude there is Claude Code's own configuration, not a
// project's. No git is run: each bash block pays for every process we
// start. This is the one place that decides where a project (and so its
// state) is; doctor and install ask it too.
func FindProject(getenv func(string) string, cwd string) (*Project, error) {
	dir := getenv("CLAUDE_PROJECT_DIR")
	h, err := homes(getenv)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = findRoot(cwd, h)
	}
	return projectAt(getenv, dir, h)
}

// ProjectAt is the project in dir, named by the user (a PROJECT_DIR
// argument, CLAUDE_PROJECT_DIR): $HOME and anything inside ~/.claude are
// refused, since state there would land in Claude Code's configuration.
func ProjectAt(getenv func(string) string, dir string) (*Project, error) {
	h, err := homes(getenv)
	if err != nil {
		return nil, err
	}
	return projectAt(getenv, dir, h)
}

// projectAt is ProjectAt with the home directories (homes) found: one
// look at $HOME (a symlink resolved, /etc/passwd read when it is unset)
// per process, however the project is found.
func projectAt(getenv func(string) string, dir string, h []string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project dir %q: %w", dir, err)
	}
	if err := notClaudeHome(abs, h); err != nil {
		return nil, err
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

// findRoot walks up from cwd to the first directory holding a marker,
// never reaching home: from a directory under $HOME that is in no project,
// the project is cwd itself.
func findRoot(cwd string, homes []string) string {
	for d := cwd; !slices.Contains(homes, d); {
		for _, marker := range []string{".claude", ".git"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return cwd
}

// notClaudeHome refuses $HOME and ~/.claude (and what is in it) as a
// project directory.
func notClaudeHome(dir string, homes []string) error {
	for _, h := range homes {
		if dir == h {
			return fail.Usagef("the project would be your home directory %s, whose .claude is Claude Code's own configuration; run flowstate (or start Claude Code) in a project directory, or set CLAUDE_PROJECT_DIR to one", dir)
		}
		if config := filepath.Join(h, ".claude"); dir == config || strings.HasPrefix(dir, config+string(filepath.Separator)) {
			return fail.Usagef("the project would be %s, inside Claude Code's own configuration %s; run flowstate (or start Claude Code) in a project directory, or set CLAUDE_PROJECT_DIR to one", dir, config)
		}
	}
	return nil
}

// homes is the user's home directory as given and, when it is reached
// through a symlink, as the working directory would spell it. That is
// $HOME, or the password database's entry when HOME is unset or not an
// absolute path: without a home, the search for the project would climb
// into it and take Claude Code's ~/.claude for a project. Neither known
// is exit 2.
func homes(getenv func(string) string) ([]string, error) {
	h := getenv("HOME")
	if !filepath.IsAbs(h) {
		passwd, _ := fsx.ReadRegular("/etc/passwd", limit.Max) // unreadable: no home found
		if h = homeOf(passwd, os.Getuid()); !filepath.IsAbs(h) {
			return nil, fail.Usagef("HOME is not set (or not an absolute path) and /etc/passwd gives no home directory for uid %d, so flowstate cannot keep state out of Claude Code's ~/.claude; set HOME, or set CLAUDE_PROJECT_DIR to the project", os.Getuid())
		}
	}
	h = filepath.Clean(h)
	if real, err := filepath.EvalSymlinks(h); err == nil && real != h {
		return []string{h, real}, nil
	}
	return []string{h}, nil
}

// homeOf is the home directory that passwd (/etc/passwd's format) gives
// uid, "" when it lists none. Not os/user, which does the same but links
// the C library in: a dynamically linked binary starts slower, in every
// bash block.
func homeOf(passwd []byte, uid int) string {
	id := strconv.Itoa(uid)
	for line := range strings.Lines(string(passwd)) {
		f := strings.Split(strings.TrimRight(line, "\r\n"), ":")
		if len(f) == 7 && f[2] == id {
			return f[5]
		}
	}
	return ""
}

func (p *Project) workflowsDir() string { return filepath.Join(p.StateDir, "workflows") }

// RefuseLinkedState fails (exit 2) when the state directory, or the
// project's .claude holding it, is a link or not a directory: through
// either, all state would be read and written outside the project. A
// missing one passes.
func (p *Project) RefuseLinkedState() error {
	return fsx.RefuseSymlinks(filepath.Dir(p.StateDir), p.StateDir)
}

// SessionsDir holds one pointer file per session, named by its id.
func (p *Project) SessionsDir() string { return filepath.Join(p.StateDir, "sessions") }

// SessionPointer is the file naming the current workflow of a session.
func (p *Project) SessionPointer(session string) string {
	return filepath.Join(p.SessionsDir(), session)
}

// ensure creates the state directories (0700) and refuses one that is a
// symlink (fsx.EnsureDir): state must not be redirected elsewhere. The
// project's .claude and the state directory come first, so nothing is
// created through a link. It
// also gives the state directory its own .gitignore, so that git never
// sees workflow state, whichever way flowstate was installed and without
// touching the project's own .gitignore.
func (p *Project) ensure() error {
	for _, d := range []string{filepath.Dir(p.StateDir), p.StateDir, p.workflowsDir(), p.SessionsDir()} {
		if err := fsx.EnsureDir(d); err != nil {
			return err
		}
	}
	return p.ensureGitignore()
}

// RecordDir is the directory name of the state directory, where
// orchestrate keeps a record per session (runs/, prompts/), created like
// the state directory's own (ensure): a link at the state directory or
// at name is refused, since a record written through one would land
// outside the project.
func (p *Project) RecordDir(name string) (string, error) {
	if err := p.ensure(); err != nil {
		return "", err
	}
	dir := filepath.Join(p.StateDir, name)
	return dir, fsx.EnsureDir(dir)
}

// StateGitignore is the .gitignore inside the state directory: all of it.
const StateGitignore = "*\n# flowstate's workflow state (locks, session pointers, checkpoints): never committed\n"

// GitignorePath is the state directory's own .gitignore.
func (p *Project) GitignorePath() string { return filepath.Join(p.StateDir, ".gitignore") }

// ensureGitignore writes the state directory's .gitignore when it is
// missing (a new state directory, or one made by an older flowstate); one
// lstat otherwise. Whatever is there already, even a link, is left alone.
// Written atomically: a torn or empty file would be left alone forever.
func (p *Project) ensureGitignore() error {
	if _, err := os.Lstat(p.GitignorePath()); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fsx.WriteFile(p.GitignorePath(), []byte(StateGitignore))
}

// lock takes the project-wide lock that guards creating workflows and
// moving session pointers.
func (p *Project) lock() (*fsx.Lock, error) {
	if err := p.ensure(); err != nil {
		return nil, err
	}
	return fsx.Acquire(filepath.Join(p.StateDir, "lock"), p.LockWait)
}

// Locked runs fn under the project lock, for records of the project's
// own (a session's run) that must not lose concurrent updates.
func (p *Project) Locked(fn func() error) error {
	l, err := p.lock()
	if err != nil {
		return err
	}
	defer l.Release()
	return fn()
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
	if err := fsx.WriteFile(p.SessionPointer(session), []byte(id+"\n")); err != nil {
		return err
	}
	p.record("session %s points at workflow %s", session, id)
	return nil
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
	if err == nil {
		p.record("session %s points at no workflow", session)
	}
	return err
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
