package timeline

import (
	"sort"
	"time"
)

// How an agent is known. PreToolUse records a launch with the worker its
// prompt is for; SubagentStart the agent's id, with no prompt (Claude Code
// 2.1.328 writes the agent's transcript only after the hook ran);
// SubagentStop and PostToolUse the id with the worker its prompt names.
// Agents launched in one message start in any order, so a start is never
// paired with a launch by order: each agent is its worker's by the worker
// its own events (or Input.Workers) name, and only where that leaves one
// agent and one launch of a kind unpaired are they each other's.

// launchSlack is how much later than the agent's start its launch can be
// recorded: a run known only from its usage starts at the Agent call's
// own clock, a moment before the PreToolUse hook wrote the launch.
const launchSlack = time.Second

// pair joins each launch to the agent it started and drops the launch's
// own entry; a launch whose agent was never seen (no SubagentStart hook,
// or the moment between the two) stays a bar of its own. Then the agents
// are in the order they started, and a worker run again counts its
// attempts.
func (b *builder) pair() {
	agents := b.t.Agents
	for i := range agents {
		if a := &agents[i]; a.Worker == "" && a.ID != "" {
			a.Worker = b.in.Workers[a.ID]
		}
	}
	order := startOrder(agents)
	used := make([]bool, len(agents))
	launches := map[string][]int{} // worker -> its launches, in order
	for _, i := range order {
		if a := agents[i]; a.launch && a.Worker != "" {
			launches[a.Worker] = append(launches[a.Worker], i)
		}
	}
	for _, i := range order {
		if a := &agents[i]; !a.launch && a.Worker != "" {
			if j := launchOf(agents, used, *a, launches[a.Worker]); j >= 0 {
				used[j] = true
				absorb(a, agents[j], false)
			}
		}
	}
	eliminate(agents, used, order)
	var kept []Agent
	for _, i := range order {
		if !used[i] {
			kept = append(kept, agents[i])
		}
	}
	attempts := map[string]int{}
	for i := range kept {
		if w := kept[i].Worker; w != "" {
			attempts[w]++
			kept[i].Attempt = attempts[w]
		}
	}
	b.t.Agents = kept
}

// kind is the agents that can stand for one another: of one type,
// launched by one session in one stay of a state.
type kind struct {
	session, typ, state string
	epoch               int
}

// eliminate pairs, of each kind in the order its agents started, an
// agent no event names the worker of with the one launch left that can be
// its (launched before it started): every other is another agent's.
// Where more than one is left, which agent answers which launch is not
// known: the earliest is taken (no bar of its own), no worker is claimed,
// and neither for any later agent of the kind.
func eliminate(agents []Agent, used []bool, order []int) {
	unknown, open := map[kind][]int{}, map[kind][]int{}
	var kinds []kind
	for _, i := range order {
		a := agents[i]
		k := kind{a.Session, a.Type, a.State, a.Epoch}
		switch {
		case a.launch && !used[i]:
			open[k] = append(open[k], i)
		case !a.launch && a.Worker == "" && a.ID != "":
			if len(unknown[k]) == 0 {
				kinds = append(kinds, k)
			}
			unknown[k] = append(unknown[k], i)
		}
	}
	for _, k := range kinds {
		ambiguous := false
		for _, i := range unknown[k] {
			a := &agents[i]
			var can []int
			for _, j := range open[k] {
				if !used[j] && !agents[j].Start.After(a.Start.Add(launchSlack)) {
					can = append(can, j)
				}
			}
			if len(can) == 0 {
				continue
			}
			named := len(can) == 1 && !ambiguous
			ambiguous = ambiguous || !named
			used[can[0]] = true
			absorb(a, agents[can[0]], named)
		}
	}
}

// launchOf is the unused launch of launches (in order) that is a's: the
// latest launched before a started, else the earliest; -1 for none.
func launchOf(agents []Agent, used []bool, a Agent, launches []int) int {
	best, first := -1, -1
	for _, j := range launches {
		if used[j] {
			continue
		}
		if first < 0 {
			first = j
		}
		if !agents[j].Start.After(a.Start.Add(launchSlack)) {
			best = j
		}
	}
	if best < 0 {
		return first
	}
	return best
}

// absorb gives agent a what its launch l knew: when it was launched, for
// an agent whose start was not recorded, and (named) l's worker.
func absorb(a *Agent, l Agent, named bool) {
	if !a.started && l.Start.Before(a.Start) {
		a.Start = l.Start
	}
	if named && a.Worker == "" {
		a.Worker = l.Worker
	}
	if a.Session == "" {
		a.Session = l.Session
	}
}

// startOrder lists the agents' indices in the order they started.
func startOrder(agents []Agent) []int {
	order := make([]int, len(agents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return agents[order[i]].Start.Before(agents[order[j]].Start) })
	return order
}

// Workers names the worker of each agent, by its id, as the agents were
// paired with their launches: what `flowstate history` says of an agent's
// events that do not name it.
func (t Timeline) Workers() map[string]string {
	out := map[string]string{}
	for _, a := range t.Agents {
		if a.ID != "" && a.Worker != "" {
			out[a.ID] = a.Worker
		}
	}
	return out
}
