package orchestrate

import (
	"encoding/json"
	"fmt"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// What an artifact proves about its worker, and the record kept of it.
// Pure: no I/O.

// Checked is what an artifact proved about its worker.
type Checked struct {
	Metadata      json.RawMessage
	FilesModified []string
	TestsFailed   int64
	Failures      []supervisor.Failing
}

// CheckArtifact reads the artifact a worker of r wrote, in the protocol's format
// for r (section 6): a plan for plan-architect, test results JSON for
// test-specialist, a report for every other agent. A file that is not one
// is an error naming what is wrong, so a placeholder never passes.
func CheckArtifact(r Role, data []byte) (Checked, error) {
	var v any
	var c Checked
	switch r.State {
	case "plan":
		phases, err := supervisor.ParsePlan(data)
		if err != nil {
			return c, err
		}
		waves, err := supervisor.Waves(phases)
		if err != nil {
			return c, err
		}
		v = map[string]int{"phases": len(phases), "waves": len(waves)}
	case "test":
		res, err := supervisor.ParseTestResults(data)
		if err != nil {
			return c, err
		}
		v, c.TestsFailed, c.Failures = res, res.TestsFailed, res.Failures
	default:
		meta, err := supervisor.ParseReport(data)
		if err != nil {
			return c, err
		}
		v, c.FilesModified = meta, meta.FilesModified
	}
	b, err := json.Marshal(v)
	c.Metadata = b
	return c, err
}

// WorkerRecord builds the worker record kept in supervisor_state.<key>.workers:
// the label goes to topic, track or stage by the role's kind (docs/supervisors.md).
func WorkerRecord(r Role, w Worker, c Checked, problem error) supervisor.Record {
	rec := supervisor.Record{WorkerID: w.ID, Status: checkpoint.WorkerCompleted, OutputPath: w.Output,
		Metadata: c.Metadata, FilesModified: c.FilesModified}
	switch r.Kind {
	case supervisor.Implementation:
		rec.Track = w.Label
	case supervisor.Testing:
		rec.Stage = w.Label
	default:
		rec.Topic = w.Label
	}
	if problem != nil {
		rec.Status, rec.Metadata, rec.FilesModified = checkpoint.WorkerFailed, nil, nil
		rec.Error = problem.Error()
	}
	return rec
}

// FailureLine names failing tests on one line for the debug analyst's
// prompt, at most three of them and how many more.
func FailureLine(failed int64, fs []supervisor.Failing) string {
	const shown = 3
	line := fmt.Sprintf("%d failing tests", failed)
	for i, f := range fs {
		if i == shown {
			line += fmt.Sprintf("; and %d more", len(fs)-shown)
			break
		}
		line += "; " + f.String()
	}
	return kv.OneLine(line)
}
