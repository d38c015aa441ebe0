package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The shell completion scripts `flowstate completion` prints. They hold
// no list of commands, flags or states: on every TAB they pass the words
// typed, the one under the cursor last (empty when there is none yet), to
// `flowstate ... --generate-bash-completion`, and Main answers from the
// same definitions the binary runs (complete), so they never go stale.
// urfave/cli's own answer is not used: it reads os.Args, offers a
// command's "help h" where its arguments go, and with a "--" typed runs
// the command instead of completing it.

// completeFlag is the last word of a completion request.
const completeFlag = "--generate-bash-completion"

func shellNames() []string { return []string{"bash", "zsh"} }

var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion}

// bashCompletion passes the words typed before the cursor and the current
// one; compgen filters the candidates by the current word; when there are
// none, -o default falls back to file names (for --machine FILE and the
// like).
const bashCompletion = `# bash completion for flowstate; load it with: source <(flowstate completion bash)
_flowstate_complete() {
    COMPREPLY=()
    local cur=${COMP_WORDS[COMP_CWORD]}
    local -a typed=("${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur")
    local candidates
    candidates=$("${COMP_WORDS[0]}" "${typed[@]}" --generate-bash-completion 2>/dev/null) || return 0
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F _flowstate_complete flowstate
`

// zshCompletion does the same as the bash script; with the environment
// variable "0" ending in zsh, commands come as name:usage, which _describe
// shows as descriptions.
const zshCompletion = `#compdef flowstate
# zsh completion for flowstate; load it with: source <(flowstate completion zsh)
# (after compinit), or save it as _flowstate in a directory of $fpath.
_flowstate() {
    local -a typed candidates
    typed=("${(@)words[2,CURRENT-1]}" "${words[CURRENT]}")
    candidates=(${(f)"$(env 0=zsh ${words[1]} "${typed[@]}" --generate-bash-completion 2>/dev/null)"})
    if (( ${#candidates} == 0 )); then
        _files
        return
    fi
    _describe -t flowstate 'flowstate' candidates
}
if [[ ${funcstack[1]} == _flowstate ]]; then
    _flowstate "$@"
else
    compdef _flowstate flowstate
fi
`

// complete prints what may take the place of the last of words (the
// typed words after the program name, the one being completed last):
// a value for the flag before it (workflow ids for --workflow, scopes for
// --scope, shells), a flag when it starts with "-", else what the command
// takes there (states for sm-transition and rewind), or the commands.
func (e *env) complete(app *cli.App, words []string) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	t, ok := readTyped(app, before)
	if !ok {
		return // not a command: nothing to offer
	}
	for _, s := range e.candidates(app, t, last(before), cur) {
		if name, _, _ := strings.Cut(s, ":"); strings.HasPrefix(name, cur) {
			fmt.Fprintln(e.Stdout, s)
		}
	}
}

// typed is what the words before the one being completed say.
type typed struct {
	cmd        *cli.Command // nil: none typed yet
	flags      []cli.Flag   // those that may follow: the command's and the global ones
	workflow   string       // --workflow's value
	positional []string
	ended      bool // a "--" was typed: no flags after it
}

// readTyped reads words as urfave would, false when a word where the
// command goes is none.
func readTyped(app *cli.App, words []string) (typed, bool) {
	t := typed{flags: app.Flags}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case t.ended || !strings.HasPrefix(w, "-") || w == "-":
			if t.cmd != nil {
				t.positional = append(t.positional, w)
				continue
			}
			if t.cmd = app.Command(w); t.cmd == nil {
				return t, false
			}
			t.flags = append(slices.Clone(t.cmd.Flags), app.Flags...)
		case w == "--":
			t.ended = true
		case takesValue(t.flags, w) && i+1 < len(words):
			if findFlag(t.flags, w).Names()[0] == "workflow" {
				t.workflow = words[i+1]
			}
			i++
		case strings.HasPrefix(w, "--workflow="):
			t.workflow = strings.TrimPrefix(w, "--workflow=")
		}
	}
	return t, true
}

// candidates are what may follow t, prev being the last word typed and
// cur the one being completed.
func (e *env) candidates(app *cli.App, t typed, prev, cur string) []string {
	var out []string
	switch {
	case !t.ended && prev != "" && takesValue(t.flags, prev):
		return e.flagValues(findFlag(t.flags, prev).Names()[0])
	case !t.ended && strings.HasPrefix(cur, "-"):
		for _, f := range flagNames(visible(t.flags)) {
			if !slices.Contains(out, dashed(f)) { // a command's own --workflow, and the global one
				out = append(out, dashed(f))
			}
		}
	case t.cmd == nil:
		for _, c := range app.VisibleCommands() {
			out = append(out, e.described(c.Name, c.Usage))
		}
	default:
		out = e.arguments(app, t.cmd.Name, t.workflow, t.positional)
	}
	return out
}

func last(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[len(ss)-1]
}

// visible leaves out flags nobody types: urfave's hidden ones.
func visible(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// described is a candidate with its description for zsh (which runs the
// completion with 0=zsh and shows name:description), the name alone for
// bash.
func (e *env) described(name, desc string) string {
	if !strings.HasSuffix(e.Getenv("0"), "zsh") || desc == "" {
		return name
	}
	return name + ":" + strings.ReplaceAll(desc, ":", `\:`)
}

// flagValues are the values flag takes, where flowstate knows them.
func (e *env) flagValues(flag string) []string {
	switch flag {
	case "workflow":
		p, err := e.Project()
		if err != nil {
			return nil
		}
		all, err := p.List()
		if err != nil {
			return nil
		}
		var out []string
		for _, s := range all {
			out = append(out, e.described(s.ID, s.Status+" in "+s.CurrentState))
		}
		return out
	case "scope":
		return machine.Default().ScopeNames()
	}
	return nil
}

// arguments are what command takes as its next positional argument: a
// state for sm-transition (those the workflow may move to) and rewind
// (those it completed, and its current one), a shell, a command of app.
func (e *env) arguments(app *cli.App, command, workflow string, typed []string) []string {
	if len(typed) > 0 && command != "help" {
		return nil
	}
	switch command {
	case "completion":
		return shellNames()
	case "help":
		var out []string
		for _, c := range app.VisibleCommands() {
			out = append(out, c.Name)
		}
		return out
	case "sm-transition", "rewind":
		return e.states(command, workflow)
	}
	return nil
}

// states offers the states of the workflow a command would act on; all
// the default machine's when none is found.
func (e *env) states(command, workflow string) []string {
	w, err := e.completionWorkflow(workflow)
	if err != nil {
		return machine.Default().States()
	}
	doc, m, err := sm.Load(w)
	if err != nil {
		return machine.Default().States()
	}
	v := checkpoint.HeadOf(doc)
	current := v.CurrentState
	if command == "rewind" {
		var out []string
		for _, s := range v.CompletedStates {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if !slices.Contains(out, current) {
			out = append(out, current)
		}
		return out
	}
	var out []string
	for _, s := range m.States() {
		if m.Allowed(current, s) {
			out = append(out, s)
		}
	}
	return out
}

// completionWorkflow is the workflow a command being typed would act on.
func (e *env) completionWorkflow(flag string) (*store.Workflow, error) {
	p, err := e.Project()
	if err != nil {
		return nil, err
	}
	return p.Resolve(store.Selector{Flag: flag, Env: e.Getenv("FLOWSTATE_WORKFLOW"), Session: e.Getenv("CLAUDE_CODE_SESSION_ID")})
}
