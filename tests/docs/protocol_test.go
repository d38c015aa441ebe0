package docs

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/internal/playback"
)

// agent does what an agent would for one task: write files, answer.
type agent func(prompt string) (answer string, err error)

// newRunner plays a command file the way docs/command-protocol.md says a
// model must (playback.Runner): bash blocks run as written, each in its
// own process in dir with procEnv; KEY=VALUE lines feed ${KEY} in later
// task blocks; NEXT=<section> jumps; NEXT=done or a failing block ends
// the run. Task blocks go to the fake agents, by subagent_type. Claude
// Code's own substitutions ($ARGUMENTS, ${CLAUDE_PLUGIN_ROOT}) are
// applied to the whole file first.
func newRunner(t *testing.T, command, arguments, pluginRoot, dir string, procEnv []string, agents map[string]agent) *playback.Runner {
	t.Helper()
	md, err := os.ReadFile(command)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("$ARGUMENTS", arguments, "${CLAUDE_PLUGIN_ROOT}", pluginRoot).Replace(string(md))
	d, err := protocol.Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return playback.NewRunner(command, d, dir, procEnv, func(calls []protocol.Invocation) ([]string, error) {
		var answers []string
		for _, c := range calls {
			a, ok := agents[c.SubagentType]
			if !ok {
				return nil, fmt.Errorf("no agent %q", c.SubagentType)
			}
			answer, err := a(c.Prompt)
			if err != nil {
				return nil, fmt.Errorf("agent %s: %v", c.SubagentType, err)
			}
			answers = append(answers, answer)
		}
		return answers, nil
	})
}

// writeAgent returns an agent that writes content(prompt) to the path
// its prompt names and answers as the prompt asks.
func writeAgent(content func(prompt string) string) agent {
	return func(prompt string) (string, error) {
		paths := protocol.WriteTargets(prompt)
		if len(paths) != 1 {
			return "", fmt.Errorf("prompt must name one file to write, names %q:\n%s", paths, prompt)
		}
		if err := os.WriteFile(paths[0], []byte(content(prompt)), 0o644); err != nil {
			return "", err
		}
		return "REPORT_CREATED: " + paths[0], nil
	}
}
