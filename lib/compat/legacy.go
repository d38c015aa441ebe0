package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The checkpoint-utils.sh operations compat keeps for commands that
// still call them (docs/migrating-from-bash.md), over the workflow's one
// checkpoint instead of a new file per save. Their 1.x fields
// (replanning_count, tests_passing, workflow_state, ...) live as extra
// top-level keys, which the schema allows. The document operations are
// pure; file facts come in as a Stat.

// Stat reports a file's modification time in Unix seconds, and whether
// the file exists.
type Stat func(path string) (mtime int64, ok bool)

// FileStat is Stat over the file system, relative paths from dir (the
// working directory, as the bash library's tests were).
func FileStat(dir string) Stat {
	return func(path string) (int64, bool) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		st, err := os.Stat(path)
		if err != nil {
			return 0, false
		}
		return st.ModTime().Unix(), true
	}
}

// legacyDefaults adds the 1.x top-level fields a document lacks, with the
// values save_checkpoint wrote: the fields the migration steps 1.0 → 1.3
// add (taken from those steps, so the two cannot disagree) and five the
// bash save wrote besides.
func legacyDefaults(m map[string]any) {
	checkpoint.AddV1Fields(m)
	for k, v := range map[string]any{
		"current_phase": json.Number("0"), "total_phases": json.Number("0"), "completed_phases": []any{},
		"last_error": nil, "tests_passing": true,
	} {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
}

// legacyKeys are the fields legacyDefaults fills: the ones SaveLegacy
// lifts from the caller's state.
func legacyKeys() []string {
	m := map[string]any{}
	legacyDefaults(m)
	delete(m, checkpoint.PathSchemaVersion)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CheckLegacyState checks the state SaveLegacy takes, so a caller can
// refuse it before taking the lock: a JSON object within limit.JSON's
// bounds, one level less deep since it goes under workflow_state.
func CheckLegacyState(state []byte) error {
	if err := limit.JSON(state, "checkpoint: save: the state"); err != nil {
		return err
	}
	if limit.Depth(state) >= limit.MaxDepth {
		return fail.Invalidf("checkpoint: save: the state nests %d levels deep; under workflow_state it may take at most %d", limit.Depth(state), limit.MaxDepth-1)
	}
	if !gjson.ValidBytes(state) || !gjson.ParseBytes(state).IsObject() {
		return fail.Invalidf("checkpoint: save: the state is not a JSON object; pass one like '{\"plan_path\": \"specs/plans/001.md\"}'")
	}
	return nil
}

// SaveLegacy merges the state JSON of the bash library's save_checkpoint
// into the workflow's checkpoint (checkpoint-save --workflow-type), in
// one locked write.
func SaveLegacy(w *store.Workflow, state []byte, workflowType, project string, stat Stat) error {
	if err := CheckLegacyState(state); err != nil {
		return fmt.Errorf("workflow %s: %w", w.ID, err) // before the lock
	}
	return w.Update(func(tx *store.Tx) error {
		var err error
		if tx.Checkpoint, err = SaveLegacyDoc(tx.Checkpoint, state, workflowType, project, stat, tx.Now); err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		tx.Event("checkpoint-save", map[string]any{"workflow_type": workflowType})
		return nil
	})
}

// SaveLegacyDoc is save_checkpoint TYPE PROJECT STATE on the workflow's
// checkpoint doc. state (a JSON object) is kept whole as workflow_state;
// its 1.x fields are lifted to the top level, where a field the state
// gives wins (null meaning the default), one it lacks keeps the
// checkpoint's value, else the default. Unlike the bash save, false
// stays false (tests_passing) and the fields flowstate owns
// (state_machine, status, phase_data, error_state, ...) are not taken
// from state: sm-* commands keep those. checkpoint_id is the workflow id,
// unique where the bash one had 1-second resolution.
// plan_modification_time is the mtime of state.plan_path, or null.
func SaveLegacyDoc(doc, state []byte, typ, project string, stat Stat, now time.Time) ([]byte, error) {
	if typ == "" || project == "" {
		return nil, fail.Usagef("checkpoint: save: the workflow type and project name must not be empty")
	}
	if err := CheckLegacyState(state); err != nil {
		return nil, err
	}
	st, err := checkpoint.Decode(state)
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.Decode(doc)
	if err != nil {
		return nil, err
	}
	m["workflow_state"] = st
	for _, k := range legacyKeys() {
		if v, ok := st[k]; ok {
			m[k] = v
			if v == nil {
				delete(m, k)
			}
		}
	}
	legacyDefaults(m)
	m["workflow_type"] = typ
	m["project_name"] = project
	m["checkpoint_id"] = m["workflow_id"]
	m["plan_modification_time"] = nil
	if p, ok := st["plan_path"].(string); ok && p != "" {
		if mtime, ok := stat(p); ok {
			m["plan_modification_time"] = json.Number(strconv.FormatInt(mtime, 10))
		}
	}
	ts := checkpoint.Timestamp(now)
	m["updated_at"] = ts
	if md, ok := m["metadata"].(map[string]any); ok {
		md["project_name"] = project
		md["updated_at"] = ts
	}
	out, err := checkpoint.Encode(m)
	if err != nil {
		return nil, err
	}
	if err := checkpoint.Validate(out); err != nil {
		return nil, fmt.Errorf("checkpoint: save: %w", err)
	}
	return out, nil
}

// Replan records one replan of the workflow (checkpoint-replan), in one
// locked write, and returns the new replanning_count.
func Replan(w *store.Workflow, phase, reason string) (count int64, err error) {
	err = w.Update(func(tx *store.Tx) error {
		var err error
		tx.Checkpoint, count, err = ReplanDoc(tx.Checkpoint, phase, reason, tx.Now)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", w.ID, err)
		}
		tx.Event("checkpoint-replan", map[string]any{"phase": phase})
		return nil
	})
	return count, err
}

// ReplanDoc is checkpoint_increment_replan PHASE REASON: one more replan of
// the integer phase, in replanning_count, replan_phase_counts.phase_N,
// last_replan_reason and replan_history. It returns the new
// replanning_count. The caller writes the result under one lock, so
// concurrent replans all count (the bash version lost most of them).
func ReplanDoc(doc []byte, phase, reason string, now time.Time) ([]byte, int64, error) {
	n, err := strconv.Atoi(phase)
	if err != nil || n < 0 {
		return nil, 0, fail.Invalidf("checkpoint: replan: phase %q is not a phase number (0, 1, 2, ...)", phase)
	}
	reasonJSON, err := json.Marshal(reason)
	if err != nil {
		return nil, 0, fail.Invalidf("checkpoint: replan: reason: %v", err)
	}
	entry, err := json.Marshal(map[string]any{"phase": n, "timestamp": checkpoint.Timestamp(now), "reason": reason})
	if err != nil {
		return nil, 0, fail.Invalidf("checkpoint: replan: %v", err)
	}
	doc, count, err := checkpoint.Increment(doc, "replanning_count", 1, now)
	if err != nil {
		return nil, 0, err
	}
	if doc, _, err = checkpoint.Increment(doc, "replan_phase_counts.phase_"+strconv.Itoa(n), 1, now); err != nil {
		return nil, 0, err
	}
	if doc, err = checkpoint.Set(doc, "last_replan_reason", reasonJSON, now); err != nil {
		return nil, 0, err
	}
	if doc, err = checkpoint.Append(doc, "replan_history", entry, now); err != nil {
		return nil, 0, err
	}
	return doc, count, nil
}

// Check kinds: the checkpoint-utils.sh validations Check performs.
const (
	CheckDocument  = "checkpoint" // validate_checkpoint: a valid checkpoint (after migration)
	CheckResume    = "resume"     // check_safe_resume_conditions / get_skip_reason
	CheckIteration = "iteration"  // validate_iteration_checkpoint
	CheckOperation = "operation"  // validate_checkpoint_integrity (parallel operations)
)

// CheckKinds lists the kinds in the order help shows them.
var CheckKinds = []string{CheckDocument, CheckResume, CheckIteration, CheckOperation}

// Resume conditions of the bash library: a checkpoint at most this old
// (7 days, plus the hour of slack it allowed) may be resumed.
const maxResumeAge = 7*24*time.Hour + time.Hour

// haltReasons are the values validate_iteration_checkpoint knew.
var haltReasons = []string{"context_threshold", "max_iterations", "stuck", "completion", "user_abort", "error"}

// defaultMaxIterations applies when an iteration checkpoint names none.
const defaultMaxIterations = 5

// Check runs the validation kind over doc and returns what fails (errors)
// and what is only suspicious (warnings), in the bash library's order and
// wording, so get_skip_reason's first reason is errs[0].
func Check(kind string, doc []byte, now time.Time, stat Stat) (errs, warns []string, err error) {
	if kind == CheckDocument {
		if _, _, err := store.Migrate(doc); err != nil {
			return []string{err.Error()}, nil, nil
		}
		return nil, nil, nil
	}
	if !gjson.ValidBytes(doc) || !gjson.ParseBytes(doc).IsObject() {
		return nil, nil, fail.Invalidf("checkpoint: check %s: the document is not a JSON object", kind)
	}
	root := gjson.ParseBytes(doc)
	switch kind {
	case CheckResume:
		errs = checkResume(root, now, stat)
	case CheckIteration:
		errs, warns = checkIteration(root, stat)
	case CheckOperation:
		errs, warns = checkOperation(root, stat)
	default:
		return nil, nil, fail.Usagef("checkpoint: check: unknown kind %q; use one of %v", kind, CheckKinds)
	}
	return errs, warns, nil
}

func checkResume(root gjson.Result, now time.Time, stat Stat) []string {
	var errs []string
	// "true" as text counts: checkpoint_set_field stores every value as a
	// string, and the bash check compared jq's text output.
	if tp := root.Get("tests_passing"); tp.Exists() && tp.Type != gjson.Null && tp.String() != "true" {
		errs = append(errs, "Tests failing in last run")
	}
	if notNull(root.Get("last_error")) || notNull(root.Get(checkpoint.PathLastError)) {
		errs = append(errs, "Last run had errors")
	}
	if s := root.Get(checkpoint.PathStatus).String(); s != checkpoint.InProgress {
		errs = append(errs, fmt.Sprintf("Checkpoint status: %s (expected: in_progress)", s))
	}
	// The bash library wrote a new file per save, so its created_at was
	// the last save; flowstate updates one file, whose updated_at is that.
	at, ok := checkpoint.ParseTime(root.Get(checkpoint.PathUpdatedAt).Value())
	if !ok {
		at, ok = checkpoint.ParseTime(root.Get(checkpoint.PathCreatedAt).Value())
	}
	switch age := now.Sub(at); {
	case !ok:
		errs = append(errs, "Checkpoint has no readable updated_at or created_at")
	case age > maxResumeAge:
		errs = append(errs, fmt.Sprintf("Checkpoint %d days old (max: 7 days)", int(age/(24*time.Hour))))
	}
	if recorded := root.Get("plan_modification_time"); recorded.Type == gjson.Number {
		if p := root.Get("workflow_state.plan_path").String(); p != "" {
			if mtime, ok := stat(p); ok && mtime != recorded.Int() {
				errs = append(errs, "Plan file modified since checkpoint")
			}
		}
	}
	return errs
}

func checkIteration(root gjson.Result, stat Stat) (errs, warns []string) {
	maxIt := int64(defaultMaxIterations)
	if m := root.Get("max_iterations"); m.Type == gjson.Number {
		maxIt = m.Int()
	}
	switch it := root.Get("iteration"); {
	case it.Type != gjson.Number:
		errs = append(errs, "iteration is missing or not a number")
	case it.Int() > maxIt:
		errs = append(errs, fmt.Sprintf("iteration %d exceeds max_iterations %d", it.Int(), maxIt))
	}
	if cc := root.Get("continuation_context").String(); cc != "" && !fileExists(stat, cc) {
		warns = append(warns, "continuation_context file not found: "+cc)
	}
	if wr := root.Get("work_remaining"); wr.Exists() && wr.Type != gjson.Null && wr.Type != gjson.String && !wr.IsArray() {
		errs = append(errs, "work_remaining must be a string, an array or null")
	}
	if hr := root.Get("halt_reason"); notNull(hr) && !slices.Contains(haltReasons, hr.String()) {
		warns = append(warns, fmt.Sprintf("halt_reason %q is not one of %v", hr.String(), haltReasons))
	}
	switch p := root.Get("plan_path").String(); {
	case p == "":
		errs = append(errs, "plan_path is missing")
	case !fileExists(stat, p):
		errs = append(errs, "plan file not found: "+p)
	}
	return errs, warns
}

func checkOperation(root gjson.Result, stat Stat) (errs, warns []string) {
	for _, k := range []string{"checkpoint_id", "operation_type", "plan_path", "created_at"} {
		if root.Get(k).String() == "" {
			errs = append(errs, "Missing required field: "+k)
		}
	}
	if p := root.Get("plan_path").String(); p != "" && !fileExists(stat, p) {
		warns = append(warns, "Plan file not found: "+p)
	}
	return errs, warns
}

func notNull(r gjson.Result) bool { return r.Exists() && r.Type != gjson.Null }

func fileExists(stat Stat, path string) bool {
	_, ok := stat(path)
	return ok
}
