package supervisor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The I/O of supervision: a supervisor's worker records in a stored
// workflow's checkpoint (read, and upserted under the workflow lock) and
// what aggregation reads from disk (each worker's output, the line counts
// of modified files). It never touches a checkpoint outside
// supervisor_state.

// WorkersPath is where supervisor name keeps its worker records in the
// checkpoint.
func WorkersPath(name string) string { return checkpoint.SupervisorState(name, "workers") }

// Records returns the worker records supervisor name keeps in doc, the
// checkpoint of workflow id; none when it has none.
func Records(doc []byte, id, name string) ([]Record, error) {
	raw, ok, err := checkpoint.Get(doc, WorkersPath(name))
	if err != nil || !ok {
		return nil, err
	}
	recs, err := ParseRecords([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("workflow %s, %s: %w", id, WorkersPath(name), err)
	}
	return recs, nil
}

// Upsert stores rec among supervisor name's workers, replacing the record
// with its worker_id. Workers may record at the same moment: the read,
// the upsert and the write all hold the workflow lock.
func Upsert(w *store.Workflow, name string, rec Record) error {
	return w.Update(func(tx *store.Tx) error {
		if err := UpsertTx(tx, name, rec); err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		tx.Event("supervisor-record", map[string]any{"supervisor": name, "worker_id": rec.WorkerID, "status": rec.Status})
		return nil
	})
}

// UpsertTx stores recs among supervisor name's workers in the checkpoint
// of tx, each replacing the record with its worker_id, for a caller that
// writes more in the same locked update. The caller records its events.
func UpsertTx(tx *store.Tx, name string, recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	path := WorkersPath(name)
	raw, _, err := checkpoint.Get(tx.Checkpoint, path)
	if err != nil {
		return err
	}
	list := []byte(raw)
	for _, rec := range recs {
		if list, err = upsert(list, rec, tx.Now); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	doc, err := checkpoint.Set(tx.Checkpoint, path, list, tx.Now)
	if err != nil {
		return err
	}
	tx.Checkpoint = doc
	return nil
}

// Status sorts supervisor name's recorded workers, and the expected ids
// never recorded, for a resumed phase.
func Status(w *store.Workflow, name string, expected []string) (Progress, error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return Progress{}, err
	}
	recs, err := Records(doc, w.ID, name)
	if err != nil {
		return Progress{}, err
	}
	return progressOf(recs, expected), nil
}

// Dirs anchor the relative paths in worker records: output_path is
// relative to the working directory, files_modified to the project
// (protocol section 6).
type Dirs struct {
	Cwd, Project string
	SpanMs       int64 // how long the workers took together, when measured (inputs)
}

// Warning is what Aggregate says besides the aggregate: an output it could
// not read, or a worker that failed (Failed), which a caller that reports
// the failures itself leaves out.
type Warning struct {
	Worker string
	Failed bool
	Text   string
}

func (w Warning) String() string { return w.Text }

// Aggregate reads what the records point to and returns the
// aggregated_metadata of kind. The warnings, set even with an error, name
// outputs that could not be read and then workers that failed.
func Aggregate(kind Kind, recs []Record, d Dirs) ([]byte, []Warning, error) {
	in := inputs{SpanMs: d.SpanMs}
	var warnings []Warning
	in.Outputs, warnings = readOutputs(recs, d.Cwd)
	if kind == Implementation {
		in.FileLines = fileLines(d.Project)
	}
	out, err := aggregate(kind, recs, in)
	if err != nil {
		return nil, warnings, err
	}
	var partial struct {
		Failures []Failure `json:"partial_failures"`
	}
	_ = json.Unmarshal(out, &partial) // out was just marshalled
	for _, f := range partial.Failures {
		warnings = append(warnings, Warning{Worker: f.WorkerID, Failed: true, Text: fmt.Sprintf("worker %s failed: %s", f.WorkerID, f.Error)})
	}
	return out, warnings, nil
}

// readOutputs reads each record's output_path. A file that cannot be read
// is left out: aggregate then lists its worker among the failures, with
// the path; one too large is also a warning.
func readOutputs(recs []Record, cwd string) (map[string][]byte, []Warning) {
	out := map[string][]byte{}
	var warnings []Warning
	for _, r := range recs {
		if r.OutputPath == "" {
			continue
		}
		f, err := fsx.OpenRegular(under(cwd, r.OutputPath))
		if err != nil {
			continue
		}
		if b, err := limit.ReadAll(f, r.OutputPath); err == nil {
			out[r.OutputPath] = b
		} else {
			warnings = append(warnings, Warning{Worker: r.WorkerID, Text: fmt.Sprintf("worker %s: %v", r.WorkerID, err)})
		}
		f.Close()
	}
	return out, warnings
}

// fileLines counts the lines of a modified file.
func fileLines(dir string) func(string) (int, bool) {
	return func(path string) (int, bool) {
		f, err := fsx.OpenRegular(under(dir, path))
		if err != nil {
			return 0, false
		}
		defer f.Close()
		n := 0
		s := bufio.NewScanner(f)
		s.Buffer(nil, limit.Max)
		for s.Scan() {
			n++
		}
		return n, s.Err() == nil
	}
}

// under resolves path against dir unless it is absolute.
func under(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
