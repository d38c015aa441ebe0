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
	cur, typed := words[len(words)-1], words[:len(words)-1]
	var cmd *cli.Command
	workflow := ""
	flags := app.Flags
	positional := []string{}
	ended := false // a "--" was typed: no flags after it
	for i := 0; i < len(typed); i++ {
		w := typed[i]
		switch {
		case ended || !strings.HasPrefix(w, "-") || w == "-":
			if cmd == nil {
				if cmd = app.Command(w); cmd == nil {
					return // not a command: nothing to offer
				}
				flags = append(slices.Clone(cmd.Flags), app.Flags...)
				continue
			}
			positional = append(positional, w)
		case w == "--":
			ended = true
		case takesValue(flags, w) && i+1 < len(typed):
			if findFlag(flags, w).Names()[0] == "workflow" {
				workflow = typed[i+1]
			}
			i++
		case strings.HasPrefix(w, "--workflow="):
			workflow = strings.TrimPrefix(w, "--workflow=")
		}
	}
	var out []string
	switch prev := last(typed); {
	case !ended && prev != "" && takesValue(flags, prev):
		out = e.flagValues(findFlag(flags, prev).Names()[0])
	case !ended && strings.HasPrefix(cur, "-"):
		for _, f := range flagNames(visible(flags)) {
			if !slices.Contains(out, dashed(f)) { // a command's own --workflow, and the global one
				out = append(out, dashed(f))
			}
		}
	case cmd == nil:
		for _, c := range app.VisibleCommands() {
			out = append(out, e.described(c.Name, c.Usage))
		}
	default:
		out = e.arguments(cmd.Name, workflow, positional)
	}
	for _, s := range out {
		if name, _, _ := strings.Cut(s, ":"); strings.HasPrefix(name, cur) {
			fmt.Fprintln(e.Stdout, s)
		}
	}
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
// (those it completed, and its current one), a shell, a command.
func (e *env) arguments(command, workflow string, typed []string) []string {
	if len(typed) > 0 && command != "help" {
		return nil
	}
	switch command {
	case "completion":
		return shellNames()
	case "help":
		var out []string
		for _, c := range Commands() {
			if !c.Hidden {
				out = append(out, c.Name)
			}
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
