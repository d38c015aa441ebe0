package orchestrate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Run is what one Claude Code session's orchestrator command is doing,
// kept in .claude/state/runs/<session>: the workflow it started (or, while
// the classifier works, the id the workflow will get), the command whose
// text the model follows, and what the hooks need to keep the model on its
// rails: whether a step failed (the command then stops, and nothing may
// push the model on) and how many times in a row the Stop hook has sent
// the model back without a step running in between.
type Run struct {
	Command     string `json:"command"`         // the slash command the model follows, e.g. coordinate, workflow-resume
	Workflow    string `json:"workflow"`        // the workflow's id; it may not exist yet
	Description string `json:"description"`     // the request, to tell a repeated start from a new one
	Scope       string `json:"scope,omitempty"` // given with --scope
	Sequential  bool   `json:"sequential,omitempty"`
	ApprovePlan bool   `json:"approve_plan,omitempty"`
	Budget      string `json:"budget,omitempty"` // the spend limit the command's arguments gave
	// ByState: the command runs on the low-level API (sm-init), and names
	// its sections after the workflow's states.
	ByState bool `json:"by_state,omitempty"`
	// User: the command is the user's (its own definition, or the
	// low-level API), not one of the plugin's; Definition is the path of
	// its definition, for a step that finishes a skipped start.
	User       bool   `json:"user,omitempty"`
	Definition string `json:"definition,omitempty"`
	Halted     string `json:"halted,omitempty"` // the error of the step that stopped the command
	StopBlocks int    `json:"stop_blocks,omitempty"`
	// Pending is the step the main thread was about to run, set by the
	// PreToolUse hook that granted it and cleared when a step ends: one
	// that Claude Code refused (a person's rule, their answer, -p) never
	// ran, and while it is set the Stop hook does not send the model back
	// into it.
	Pending string    `json:"pending,omitempty"`
	Asked   time.Time `json:"asked,omitzero"` // when the classifier was asked for
	// RefusedWhy is why the classifier's first answer was refused; it is
	// asked for again once, and a second bad answer fails the start.
	RefusedWhy string `json:"refused_why,omitempty"`

	// Classifier is the definition's classifier agent, while it is asked
	// for. It runs before the workflow exists, so its agent's lifecycle is
	// kept here rather than in the workflow's events.
	Classifier         string    `json:"classifier,omitempty"`
	ClassifierLaunched time.Time `json:"classifier_launched,omitzero"`
	ClassifierStopped  time.Time `json:"classifier_stopped,omitzero"`

	// Engine is how the command runs its workflow: EngineWorkflow as a
	// Claude Code workflow, whose launch is Launch; "" or EngineSteps
	// through the model following its blocks. Relaunched counts the
	// launches made again in a row after one ended without its last step.
	Engine     string  `json:"engine,omitempty"`
	Launch     *Launch `json:"launch,omitempty"`
	Relaunched int     `json:"relaunched,omitempty"`
	Early      []Early `json:"early,omitempty"`
}

// noSession names the run record of a step run outside Claude Code.
const noSession = "no-session"

// runsDir holds the run records.
const runsDir = "runs"

func runPath(p *store.Project, session string) string {
	if session == "" {
		session = noSession
	}
	return filepath.Join(p.StateDir, runsDir, session)
}

// SessionRecordDirs are the directories where orchestrate keeps one
// small file per Claude Code session (run records, the user's last
// prompt), for the session-start sweep.
func SessionRecordDirs(p *store.Project) []string {
	return []string{filepath.Dir(runPath(p, noSession)), filepath.Dir(promptPath(p, noSession))}
}

// ReadRun returns the session's run record; ok is false when there is none
// or it cannot be read (a damaged record is as good as none: the next
// start writes a new one).
func ReadRun(p *store.Project, session string) (r Run, ok bool) {
	if session != "" && store.ValidID(session) != nil {
		return r, false
	}
	b, err := fsx.ReadFile(runPath(p, session), 64<<10)
	if err != nil || json.Unmarshal(b, &r) != nil || store.ValidID(r.Workflow) != nil {
		return Run{}, false
	}
	return r, true
}

// writeRun replaces the session's run record atomically.
func writeRun(p *store.Project, session string, r Run) error {
	if _, err := p.RecordDir(runsDir); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return fsx.WriteFile(runPath(p, session), append(b, '\n'))
}

// Follow records that the session's command, a command on the low-level
// API that declared its agents, runs workflow id: the hooks then hold it
// to the protocol as they do the phase loop's commands.
func Follow(p *store.Project, session, command, id string) error {
	if r, ok := ReadRun(p, session); ok && r.Workflow == id && r.ByState {
		return nil // a start block run again
	}
	return p.Locked(func() error {
		return writeRun(p, session, Run{Command: command, Workflow: id, ByState: true, User: true})
	})
}

// UpdateRun changes the session's run record under the project lock, for
// the hooks and steps that record what happened; a session with no record
// has nothing to update.
func UpdateRun(p *store.Project, session string, fn func(r *Run) bool) error {
	return p.Locked(func() error {
		r, ok := ReadRun(p, session)
		if !ok || !fn(&r) {
			return nil
		}
		return writeRun(p, session, r)
	})
}

// Halt records that a step of the session's command failed with err: the
// command stops there (the protocol says so), and the hooks leave the
// model alone until a step succeeds again. Best effort: the step's own
// error is what the user sees.
func Halt(p *store.Project, session string, err error) {
	_ = UpdateRun(p, session, func(r *Run) bool {
		r.Halted, r.Pending = kv.OneLine(err.Error()), ""
		return true
	})
}

// Progress clears what a successful step makes obsolete: a halt, the
// count of Stop hook blocks (the model is at work again) and the step
// that was pending (it ran).
func Progress(p *store.Project, session string) error {
	r, ok := ReadRun(p, session)
	if !ok || r.Halted == "" && r.StopBlocks == 0 && r.Pending == "" {
		return nil // no record, or nothing to clear: no lock, no write
	}
	return UpdateRun(p, session, func(r *Run) bool {
		r.Halted, r.StopBlocks, r.Pending = "", 0, ""
		return true
	})
}

// maxPending bounds the text a pending step is recorded with.
const maxPending = 200

// StepPending records that the session's main thread is about to run
// step, a phase step of its command: until a step ends, the step is
// taken as refused. A session with no run record has nothing to record.
func StepPending(p *store.Project, session, step string) error {
	line, _, _ := strings.Cut(step, "\n")
	if len(line) > maxPending {
		line = line[:maxPending]
	}
	return UpdateRun(p, session, func(r *Run) bool {
		r.Pending = kv.OneLine(line)
		return true
	})
}

// StepEnded records how a step of the session's command ended, for the
// hooks: with err, the command stopped there (Halt); without, what the
// step made obsolete is cleared (Progress). It returns the step's error,
// else Progress's.
func StepEnded(p *store.Project, session string, err error) error {
	if err != nil {
		Halt(p, session, err)
		return err
	}
	return Progress(p, session)
}
