package lint

import (
	"maps"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// printers is what each flowstate command prints for the steps after the
// block that calls it, by command name, from the packages that print it:
// the orchestrator steps' table, and the keys of the pairs sm and
// supervisor print (all of them: a hold is given to Outcome so that it
// prints WAITING_FOR too).
var printers = sync.OnceValue(func() map[string]protocol.Prints {
	p := orchestrate.Prints()
	keys := func(ps kv.Pairs) protocol.Prints {
		var out protocol.Prints
		for _, pair := range ps {
			out.Keys = append(out.Keys, pair.Key)
		}
		return out
	}
	p["sm-status"] = keys(sm.Status{}.Pairs())
	p["supervisor-status"] = keys(supervisor.Progress{}.Pairs())
	outcome := keys(sm.Status{Hold: &checkpoint.Hold{Kind: checkpoint.HoldApproval}}.Outcome())
	for _, person := range []string{"approve", "reject", "pause", "unpause", "cancel", "rewind"} {
		p[person] = outcome
	}
	return p
})

// Printers returns what each flowstate command prints for the steps after
// the block that calls it, by command name: the table the rules check
// task blocks and jumps against.
func Printers() map[string]protocol.Prints { return maps.Clone(printers()) }
