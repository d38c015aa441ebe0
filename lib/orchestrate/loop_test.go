package orchestrate

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// A recovery state whose workers are the same in every run (an id
// without {run}, which a definition can no longer have) would count one
// completed run as all of them: settling the loop stops with an error
// instead of counting for ever.
func TestSettleLoopIsBounded(t *testing.T) {
	m := machine.Default()
	debug := m.Work["debug"]
	debug.ID = "debug"
	m.Work["debug"] = debug
	v := &view{
		w:       &store.Workflow{ID: "wf-1"},
		m:       m,
		state:   "test",
		facts:   Facts{SpecDir: "/s", Description: "x", Loop: testLoop(1, 0)},
		records: map[string]map[string]supervisor.Record{debug.RecordsKey("debug"): {"debug": {WorkerID: "debug", Status: checkpoint.WorkerCompleted}}},
	}
	err := v.settleLoop()
	if err == nil || fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "workflow wf-1, state test") || !strings.Contains(err.Error(), "cannot end") {
		t.Fatalf("settleLoop = %v, want an exit-4 error naming the workflow and state", err)
	}
}
