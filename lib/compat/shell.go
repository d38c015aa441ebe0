package compat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// What a workflow hands a shell: load_workflow_state's assignments and
// the generated state file at the bash libraries' path, which commands
// `source` and grep. Both come from one view of the workflow, so they
// never disagree.

// stateFile is where the bash libraries kept workflow id's state file,
// .claude/tmp/workflow_ID.sh, and where compat keeps its generated copy:
// STATE_FILE.
func stateFile(p *store.Project, id string) string {
	return filepath.Join(tmpDir(p), "workflow_"+id+".sh")
}

func tmpDir(p *store.Project) string { return filepath.Join(p.Dir, ".claude", "tmp") }

// completedItem is COMPLETED_STATE_i.
var completedItem = lazyRegexp(`^COMPLETED_STATE_[0-9]+$`)

// A workflow init_workflow_state starts exists at once, so that what the
// command stores before sm_init (or without it) has a place. It is what
// the original's defaults describe: in initialize, terminal state
// complete (scope full-implementation); its checkpoint says it waits for
// sm_init, which gives it its description, command and scope.
const (
	pendingKey         = "compat_awaiting_sm_init"
	pendingScope       = "full-implementation"
	pendingDescription = "started by init_workflow_state; sm_init has not run yet"
)

// pending reports whether the workflow of doc waits for sm_init.
func pending(doc []byte) bool { return gjson.GetBytes(doc, pendingKey).Bool() }

// pendingOwned are the variables sm_init sets. Before it runs they are
// the command's own: whatever it stored, else nothing, as in the
// original, where sourcing the library left them empty; CURRENT_STATE
// is then initialize unless the command stored another.
var pendingOwned = []string{"COMMAND_NAME", "CURRENT_STATE", "RESEARCH_COMPLEXITY", "RESEARCH_TOPICS_JSON", "TERMINAL_STATE", "WORKFLOW_DESCRIPTION", "WORKFLOW_SCOPE"}

func isPendingOwned(k string) bool { return slices.Contains(pendingOwned, k) }

// idCommand is the command a workflow id made by
// generate_unique_workflow_id names (plan of plan_1762798806), else
// "workflow": the command of a workflow before sm_init names it. It is
// lower-cased (Plan_1 is plan's), since a command's name is
// (protocol.CheckCommandName).
var idCommand = lazyRegexp(`^([A-Za-z][A-Za-z0-9_-]*?)_[0-9]`)

func commandOfID(id string) string {
	if m := idCommand().FindStringSubmatch(id); m != nil && protocol.CheckCommandName(strings.ToLower(m[1])) == nil {
		return strings.ToLower(m[1])
	}
	return "workflow"
}

// shell is what workflow w hands a shell: every value a variable gets,
// and which of them flowstate sets itself.
type shell struct {
	w      *store.Workflow
	m      *machine.Machine
	values statefile.State
	// own are the names flowstate sets from the checkpoint (and
	// STATE_FILE): a stored value of the same name never reaches a shell.
	own map[string]bool
	// completed is COMPLETED_STATES, the states entered, in order.
	completed []string
	// waiting is true before sm_init (pending).
	waiting bool
}

// shellOf builds the view of w whose checkpoint is doc.
func shellOf(w *store.Workflow, doc []byte, m *machine.Machine) (shell, error) {
	st, err := w.LoadState()
	if err != nil {
		return shell{}, err
	}
	s := shell{w: w, m: m, values: st, own: map[string]bool{}, waiting: pending(doc)}
	set := func(k, v string) {
		s.values.Set(k, v)
		s.own[k] = true
	}
	for k, v := range sm.Derived(w, doc) {
		if s.waiting && isPendingOwned(k) {
			continue
		}
		set(k, v)
	}
	status := sm.StatusOf(w.ID, doc)
	cur := shown(status, m)
	s.completed = entered(status.CompletedStates, cur, m.Initial)
	if _, stored := st.Values["CURRENT_STATE"]; !s.waiting || !stored {
		set("CURRENT_STATE", cur)
	}
	// The original's array, not sm's list of the states left: it is
	// handed out as an array (and its items as COMPLETED_STATE_i).
	delete(s.values.Values, "COMPLETED_STATES")
	s.own["COMPLETED_STATES"] = true
	set("COMPLETED_STATES_COUNT", strconv.Itoa(len(s.completed)))
	for i, state := range s.completed {
		set("COMPLETED_STATE_"+strconv.Itoa(i), state)
	}
	set("STATE_FILE", stateFile(w.P, w.ID))
	return s, nil
}

// isOwn reports whether flowstate sets k for any workflow: a stored
// value of k can never be what a shell gets.
func isOwn(k string) bool {
	return sm.IsDerived(k) || k == "STATE_FILE" || completedItem().MatchString(k)
}

// value is what the view gives variable k, and whether it gives one.
func (s shell) value(k string) (string, bool) {
	if k == "COMPLETED_STATES" {
		return strings.Join(s.completed, " "), true
	}
	v, ok := s.values.Values[k]
	return v, ok
}

// exports writes the view's variables but the array COMPLETED_STATES as
// `export NAME=VALUE` lines for eval, sorted, every value quoted so that
// eval only assigns: statefile.WriteLoad, the one place that decides
// what reaches a shell (no reserved name flowstate does not set itself,
// no value over 64 KiB). It returns a warning per value left out.
func (s shell) exports(b *bytes.Buffer) ([]string, error) {
	return s.values.WriteLoad(b, statefile.LoadOptions{Export: true, Own: func(k string) bool { return s.own[k] }})
}

// fileHeader starts the generated state file.
const fileHeader = "# Generated by flowstate from workflow %s (.claude/state/workflows/%s); rewritten on every\n" +
	"# change, so edits are lost. Sourcing it only assigns, in any POSIX shell: every value is quoted.\n"

// file renders the generated state file: the variables exports writes,
// each as fileLines.
func (s shell) file() ([]byte, error) {
	var out bytes.Buffer
	fmt.Fprintf(&out, fileHeader, s.w.ID, s.w.ID)
	_, err := s.values.WriteLoad(&out, statefile.LoadOptions{Export: true, Own: func(k string) bool { return s.own[k] }, Render: fileLines})
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// fileLines renders one variable of the state file in two lines: the
// assignment, NAME=VALUE, so that `grep '^NAME=' | cut -d= -f2-` reads a
// plain value as it is (as the libraries' commands read it), then the
// line the original wrote, `export NAME="VALUE"`, which commands and
// their tests grep (`^export CURRENT_STATE="research"`); for a value
// double quotes would not keep literal ($, `, ", \, !) only `export
// NAME`. Both quoted by statefile's quoter, so that sourcing the file
// only ever assigns, in any shell.
func fileLines(b []byte, name, value string) []byte {
	b = append(b, name+"="+statefile.Quote(value)+"\n"...)
	if q := statefile.QuoteAlways(value); strings.HasPrefix(q, `"`) {
		return append(b, "export "+name+"="+q+"\n"...)
	}
	return append(b, "export "+name+"\n"...)
}

// writeFile brings w's generated state file up to date after a call:
// rendered from view (a view of w the call built after its last change;
// nil: built here), and compared with the file without the lock, since
// most calls (every load) change nothing in it. Only when it differs is
// it rewritten under the workflow's lock, from what is stored once every
// write before it is done: concurrent writers each rewrite it, and the
// last one leaves the newest. (A writer that finds the file equal to its
// view after its own change has nothing to do: the file was written
// under the lock from that change or a later one, and a later change's
// writer checks again.) The file is replaced atomically, so a reader
// never sees half of it.
func writeFile(w *store.Workflow, view *shell) error {
	if view == nil {
		doc, m, err := sm.Load(w)
		if err != nil {
			return err
		}
		s, err := shellOf(w, doc, m)
		if err != nil {
			return err
		}
		view = &s
	}
	data, err := view.file()
	if err != nil {
		return err
	}
	if fileIs(stateFile(w.P, w.ID), data) {
		return nil
	}
	m, err := sm.LoadMachine(w)
	if err != nil {
		return err
	}
	return w.Update(func(tx *store.Tx) error {
		s, err := shellOf(w, tx.Checkpoint, m)
		if err != nil {
			return err
		}
		data, err := s.file()
		if err != nil {
			return err
		}
		if err := ensureTmp(w.P); err != nil {
			return err
		}
		path := stateFile(w.P, w.ID)
		if fileIs(path, data) {
			return nil // no write, no fsync
		}
		return fsx.WriteFile(path, data)
	})
}

// fileIs reports whether the file at path holds data, read never
// through a link.
func fileIs(path string, data []byte) bool {
	old, err := fsx.ReadFile(path, len(data)+1)
	return err == nil && bytes.Equal(old, data)
}

// Refresh brings workflow id's generated state file up to date after a
// flowstate command (not a compat call) changed the workflow: a person's
// `flowstate rewind` or `sm-transition` from a shell reaches the file
// commands source at once. A workflow compat never made the file for has
// none, and gets none.
func Refresh(p *store.Project, id string) error {
	if fi, err := os.Lstat(stateFile(p, id)); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil // removed since: so is what the file was for
	}
	return writeFile(w, nil)
}

// ensureTmp makes .claude/tmp a real directory of the project: never a
// link, through which the state file would be written elsewhere. One it
// creates ignores its files in git, as .claude/state does: the state
// files hold a workflow's values.
func ensureTmp(p *store.Project) error {
	dir := tmpDir(p)
	if err := fsx.RefuseSymlinks(filepath.Join(p.Dir, ".claude"), dir); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fsx.EnsureDir(dir); err != nil {
		return err
	}
	return fsx.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"))
}
