package standin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// task is a parsed ```task block (command protocol, section 3); the
// markdown is read by lib/protocol, which flowstate lint and the plugin
// and docs tests share.
type task struct{ protocol.Task }

func parseTask(body string) (task, error) {
	t, err := protocol.ParseTask(body)
	return task{t}, err
}

// invocation is one Agent tool call a task block expands to.
type invocation struct {
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	// Background is what the call passes as run_in_background; nil leaves
	// it out (Claude Code's default then runs the agent in the background).
	Background *bool `json:"run_in_background,omitempty"`
	// Isolation is the task block's isolation ("worktree"), "" for none.
	Isolation string `json:"isolation,omitempty"`
}

var forEachRE = regexp.MustCompile(`^([A-Za-z_]\w*)\s+in\s+(-?\d+)\.\.(-?\d+)$`)

// expand substitutes env into the task and unrolls for_each.
func (t task) expand(env map[string]string) ([]invocation, error) {
	if t.ForEach == "" {
		return []invocation{t.instance(env, "", 0)}, nil
	}
	spec := substitute(t.ForEach, env)
	m := forEachRE.FindStringSubmatch(spec)
	if m == nil {
		return nil, fmt.Errorf("for_each %q: want \"i in 1..N\" with N known", spec)
	}
	from, _ := strconv.Atoi(m[2])
	to, _ := strconv.Atoi(m[3])
	var out []invocation
	for n := from; n <= to; n++ {
		out = append(out, t.instance(env, m[1], n))
	}
	return out, nil
}

func (t task) instance(env map[string]string, loopVar string, n int) invocation {
	sub := func(s string) string {
		if loopVar != "" {
			s = strings.ReplaceAll(s, "_"+loopVar+"}", "_"+strconv.Itoa(n)+"}")
			s = strings.ReplaceAll(s, "${"+loopVar+"}", strconv.Itoa(n))
		}
		return substitute(s, env)
	}
	inv := invocation{SubagentType: sub(t.SubagentType), Description: sub(t.Description), Prompt: sub(t.Prompt), Isolation: t.Isolation}
	if t.Foreground {
		inv.Background = new(bool)
	}
	return inv
}
