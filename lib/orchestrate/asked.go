package orchestrate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// What the user typed is theirs; what a model runs is not. The
// UserPromptSubmit hook records, for each Claude Code session, the slash
// command the user's latest prompt invoked, and the decisions only a person
// makes (approve, reject, letting a paused workflow go on) run inside
// Claude Code only under the prompt that asked for them. A model that
// decides on its own, in a Bash block or through the Skill tool, is
// refused. A session with no record (the hooks are not installed) is not
// checked.

// userShell is what a prompt typed in Claude Code's bash mode ("!cmd")
// invokes: the user's own shell, where they run what they like.
const userShell = "!"

type prompt struct {
	Command string    `json:"command"` // the slash command without its plugin prefix, "!" or ""
	At      time.Time `json:"at"`
}

// promptsDir holds the prompt records.
const promptsDir = "prompts"

func promptPath(p *store.Project, session string) string {
	return filepath.Join(p.StateDir, promptsDir, session)
}

// Prompted records what the user's prompt text invoked in session.
func Prompted(p *store.Project, session, text string, now time.Time) error {
	if store.ValidID(session) != nil {
		return nil
	}
	if _, err := p.RecordDir(promptsDir); err != nil {
		return err
	}
	b, _ := json.Marshal(prompt{Command: invoked(text), At: now.UTC()}) // plain fields always marshal
	return fsx.WriteFile(promptPath(p, session), append(b, '\n'))
}

// invoked is what a prompt invokes: "/flowstate:workflow-approve ok" and
// "/workflow-approve ok" the command workflow-approve, "!ls" the user's
// shell, anything else nothing.
func invoked(text string) string {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, userShell) {
		return userShell
	}
	first, _, _ := strings.Cut(text, " ")
	name, ok := strings.CutPrefix(strings.TrimSpace(first), "/")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(name, "flowstate:")
}

// Typed is the slash command the user's latest prompt in session invoked,
// without flowstate's own prefix ("coordinate", "review:check"); "" when
// none was recorded or it invoked none.
func Typed(p *store.Project, session string) string {
	pr, ok := lastPrompt(p, session)
	if !ok || pr.Command == userShell {
		return ""
	}
	return pr.Command
}

// PromptedAt is when the user last submitted a prompt in session, as the
// UserPromptSubmit hook recorded it; zero when nothing was recorded.
func PromptedAt(p *store.Project, session string) time.Time {
	pr, ok := lastPrompt(p, session)
	if !ok {
		return time.Time{}
	}
	return pr.At
}

// lastPrompt reads the session's prompt record.
func lastPrompt(p *store.Project, session string) (prompt, bool) {
	var pr prompt
	if session == "" || store.ValidID(session) != nil {
		return pr, false
	}
	b, err := fsx.ReadFile(promptPath(p, session), 4<<10)
	if err != nil || json.Unmarshal(b, &pr) != nil {
		return prompt{}, false
	}
	return pr, true
}

// UserAsked reports whether the user's latest prompt in session asked for
// command (or was their own shell); known is false when nothing was
// recorded for the session, and then nothing can be said.
func UserAsked(p *store.Project, session, command string) (asked, known bool) {
	pr, ok := lastPrompt(p, session)
	if !ok {
		return false, false
	}
	return pr.Command == command || pr.Command == userShell, true
}

// RefuseUnasked refuses a person's decision (verb, asked for with the
// slash command command) that a model runs inside Claude Code on its own:
// in a session, the user's latest prompt must be that command (or their
// own shell, "!"), as the UserPromptSubmit hook recorded. inside says the
// process runs under Claude Code (lib/ancestry, which finds session in
// its ancestors when its own environment was cleared); there, a process
// no ancestor names a session for is refused. Outside Claude Code, or
// without the hook's record, the person at the keyboard decides.
func RefuseUnasked(w *store.Workflow, session string, inside bool, command, verb string) error {
	if asked, known := UserAsked(w.P, session, command); (!known || asked) && (session != "" || !inside) {
		return nil
	}
	return fail.Refusedf("only the user can %s workflow %s: they type %s in Claude Code (or run `flowstate %s` in a terminal); a model never decides for them", verb, w.ID, Slash(w.P, command), verb)
}
