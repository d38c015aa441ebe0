package app

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The shell completion scripts `flowstate completion` prints. They hold
// no list of commands or flags: on every TAB they ask the binary, through
// urfave/cli's hidden --generate-bash-completion flag
// (EnableBashCompletion in Main), so they never go stale when flowstate
// gains a command.

// completeShells offers the shells `flowstate completion` knows.
func completeShells(c *cli.Context) {
	for _, sh := range shellNames() {
		fmt.Fprintln(c.App.Writer, sh)
	}
}

func shellNames() []string { return []string{"bash", "zsh"} }

var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion}

// bashCompletion passes the words typed before the cursor to flowstate,
// plus the current word when it is a partial flag (urfave/cli lists the
// flags matching the argument just before --generate-bash-completion).
// compgen filters the candidates by the current word; when there are
// none, -o default falls back to file names (for --machine FILE and the
// like).
const bashCompletion = `# bash completion for flowstate; load it with: source <(flowstate completion bash)
_flowstate_complete() {
    COMPREPLY=()
    local cur=${COMP_WORDS[COMP_CWORD]}
    local -a typed=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
    [[ $cur == -* ]] && typed+=("$cur")
    local candidates
    candidates=$("${COMP_WORDS[0]}" "${typed[@]}" --generate-bash-completion 2>/dev/null) || return 0
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F _flowstate_complete flowstate
`

// zshCompletion does the same as the bash script; with the environment
// variable "0" ending in zsh, urfave/cli prints commands as name:usage,
// which _describe shows as descriptions.
const zshCompletion = `#compdef flowstate
# zsh completion for flowstate; load it with: source <(flowstate completion zsh)
# (after compinit), or save it as _flowstate in a directory of $fpath.
_flowstate() {
    local cur=${words[CURRENT]}
    local -a typed candidates
    typed=(${words[2,CURRENT-1]})
    [[ $cur == -* ]] && typed+=($cur)
    candidates=(${(f)"$(env 0=zsh ${words[1]} $typed --generate-bash-completion 2>/dev/null)"})
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
