package orchestrate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
	"unicode"

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
	// Name is the slash command as typed ("flowstate:coordinate",
	// "audit"), and Args its arguments as Claude Code substitutes them
	// for $ARGUMENTS (the text after the name, trimmed; left out past
	// maxArgs): the PreToolUse hook grants the command's own steps.
	Name string `json:"name,omitempty"`
	Args string `json:"args,omitempty"`
}

// maxArgs bounds the arguments a prompt record keeps; a command given
// more has none of its steps that hold them granted, and is asked about.
const maxArgs = 64 << 10

// maxPromptRecord bounds the read of a prompt record.
const maxPromptRecord = 2 * maxArgs

// notification starts the prompt text Claude Code submits when a
// background agent ends (UserPromptSubmit fires for it too): not the
// user's, so it leaves the record of what the user typed as it is.
const notification = "<task-notification>"

// promptsDir holds the prompt records.
const promptsDir = "prompts"

func promptPath(p *store.Project, session string) string {
	return filepath.Join(p.StateDir, promptsDir, session)
}

// Prompted records what the user's prompt text invoked in session.
func Prompted(p *store.Project, session, text string, now time.Time) error {
	if store.ValidID(session) != nil || strings.HasPrefix(strings.TrimSpace(text), notification) {
		return nil
	}
	if _, err := p.RecordDir(promptsDir); err != nil {
		return err
	}
	pr := prompt{Command: invoked(text), At: now.UTC()}
	if pr.Command != "" && pr.Command != userShell {
		pr.Name, pr.Args = slashCommand(text)
		if len(pr.Args) > maxArgs {
			pr.Args = ""
		}
	}
	b, _ := json.Marshal(pr) // plain fields always marshal
	return fsx.WriteFile(promptPath(p, session), append(b, '\n'))
}

// invoked is what a prompt invokes: "/flowstate:workflow-approve ok" and
// "/workflow-approve ok" the command workflow-approve, "!ls" the user's
// shell, anything else nothing.
func invoked(text string) string {
	if strings.HasPrefix(strings.TrimSpace(text), userShell) {
		return userShell
	}
	name, _ := slashCommand(text)
	return strings.TrimPrefix(name, "flowstate:")
}

// slashCommand splits a prompt that invokes a slash command into the
// command's name as typed and its arguments, as Claude Code does: the
// name runs to the first white space, the arguments are the rest,
// trimmed. name is "" for a prompt that invokes none.
func slashCommand(text string) (name, args string) {
	text = strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return "", ""
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		return rest, ""
	}
	return rest[:end], strings.TrimSpace(rest[end:])
}

// Invoked is the slash command the user's latest prompt in session
// invoked, as typed ("flowstate:coordinate", "audit"), and its
// arguments; ok is false when it invoked none (or nothing was
// recorded).
func Invoked(p *store.Project, session string) (name, args string, ok bool) {
	pr, found := lastPrompt(p, session)
	if !found || pr.Name == "" {
		return "", "", false
	}
	return pr.Name, pr.Args, true
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
	b, err := fsx.ReadFile(promptPath(p, session), maxPromptRecord)
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
