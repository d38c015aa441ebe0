// Package hook owns flowstate's Claude Code hook handlers. SessionStart
// exports what later bash blocks need through CLAUDE_ENV_FILE, sweeps
// stale ephemeral files and, after a compaction, tells the model where its
// command stands; SessionEnd drops what is ephemeral for the session's
// finished workflows. The others keep a running workflow on its rails
// whatever the model does: PreToolUse makes flowstate's agents run in the
// foreground and records each launch, allows flowstate's own steps and
// artifacts so that a person in Claude Code's default permission mode is
// not asked about them (permit.go), and refuses the write of a file only
// one agent writes by anyone else (guardWrite), SubagentStart and SubagentStop
// record each agent's start and end, PostToolUse and Stop record what the
// agents and the main thread spent (usage.go), Stop sends a model that
// ends its turn before its command is done back to the step where it
// stands, and
// UserPromptSubmit notes which command the user typed, so that only the
// user approves, rejects or lets a paused workflow go on.
//
// A hook must never fail or slow Claude Code down, so Run reports nothing
// to its caller: it answers Claude Code only through the documented JSON
// on stdout, problems go to a log file, and the process exits 0. It never
// deletes what `resume` needs.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// Events handled, as named on the command line (`flowstate hook NAME`).
const (
	SessionStart  = "session-start"
	SessionEnd    = "session-end"
	PreToolUse    = "pre-tool-use"
	PostToolUse   = "post-tool-use"
	PostFailure   = "post-tool-use-failure"
	SubagentStart = "subagent-start"
	SubagentStop  = "subagent-stop"
	Stop          = "stop"
	UserPrompt    = "user-prompt-submit"
)

// Env is everything a hook reads from outside.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer // the hook's answer to Claude Code, JSON; nil discards it
	Getenv func(string) string
	Exe    string // absolute path of the running flowstate; its dir goes on PATH
	Now    time.Time
}

// payload is the part of the hook's stdin JSON we use (Claude Code
// 2.1.328; docs/architecture.md has the events and their fields).
type payload struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Source    string `json:"source"` // SessionStart: startup, resume, clear, compact
	// The session's transcript (every event), where the usage is read
	SessionTranscript string `json:"transcript_path"`
	// PreToolUse, PostToolUse, PostToolUseFailure (Error)
	Error        string          `json:"error"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	// SubagentStart, SubagentStop
	AgentID        string `json:"agent_id"`
	AgentType      string `json:"agent_type"`
	TranscriptPath string `json:"agent_transcript_path"`
	LastMessage    string `json:"last_assistant_message"`
	// Stop
	StopHookActive bool `json:"stop_hook_active"`
	// UserPromptSubmit
	Prompt string `json:"prompt"`
	// Every event of a session at work: default, acceptEdits, plan, ...
	PermissionMode string `json:"permission_mode"`

	// Dropped are the paths of the strings left out of the payload as
	// read, longer than maxString ("tool_input.content").
	Dropped []string `json:"-"`
}

// filePath is the path a file tool's input names in field, absolute
// (a relative one against the payload's cwd); "" when none can be told.
func (pl payload) filePath(field string) string {
	target := gjson.GetBytes(pl.ToolInput, field).String()
	if target == "" || slices.Contains(pl.Dropped, "tool_input."+field) {
		return ""
	}
	if !filepath.IsAbs(target) {
		if pl.Cwd == "" {
			return ""
		}
		target = filepath.Join(pl.Cwd, target)
	}
	return target
}

// stdinWait bounds the read of the payload. Claude Code writes it and
// closes stdin at once, but on a busy machine "at once" has taken over
// 300 ms; a terminal is not read at all (a hook run by hand must not
// wait for input). SessionEnd hooks share a 1.5 s budget, so theirs is
// shorter.
const (
	stdinWait    = 5 * time.Second
	stdinWaitEnd = time.Second
)

// Run handles one event. It never panics and returns nothing: every
// problem is written to the hook log.
func Run(event string, env Env) {
	l := &logger{env: env, event: event}
	defer func() {
		if r := recover(); r != nil {
			l.printf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	wait := stdinWait
	if event == SessionEnd {
		wait = stdinWaitEnd
	}
	pl, perr := readPayload(env.Stdin, wait)
	if event == PreToolUse && perr == nil && !worthLooking(pl) && pl.AgentID == "" {
		return // most Bash calls and reads of every session: none of flowstate's
	}
	p := project(env, pl, l)
	l.project = p // from here on, problems go to the project's log
	if perr != nil {
		l.printf("%v", perr)
	}
	session := pl.SessionID
	if session == "" {
		session = env.Getenv("CLAUDE_CODE_SESSION_ID")
	}
	handler{env: env, p: p, session: session, pl: pl, l: l, unreadable: perr != nil}.handle(event)
}

// handle runs the handler of event.
func (h handler) handle(event string) {
	switch event {
	case SessionStart:
		if err := writeEnvFile(h.env, h.p); err != nil {
			h.l.printf("%v", err)
		}
		if h.p != nil {
			sweep(h.p, h.env.Now, h.l)
		}
		if h.pl.Source == "compact" {
			h.reanchor()
		}
	case SessionEnd:
		h.mainUsage(true) // the last answer, which Claude Code may write after Stop
		if h.p != nil && h.session != "" {
			endSession(h.p, h.session, h.l)
		}
	case PreToolUse:
		h.preToolUse()
	case WorkflowStep:
		h.workflowStep()
	case PostToolUse:
		h.postToolUse()
	case PostFailure:
		h.agentFailed()
	case SubagentStart:
		h.subagent(agentrun.Start)
	case SubagentStop:
		h.subagent(agentrun.Stop)
	case Stop:
		h.mainUsage(false)
		h.stop()
	case UserPrompt:
		h.userPrompt()
	default:
		h.l.printf("unknown hook event %q (known: %s); nothing done", event, strings.Join(Events(), ", "))
	}
}

// Registration is how Claude Code is to run one of the hooks: for Event
// (Claude Code's name), the handlers whose matcher is Matcher ("" for
// all), run `flowstate hook Arg` within Timeout seconds. install writes
// these into a project's settings.json; hooks/hooks.json says the same
// for the plugin (a test keeps them together).
type Registration struct {
	Event   string
	Matcher string
	Arg     string
	Timeout int
}

// Registrations lists every hook flowstate installs. A hook finishes in
// milliseconds; the timeouts only bound a hung file system. SessionEnd's
// is Claude Code's own budget (1.5 s), whatever the setting says. An
// event may have more than one: each runs its own Arg.
func Registrations() []Registration {
	return []Registration{
		{"SessionStart", "", SessionStart, 30},
		{"SessionEnd", "", SessionEnd, 0},
		{"PreToolUse", "Agent|Task|Write|Edit|MultiEdit|NotebookEdit|Bash|Read|Workflow", PreToolUse, 10},
		// A workflow script's step: the same work as a phase-verify block,
		// whose locks may wait (FLOWSTATE_LOCK_WAIT) and whose checks read
		// every artifact of a wave.
		{"PreToolUse", "StructuredOutput", WorkflowStep, 120},
		{"PostToolUse", "Agent|Task|Workflow", PostToolUse, 10},
		{"PostToolUseFailure", "Agent|Task", PostFailure, 10},
		{"SubagentStart", "", SubagentStart, 10},
		{"SubagentStop", "", SubagentStop, 10},
		{"Stop", "", Stop, 10},
		{"UserPromptSubmit", "", UserPrompt, 10},
	}
}

// Events lists the hook events `flowstate hook` handles.
func Events() []string {
	var out []string
	for _, r := range Registrations() {
		out = append(out, r.Arg)
	}
	return out
}

// handler is one hook run: what it was told and where it logs.
type handler struct {
	env     Env
	p       *store.Project // nil when the project is unknown
	session string
	pl      payload
	l       *logger
	// unreadable: the payload could not be read (not JSON, cut short,
	// too late); pl holds nothing.
	unreadable bool
}

// answer writes the hook's JSON answer to Claude Code.
func (h handler) answer(v any) {
	if h.env.Stdout == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		h.l.printf("answer: %v", err)
		return
	}
	if _, err := h.env.Stdout.Write(append(b, '\n')); err != nil {
		h.l.printf("answer: %v", err)
	}
}

// isTerminal reports whether r is a terminal: someone ran the hook by
// hand, and nobody will write a payload.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readPayload reads the one JSON value Claude Code writes on stdin, and
// stops there: it does not wait for the end of stdin, which a caller
// that keeps it open never gives (a hook must return either way). It
// waits at most wait for that value, then goes on without it. Its long
// strings are left out as it is read (reduce): a payload of any size is
// read whole in bounded memory.
func readPayload(r io.Reader, wait time.Duration) (payload, error) {
	if r == nil || isTerminal(r) {
		return payload{}, nil
	}
	type read struct {
		pl  payload
		err error
	}
	ch := make(chan read, 1)
	go func() {
		var pl payload
		raw, dropped, err := reduce(r)
		if err == nil {
			err = json.Unmarshal(raw, &pl)
			pl.Dropped = dropped
		}
		ch <- read{pl, err}
	}()
	var got read
	select {
	case got = <-ch:
	case <-time.After(wait):
		return payload{}, fmt.Errorf("no hook payload on stdin within %s; using the environment only", wait)
	}
	switch {
	case got.err == io.EOF: // nothing on stdin
		return payload{}, nil
	case got.err != nil:
		return payload{}, fmt.Errorf("hook payload is not the expected JSON (%v); using the environment only", got.err)
	}
	return got.pl, nil
}

// project is the project the CLI would find from the payload's cwd:
// CLAUDE_PROJECT_DIR, else the nearest ancestor holding .claude or .git
// (store.FindProject). A session started in a subdirectory must export
// and sweep that project, not the subdirectory. nil when neither is
// known, since guessing from the process's cwd could sweep a wrong
// directory, and when the state directory is behind a link.
func project(env Env, pl payload, l *logger) *store.Project {
	if env.Getenv("CLAUDE_PROJECT_DIR") == "" && pl.Cwd == "" {
		return nil
	}
	p, err := store.FindProject(env.Getenv, pl.Cwd)
	if err == nil {
		// A linked state directory is not the project's: no hook reads,
		// sweeps or logs through it (the directories below it are
		// checked as they are used).
		err = p.RefuseLinkedState()
	}
	if err != nil {
		l.printf("%v", err)
		return nil
	}
	p.LockWait = hookLockWait
	return p
}

// envMarker starts the block written to CLAUDE_ENV_FILE; finding it
// there means the block was already written.
const envMarker = "# flowstate: PATH, CLAUDE_PROJECT_DIR, FLOWSTATE_BIN for bash blocks"

// envScan bounds how much of CLAUDE_ENV_FILE is searched for the
// marker. Claude Code gives each hook its own file, so the block is at
// its start; past the bound it is appended again, which is harmless (it
// extends PATH only when needed), whereas reading a huge file is not.
const envScan = 64 << 10

// writeEnvFile appends the exports later bash blocks need: the Bash tool
// has CLAUDE_CODE_SESSION_ID but neither CLAUDE_PROJECT_DIR nor (for a
// project install) flowstate on its PATH. The path comes from outside,
// so it is opened like flowstate's own files (fsx.OpenFile): never
// through a link, never waiting on a FIFO, only a regular file (not
// /dev/full or /dev/zero, whose reads never end); and it is read only
// up to envScan.
func writeEnvFile(env Env, p *store.Project) error {
	path := env.Getenv("CLAUDE_ENV_FILE")
	if path == "" {
		return errors.New("CLAUDE_ENV_FILE is not set; later bash blocks will not find flowstate unless it is on PATH")
	}
	// Not fsx.AppendLine: the file is Claude Code's (or the user's)
	// script; cutting a "torn" last line would damage it.
	f, err := fsx.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("CLAUDE_ENV_FILE names a file the hook cannot use, so later bash blocks get no PATH or CLAUDE_PROJECT_DIR from it: %w", err)
	}
	defer f.Close()
	head := make([]byte, envScan)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return fmt.Errorf("read CLAUDE_ENV_FILE: %w", err)
	}
	if bytes.Contains(head[:n], []byte(envMarker)) {
		return nil
	}
	block := envBlock(env.Exe, p, env.Getenv("CLAUDE_PLUGIN_ROOT"))
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			block = "\n" + block
		}
	}
	if _, err := f.WriteString(block); err != nil {
		return fmt.Errorf("write CLAUDE_ENV_FILE: %w", err)
	}
	return f.Close()
}

// envBlock renders the shell lines for CLAUDE_ENV_FILE. The file may be
// sourced before every Bash command in one shell, so PATH is extended
// only when the directory is not on it yet. A plugin's hook also says
// where the plugin is (its saved workflows: lib/engine).
func envBlock(exe string, p *store.Project, pluginRoot string) string {
	var b strings.Builder
	b.WriteString(envMarker + "\n")
	if exe != "" {
		dir := statefile.Quote(filepath.Dir(exe))
		fmt.Fprintf(&b, "case \":$PATH:\" in *:%s:*) ;; *) export PATH=%s:\"$PATH\" ;; esac\n", dir, dir)
		fmt.Fprintf(&b, "export FLOWSTATE_BIN=%s\n", statefile.Quote(exe))
	}
	if p != nil {
		fmt.Fprintf(&b, "export CLAUDE_PROJECT_DIR=%s\n", statefile.Quote(p.Dir))
	}
	if pluginRoot != "" {
		fmt.Fprintf(&b, "export %s=%s\n", engine.PluginRootEnv, statefile.Quote(pluginRoot))
	}
	return b.String()
}

// logger writes problems to <project>/.claude/state/hooks.log, or to
// $HOME/.claude/flowstate-hooks.log when there is no project or its state
// directory cannot be written, or to stderr as a last resort.
type logger struct {
	env     Env
	event   string
	project *store.Project
}

// maxLog is where the log is rotated to hooks.log.1, so a hook failing
// in every session cannot fill the disk.
const maxLog = 512 << 10

func (l *logger) printf(format string, a ...any) {
	line := fmt.Sprintf("%s %s: %s\n", l.env.Now.UTC().Format(time.RFC3339), l.event, fmt.Sprintf(format, a...))
	for _, path := range l.paths() {
		if appendLog(path, line) == nil {
			return
		}
	}
	fmt.Fprint(os.Stderr, "flowstate: hook: "+line)
}

func (l *logger) paths() []string {
	var out []string
	if l.project != nil {
		out = append(out, filepath.Join(l.project.StateDir, "hooks.log"))
	}
	if home := l.env.Getenv("HOME"); home != "" {
		out = append(out, filepath.Join(home, ".claude", "flowstate-hooks.log"))
	}
	return out
}

// appendLog appends one line with O_APPEND, which keeps concurrent hooks'
// short lines whole; a human log needs no lock. It opens the log like
// every file of the state directory (fsx.OpenFile): a link planted at
// hooks.log is refused, not written through.
func appendLog(path, line string) error {
	if err := fsx.EnsureDir(filepath.Dir(path)); err != nil {
		return err
	}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() > maxLog {
		// A log that cannot be rotated (a directory planted at
		// hooks.log.1) is not written on: it would grow without bound.
		if err := os.Rename(path, path+".1"); err != nil {
			return fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	f, err := fsx.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
