package orchestrate

import (
	"path/filepath"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// maxCommandFile bounds the read of a command's markdown.
const maxCommandFile = 256 << 10

// CommandAgents are the agents a command on the low-level API launches,
// read from its own task blocks, so that the hooks hold them without the
// command listing them again (sm-init --agents, when given, is what the
// workflow has instead). The command is found as Claude Code finds a
// project's or a user's own: .claude/commands/NAME.md in the project,
// then in home, for the name sm-init was given and, when that finds no
// file, the command the session's user invoked. A command of a plugin is
// not found here: its sm-init names its agents.
func CommandAgents(p *store.Project, home, session, command string) []string {
	names := []string{command}
	if invoked, _, ok := Invoked(p, session); ok && invoked != command && !strings.Contains(invoked, ":") {
		names = append(names, invoked)
	}
	for _, name := range names {
		if protocol.CheckCommandName(name) != nil {
			continue
		}
		for _, dir := range []string{p.Dir, home} {
			if dir == "" {
				continue
			}
			md, err := fsx.ReadRegular(filepath.Join(dir, ".claude", "commands", name+".md"), maxCommandFile)
			if err != nil {
				continue
			}
			var agents []string
			for _, a := range protocol.LaunchedAgents(string(md)) {
				if machine.ValidAgentName(a) {
					agents = append(agents, a)
				}
			}
			return agents
		}
	}
	return nil
}
