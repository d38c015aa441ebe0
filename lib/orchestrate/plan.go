package orchestrate

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// advance moves the workflow past every finished state and returns a view
// of the first state with work left, or, with done, of the finished
// workflow's last state.
func advance(w *store.Workflow) (v *view, done bool, err error) {
	for {
		if v, err = load(w); err != nil || !v.complete() {
			return v, false, err
		}
		next, err := sm.Next(w, v.state == "test" && v.facts.Loop.OwesDebug())
		if err != nil || next == "" {
			return v, err == nil, err
		}
		if _, err := sm.Transition(w, next, v.state+" finished"); err != nil {
			return nil, false, err
		}
	}
}

// Plan returns the next batch of workers of the workflow: the agent, its
// artifact, the context to read and each worker's topic and output path,
// after advancing past finished states (NEXT=done once there are none).
// inSupervisor plans the current state only and never delegates.
func Plan(w *store.Workflow, inSupervisor bool) (Output, error) {
	var out Output
	var v *view
	var err error
	if inSupervisor {
		v, err = load(w)
	} else {
		var done bool
		if v, done, err = advance(w); err == nil && done {
			return finish(v)
		}
	}
	if err != nil {
		return out, err
	}
	if !v.hasRole {
		return out, fail.Usagef("workflow %s is in state %s, which has no agents to run", w.ID, v.state)
	}
	batch, remaining := phase.Pending(v.workers, v.done, v.sequential)
	supervise, err := phase.Supervise(v.role, v.workers, v.sequential)
	if err != nil {
		return out, err
	}
	for _, wk := range batch {
		if err := os.MkdirAll(filepath.Dir(wk.Output), 0o755); err != nil {
			return out, err
		}
	}
	out.add("WORKFLOW_ID", w.ID)
	out.add("STATE", v.state)
	out.add("AGENT", v.role.Agent)
	out.add("ARTIFACT", v.role.Artifact)
	out.add("DESCRIPTION", v.facts.Description)
	out.add("CONTEXT", phase.Context(v.state, outputs(v.records)))
	out.add("REMAINING", remaining)
	out.add("WORKER_COUNT", len(batch))
	for i, wk := range batch {
		out.add(numbered("TOPIC", i), wk.Label)
		out.add(numbered("OUTPUT_PATH", i), wk.Output)
	}
	if supervise && !inSupervisor && len(batch) > 0 {
		out.add("SUPERVISOR", v.role.Supervisor)
		out.add("NEXT", "supervised")
	}
	if !inSupervisor {
		coord := "flat"
		if supervise {
			coord = "hierarchical"
		}
		if err := setPhaseData(w, v.state, map[string]string{"coordination": coord}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// numbered is the key of the i-th (0-based) item of a list: TOPIC_1, ...
func numbered(key string, i int) string { return key + "_" + strconv.Itoa(i+1) }

// finish marks the finished workflow of view v complete and lists its
// artifacts, in workflow order, with NEXT=done.
func finish(v *view) (Output, error) {
	var out Output
	if err := sm.Finish(v.w, "complete"); err != nil {
		return out, err
	}
	out.add("WORKFLOW_ID", v.w.ID)
	out.add("FINAL_STATE", v.state)
	out.add("ARTIFACTS_DIR", v.facts.SpecDir)
	arts := artifacts(outputs(v.records))
	for i, p := range arts {
		out.add(numbered("ARTIFACT", i), p)
	}
	out.add("ARTIFACT_COUNT", len(arts))
	out.add("NEXT", "done")
	return out, nil
}

// artifacts flattens the outputs per state in workflow order.
func artifacts(outputs map[string][]string) []string {
	var all []string
	for _, role := range phase.Roles() {
		all = append(all, outputs[role.State]...)
	}
	return all
}
