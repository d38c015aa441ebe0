package supervisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Bounds on durations (about 31 years) and counts, far above any real
// value, so that sums over many workers or phases cannot overflow int64.
const (
	maxMs    = 1e12
	maxCount = 1e12
)

// Record is one worker of a supervisor, as stored in
// supervisor_state.<name>.workers (docs/supervisors.md). Exactly one of
// Topic (research), Track (implementation) or Stage (testing) names the
// work; FilesModified is the per-track list of implementation tracks.
// Metadata is kept raw so
// that fields this package does not know survive an upsert.
type Record struct {
	WorkerID   string `json:"worker_id"`
	Topic      string `json:"topic,omitempty"`
	Track      string `json:"track,omitempty"`
	Stage      string `json:"stage,omitempty"`
	Status     string `json:"status"`
	OutputPath string `json:"output_path,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
	// StartedAt is when the worker was first recorded running (RFC 3339),
	// so that its duration is measured when it ends.
	StartedAt     string          `json:"started_at,omitempty"`
	FilesModified []string        `json:"files_modified,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Error         string          `json:"error,omitempty"`
}

// metadata is the union of the metadata fields the aggregations read; the
// pointers tell a missing count from a zero.
type metadata struct {
	Title           string    `json:"title"`
	Summary         string    `json:"summary"`
	KeyFindings     []string  `json:"key_findings"`
	FilesModified   []string  `json:"files_modified"`
	TotalLines      *int64    `json:"total_lines"`
	TotalTests      *int64    `json:"total_tests"`
	TestsPassed     *int64    `json:"tests_passed"`
	TestsFailed     *int64    `json:"tests_failed"`
	CoveragePercent *float64  `json:"coverage_percent"`
	Failures        []Failing `json:"failures"`
}

// Label is what a person calls the worker's work: topic, track or stage,
// else the worker id.
func (r Record) Label() string {
	for _, s := range []string{r.Topic, r.Track, r.Stage} {
		if s != "" {
			return s
		}
	}
	return r.WorkerID
}

// meta decodes Metadata; absent or null metadata is empty.
func (r Record) meta() (metadata, error) {
	var m metadata
	if !r.hasMetadata() {
		return m, nil
	}
	if err := json.Unmarshal(r.Metadata, &m); err != nil {
		return m, fmt.Errorf("metadata: %w", err)
	}
	return m, nil
}

func (r Record) hasMetadata() bool {
	t := bytes.TrimSpace(r.Metadata)
	return len(t) > 0 && string(t) != "null"
}

// Validate checks the fields every kind relies on.
func (r Record) Validate() error {
	switch {
	case strings.TrimSpace(r.WorkerID) == "" || !validText(r.WorkerID):
		return fail.Invalidf("worker_id %q: must be non-empty text on one line, e.g. \"research_specialist_1\"", r.WorkerID)
	case !slices.Contains(checkpoint.WorkerStatuses(), r.Status):
		return fail.Invalidf("worker %s: status %q is not one of %s", r.WorkerID, r.Status, strings.Join(checkpoint.WorkerStatuses(), ", "))
	case r.DurationMs < 0 || r.DurationMs > maxMs:
		return fail.Invalidf("worker %s: duration_ms %d is not within 0-%d", r.WorkerID, r.DurationMs, int64(maxMs))
	case r.StartedAt != "" && !validTime(r.StartedAt):
		return fail.Invalidf("worker %s: started_at %q is not an RFC 3339 time like 2026-01-02T15:04:05Z", r.WorkerID, r.StartedAt)
	case !validText(r.OutputPath):
		return fail.Invalidf("worker %s: output_path %q contains control characters", r.WorkerID, r.OutputPath)
	}
	if r.hasMetadata() && bytes.TrimSpace(r.Metadata)[0] != '{' {
		return fail.Invalidf("worker %s: metadata must be a JSON object, got %.40s", r.WorkerID, r.Metadata)
	}
	m, err := r.meta()
	if err != nil {
		return fail.Invalidf("worker %s: %v; see docs/supervisors.md for the metadata fields", r.WorkerID, err)
	}
	if m.TotalLines != nil && (*m.TotalLines < 0 || *m.TotalLines > maxCount) {
		return fail.Invalidf("worker %s: metadata total_lines %d is not within 0-%d", r.WorkerID, *m.TotalLines, int64(maxCount))
	}
	if m.TotalTests != nil {
		counts := TestResults{*m.TotalTests, deref(m.TestsPassed), deref(m.TestsFailed), m.CoveragePercent, nil}
		if err := counts.check(); err != nil {
			return fmt.Errorf("worker %s: metadata: %w", r.WorkerID, err)
		}
	}
	return nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields (a misspelt "duration" would otherwise be silently zero) and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

const recordFields = "worker_id, topic, track, stage, status, output_path, duration_ms, started_at, files_modified, metadata, error"

// ParseRecord decodes and validates one worker record (a JSON object).
func ParseRecord(data []byte) (Record, error) {
	var r Record
	if err := limit.JSON(data, "worker record"); err != nil {
		return Record{}, err
	}
	if err := decodeStrict(data, &r); err != nil {
		return Record{}, fail.Invalidf("worker record: %v; give one JSON object with the fields %s", err, recordFields)
	}
	return r, r.Validate()
}

// ParseRecords decodes and validates a JSON array of worker records with
// distinct worker ids; null or an empty array is no records.
func ParseRecords(data []byte) ([]Record, error) {
	var recs []Record
	if err := limit.JSON(data, "worker records"); err != nil {
		return nil, err
	}
	if err := decodeStrict(data, &recs); err != nil {
		return nil, fail.Invalidf("worker records: %v; give a JSON array of objects with the fields %s", err, recordFields)
	}
	seen := make(map[string]bool, len(recs))
	for i, r := range recs {
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("worker record %d: %w", i+1, err)
		}
		if seen[r.WorkerID] {
			return nil, fail.Invalidf("worker record %d: worker_id %q appears twice; each worker is recorded once", i+1, r.WorkerID)
		}
		seen[r.WorkerID] = true
	}
	return recs, nil
}

// namePattern keeps a supervisor NAME a plain checkpoint key: a leading
// letter, so it is never read as an array index. Compiled on first use:
// {0,63} expands to 63 nested instructions, by far the largest share of
// flowstate's start-up work, and most commands never check a NAME.
var namePattern = lazyRegexp(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// CheckName refuses a supervisor NAME that is not a plain checkpoint key.
func CheckName(name string) error {
	if !namePattern().MatchString(name) {
		return fail.Usagef("supervisor name %q: use a letter then letters, digits, _ or - (e.g. research_supervisor)", name)
	}
	return nil
}

// upsert puts rec into workers, the JSON array stored at
// supervisor_state.<name>.workers (empty or null for none): it replaces the
// element with the same worker_id, else appends. Other elements are kept
// byte for byte. A worker recorded running is stamped started_at (now, or
// when it was first recorded running); when it ends without a duration_ms
// of its own, the time since then is its duration. The caller holds the
// workflow lock around read, upsert and write (UpsertTx), which is what makes
// simultaneous records safe.
func upsert(workers []byte, rec Record, now time.Time) ([]byte, error) {
	// A record parsed by ParseRecord is valid already, but phase-verify
	// stores records built in Go: checking here keeps every stored record
	// valid whoever built it.
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	var elems []json.RawMessage
	if t := bytes.TrimSpace(workers); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &elems); err != nil {
			return nil, fail.Invalidf("stored workers are not a JSON array (%v); repair or delete supervisor_state.<name>.workers in the checkpoint", err)
		}
	}
	type stored struct {
		WorkerID  string `json:"worker_id"`
		Status    string `json:"status"`
		StartedAt string `json:"started_at"`
	}
	at := -1
	var prev stored
	for i, e := range elems {
		var s stored
		if err := json.Unmarshal(e, &s); err != nil {
			return nil, fail.Invalidf("stored worker %d is not a worker object (%v); repair supervisor_state.<name>.workers in the checkpoint", i+1, err)
		}
		if s.WorkerID == rec.WorkerID && at < 0 {
			at, prev = i, s
		}
	}
	if prev.Status != checkpoint.WorkerRunning && prev.Status != checkpoint.WorkerInProgress {
		prev.StartedAt = "" // a new run of the worker, or none before
	}
	rec = timed(rec, prev.StartedAt, now)
	enc, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(elems)+1)
	for i, e := range elems {
		switch {
		case i == at:
			out = append(out, enc)
		case at < 0 || !sameWorker(e, rec.WorkerID):
			out = append(out, e)
		} // a duplicate left by a hand edit is dropped
	}
	if at < 0 {
		out = append(out, enc)
	}
	return json.Marshal(out)
}

// sameWorker reports whether the stored element e is worker id's.
func sameWorker(e json.RawMessage, id string) bool {
	var s struct {
		WorkerID string `json:"worker_id"`
	}
	return json.Unmarshal(e, &s) == nil && s.WorkerID == id
}

// timed stamps rec with when its worker started (started, from its stored
// running record, else its own started_at, else now when it is running)
// and, when it ended without a duration of its own, measures one.
func timed(rec Record, started string, now time.Time) Record {
	if started == "" || !validTime(started) {
		started = rec.StartedAt
	}
	switch rec.Status {
	case checkpoint.WorkerRunning, checkpoint.WorkerInProgress:
		if started == "" {
			started = now.UTC().Format(time.RFC3339Nano)
		}
		rec.StartedAt = started
	case checkpoint.WorkerCompleted, checkpoint.WorkerFailed:
		if started == "" {
			break
		}
		rec.StartedAt = started
		if t, err := time.Parse(time.RFC3339Nano, started); err == nil && rec.DurationMs == 0 {
			rec.DurationMs = min(max(now.Sub(t).Milliseconds(), 0), maxMs)
		}
	}
	return rec
}

// validTime reports whether s is an RFC 3339 time.
func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// Progress sorts workers for a resumed phase: it re-runs Failed and Pending
// (recorded pending or running, or expected and never recorded) and keeps
// Completed.
type Progress struct {
	Completed []string `json:"completed"`
	Failed    []string `json:"failed"`
	Pending   []string `json:"pending"`
}

// ToRun lists what a resumed phase runs again: the failed workers, then
// the pending ones.
func (p Progress) ToRun() []string {
	return append(append([]string{}, p.Failed...), p.Pending...)
}

// Pairs are the KEY=VALUE lines supervisor-status prints: each list as
// comma-separated ids, and what a resumed phase runs again.
func (p Progress) Pairs() kv.Pairs {
	toRun := p.ToRun()
	var out kv.Pairs
	out.Add("WORKERS_COMPLETED", strings.Join(p.Completed, ","))
	out.Add("WORKERS_FAILED", strings.Join(p.Failed, ","))
	out.Add("WORKERS_PENDING", strings.Join(p.Pending, ","))
	out.Add("WORKERS_TO_RUN", strings.Join(toRun, ","))
	out.Add("WORKERS_TO_RUN_COUNT", len(toRun))
	return out
}

// progressOf sorts the recorded workers, then any expected worker id not
// recorded, into a Progress, each list in record order.
func progressOf(workers []Record, expected []string) Progress {
	p := Progress{Completed: []string{}, Failed: []string{}, Pending: []string{}}
	seen := make(map[string]bool, len(workers))
	for _, w := range workers {
		seen[w.WorkerID] = true
		switch w.Status {
		case checkpoint.WorkerCompleted:
			p.Completed = append(p.Completed, w.WorkerID)
		case checkpoint.WorkerFailed:
			p.Failed = append(p.Failed, w.WorkerID)
		default:
			p.Pending = append(p.Pending, w.WorkerID)
		}
	}
	for _, id := range expected {
		if !seen[id] {
			seen[id] = true
			p.Pending = append(p.Pending, id)
		}
	}
	return p
}
