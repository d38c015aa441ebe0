package compat

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The functions of checkpoint-utils.sh, and the design's checkpoint
// functions. checkpoint-utils.sh wrote a new file per save; here every
// checkpoint is the workflow's one checkpoint.json, so writes are locked
// and validated and nothing is lost to a 1-second id or a fixed temp
// name. Parallel-operation and iteration checkpoints are named values
// inside it (phase_data.named.NAME), printed as CHECKPOINT_PATH#NAME, a
// reference the functions accept. Without a workflow they keep the
// original's files under CHECKPOINTS_DIR (standalone.go); any existing
// FILE named is read, but only one in CHECKPOINTS_DIR is written
// (inFiles), under the same lock.

// ref is what a checkpoint FILE argument names: a workflow's checkpoint
// (at "" for all of it, else the path of a named checkpoint in it), or a
// plain JSON file.
type ref struct {
	w    *store.Workflow
	at   string
	file string
}

// ref reads a FILE argument.
func (c *call) ref(arg string) (ref, error) {
	path, name, named := strings.Cut(arg, "#")
	if path != "" {
		w, err := c.refWorkflow(c.abs(path))
		if err != nil {
			return ref{}, err
		}
		if w != nil {
			r := ref{w: w}
			if named {
				r.at = namedPath(name)
			}
			return r, nil
		}
		if !named && isFile(c.abs(path)) {
			return ref{file: c.abs(path)}, nil
		}
	}
	return ref{}, fail.Usagef("Checkpoint file not found: %s", arg)
}

// edit changes the document r names in one locked write: fn gets it and
// the time, and returns it changed.
func (c *call) edit(r ref, fn func(doc []byte, now time.Time) ([]byte, error)) error {
	if r.w == nil {
		p, err := c.proj()
		if err != nil {
			return err
		}
		return editFile(p, r.file, func(doc []byte) ([]byte, error) { return fn(doc, c.Now()) })
	}
	return r.w.Update(func(tx *store.Tx) error {
		doc, err := fn(tx.Checkpoint, tx.Now)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", r.w.ID, err)
		}
		tx.Checkpoint = doc
		return nil
	})
}

// path is p inside the referenced document.
func (r ref) path(p string) string {
	switch {
	case r.at == "":
		return p
	case p == "":
		return r.at
	}
	return r.at + "." + p
}

// doc is the referenced document: the checkpoint or the file as they
// are, or a named checkpoint as compact JSON.
func (r ref) doc() ([]byte, error) {
	doc, err := r.whole()
	if err != nil || r.at == "" {
		return doc, err
	}
	raw, ok, err := checkpoint.Get(doc, r.at)
	if err == nil && !ok {
		err = fail.Usagef("workflow %s has no checkpoint at %s", r.w.ID, r.at)
	}
	return []byte(checkpoint.Display(raw)), err
}

// whole is the file, or the workflow's whole checkpoint.
func (r ref) whole() ([]byte, error) {
	if r.file != "" {
		return readFile(r.file)
	}
	return r.w.ReadCheckpoint()
}

// refDoc reads the document FILE names.
func (c *call) refDoc(arg string) ([]byte, error) {
	r, err := c.ref(arg)
	if err != nil {
		return nil, err
	}
	return r.doc()
}

// restore is the newest save_checkpoint of TYPE (and PROJECT): the
// checkpoint of the shell's workflow when it holds one, else the newest
// file (savedFile), which an earlier command may have saved without a
// workflow. The original matched file names by prefix, so one type could
// restore another's checkpoint.
func (c *call) restore(typ, project string) (*store.Workflow, []byte, error) {
	if typ == "" {
		return nil, nil, fail.Usagef("Usage: %s <workflow-type> [project-name]", c.name)
	}
	w, err := c.named()
	if err != nil {
		return nil, nil, err
	}
	if w != nil {
		doc, err := w.ReadCheckpoint()
		if err != nil {
			return nil, nil, err
		}
		if holdsSave(doc, typ, project) {
			return w, doc, nil
		}
	}
	_, doc, err := c.savedFile(typ, project)
	if err != nil && w != nil {
		err = fmt.Errorf("%w, nor in workflow %s", err, w.ID)
	}
	return nil, doc, err
}

// holdsSave reports whether a workflow's checkpoint doc holds a
// save_checkpoint of typ (and project, when given).
func holdsSave(doc []byte, typ, project string) bool {
	return gjson.GetBytes(doc, "workflow_type").String() == typ && (project == "" || gjson.GetBytes(doc, checkpoint.PathProjectName).String() == project)
}

// save_checkpoint TYPE PROJECT [STATE_JSON]: merge the state (or stdin)
// into the workflow's checkpoint, or without a workflow write a new
// checkpoint file, and print its path. The design's save_checkpoint
// COMMAND JSON keeps JSON as COMMAND's checkpoint instead.
func saveCheckpoint(c *call) int {
	if len(c.args) == 2 && isObject(c.args[1]) {
		return c.saveCommand(c.args[0], []byte(c.args[1]))
	}
	typ, project := c.arg(0), c.arg(1)
	if typ == "" || project == "" {
		return c.usage("save_checkpoint <workflow-type> <project-name> <state-json> (state on stdin when not given), or save_checkpoint COMMAND JSON_OBJECT")
	}
	var state []byte
	if s := c.arg(2); s != "" {
		state = []byte(s)
	} else {
		b, err := limit.ReadAll(c.Stdin, "stdin")
		if err != nil {
			return c.failErr(err)
		}
		state = b
	}
	return c.saveState(typ, project, state)
}

func (c *call) saveState(typ, project string, state []byte) int {
	w, err := c.named()
	if err != nil {
		return c.failErr(err)
	}
	path := ""
	if w == nil {
		path, err = c.saveFile(typ, project, state)
	} else {
		err = SaveLegacy(w, state, typ, project, FileStat(c.Cwd))
		path = w.CheckpointPath()
	}
	if err != nil {
		return c.failErr(err)
	}
	c.print(path)
	return 0
}

// commandWorkflow is the shell's workflow when it runs command: the
// design kept one checkpoint per command. nil without a workflow.
func (c *call) commandWorkflow(command string) (*store.Workflow, []byte, error) {
	w, err := c.named()
	if err != nil || w == nil {
		return nil, nil, err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, nil, err
	}
	if got := gjson.GetBytes(doc, checkpoint.PathCommand).String(); !sameCommand(got, command) {
		return nil, nil, fail.Usagef("workflow %s runs command %s, not %q: it has no %s checkpoint", w.ID, got, command, command)
	}
	return w, doc, nil
}

// saveCommand is the design's save_checkpoint COMMAND JSON: merged into
// the checkpoint of command's workflow (which also holds flowstate's own
// fields), or without a workflow the file CHECKPOINTS_DIR/COMMAND.json,
// replaced as the design's was.
func (c *call) saveCommand(command string, patch []byte) int {
	if err := checkpoint.CheckMerge(patch); err != nil {
		return c.failErr(err) // before reading the workflow
	}
	w, _, err := c.commandWorkflow(command)
	switch {
	case err != nil:
	case w == nil:
		err = c.saveCommandFile(command, patch)
	default:
		err = merge(w, patch)
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// merge merges patch into w's checkpoint, in one locked write.
func merge(w *store.Workflow, patch []byte) error {
	if err := checkpoint.CheckMerge(patch); err != nil {
		return err
	}
	return w.Update(func(tx *store.Tx) error {
		var err error
		tx.Checkpoint, err = checkpoint.Merge(tx.Checkpoint, patch, tx.Now)
		return err
	})
}

// load_checkpoint COMMAND (the design's): print the checkpoint of the
// workflow running COMMAND (1 when it runs another), or without a
// workflow the file save_checkpoint COMMAND JSON wrote (1 when none).
func loadCheckpoint(c *call) int {
	if c.arg(0) == "" {
		return c.usage("load_checkpoint COMMAND")
	}
	w, doc, err := c.commandWorkflow(c.arg(0))
	if err == nil && w == nil {
		var path string
		if _, path, err = c.commandFile(c.arg(0)); err == nil {
			doc, err = readFile(path)
		}
	}
	if err != nil {
		return c.failErr(err)
	}
	c.print(string(doc))
	return 0
}

// update_checkpoint COMMAND KEY VALUE (the design's): set the top-level KEY
// to the string VALUE, as its jq did.
func updateCheckpoint(c *call) int {
	if len(c.args) != 3 || c.args[1] == "" {
		return c.usage("update_checkpoint COMMAND KEY VALUE")
	}
	w, _, err := c.commandWorkflow(c.args[0])
	switch {
	case err != nil:
	case w == nil:
		var p *store.Project
		var path string
		if p, path, err = c.commandFile(c.args[0]); err == nil {
			err = editFile(p, path, func(doc []byte) ([]byte, error) { return setKey(doc, c.args[1], c.args[2]) })
		}
	default:
		err = merge(w, []byte(jsonText(map[string]string{c.args[1]: c.args[2]})))
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// setKey sets the top-level key of the JSON object doc to the string
// value.
func setKey(doc []byte, key, value string) ([]byte, error) {
	if !namedCheckpoint().MatchString(key) {
		return nil, fail.Invalidf("key %q must match %s", key, namedCheckpoint())
	}
	if !gjson.ParseBytes(doc).IsObject() {
		return nil, fail.Invalidf("the checkpoint is not a JSON object")
	}
	return sjson.SetBytes(doc, key, value)
}

// restore_checkpoint TYPE [PROJECT]: the checkpoint, when the workflow
// holds a save of TYPE (and PROJECT), or without one the newest file;
// migrated as every read is.
func restoreCheckpoint(c *call) int {
	_, doc, err := c.restore(c.arg(0), c.arg(1))
	if err != nil {
		return c.failErr(err)
	}
	c.print(string(doc))
	return 0
}

// checkpoint_delete TYPE PROJECT: forget the save, so restore_checkpoint
// finds none: in a workflow, which stays with its history, or the files.
func checkpointDelete(c *call) int {
	if c.arg(0) == "" || c.arg(1) == "" {
		return c.usage("checkpoint_delete TYPE PROJECT")
	}
	// Whether there is a save is what deleting finds: restore would
	// migrate a file in place, leaving a backup of what is deleted next.
	w, err := c.named()
	var doc []byte
	if err == nil && w != nil {
		doc, err = w.ReadCheckpoint()
	}
	switch {
	case err != nil:
	case w != nil && holdsSave(doc, c.arg(0), c.arg(1)):
		err = w.SetCheckpoint("workflow_type", []byte("null"))
	default:
		var n int
		if n, err = c.deleteFiles(c.arg(0), c.arg(1)); err == nil && n == 0 {
			return 0 // nothing to delete, as rm -f
		}
	}
	if err != nil {
		return c.failErr(err)
	}
	c.print("Deleted checkpoint: " + c.arg(0) + " " + c.arg(1))
	return 0
}

// validate_checkpoint FILE: 0 when FILE is a valid checkpoint, after
// migration.
func validateCheckpoint(c *call) int {
	doc, err := c.refDoc(c.arg(0))
	if err != nil {
		return c.failErr(err)
	}
	errs, _, err := Check(CheckDocument, doc, c.Now(), FileStat(c.Cwd))
	if err != nil {
		return c.failErr(err)
	}
	if len(errs) > 0 {
		return c.fail(1, "%s", strings.Join(errs, "; "))
	}
	return 0
}

// checkpoint_get_field FILE PATH: the value at the jq-style PATH (.a.b,
// .a[0]); nothing for null or missing. false prints false (the
// original's `// empty` hid it).
func checkpointGetField(c *call) int {
	r, err := c.ref(c.arg(0))
	if err != nil {
		return c.failErr(err)
	}
	path := r.path(jqPath(c.arg(1)))
	if path == "" {
		doc, err := r.doc()
		if err != nil {
			return c.failErr(err)
		}
		c.print(string(doc))
		return 0
	}
	doc, err := r.whole()
	if err != nil {
		return c.failErr(err)
	}
	raw, ok, err := checkpoint.Get(doc, path)
	if err != nil {
		return c.failErr(err)
	}
	if ok && raw != "null" {
		c.print(checkpoint.Display(raw))
	}
	return 0
}

// checkpoint_set_field FILE PATH VALUE: VALUE stored as a string (as the
// original did), in one locked write; updated_at follows.
func checkpointSetField(c *call) int {
	if len(c.args) < 3 {
		return c.usage("checkpoint_set_field FILE PATH VALUE")
	}
	value := []byte(jsonText(c.args[2]))
	r, err := c.ref(c.args[0])
	if err == nil {
		path := r.path(jqPath(c.args[1]))
		if err = checkpoint.CheckEdit(path, value, false); err == nil {
			err = c.edit(r, func(doc []byte, now time.Time) ([]byte, error) { return checkpoint.Set(doc, path, value, now) })
		}
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// checkpoint_increment_replan FILE PHASE REASON: one replan, in one
// locked write (concurrent calls all count).
func checkpointIncrementReplan(c *call) int {
	if c.arg(1) == "" {
		return c.usage("checkpoint_increment_replan FILE PHASE REASON")
	}
	r, err := c.ref(c.arg(0))
	switch {
	case err != nil:
	case r.w != nil:
		_, err = Replan(r.w, c.arg(1), c.arg(2))
	default:
		err = c.edit(r, func(doc []byte, now time.Time) ([]byte, error) {
			doc, _, err := ReplanDoc(doc, c.arg(1), c.arg(2), now)
			return doc, err
		})
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// check runs a Check of kind over FILE.
func (c *call) check(kind string) (errs, warns []string, err error) {
	doc, err := c.refDoc(c.arg(0))
	if err != nil {
		return nil, nil, err
	}
	return Check(kind, doc, c.Now(), FileStat(c.Cwd))
}

// check_safe_resume_conditions FILE: 0 when safe to resume: tests not
// failing, no last error, status in_progress, updated at most 7 days
// ago, plan file unchanged since save_checkpoint.
func checkSafeResumeConditions(c *call) int {
	errs, _, err := c.check(CheckResume)
	if err != nil || len(errs) > 0 {
		return 1
	}
	return 0
}

// get_skip_reason FILE: the first unmet resume condition, or "All
// conditions met".
func getSkipReason(c *call) int {
	errs, _, err := c.check(CheckResume)
	switch {
	case err != nil:
		return c.fail(1, "the checkpoint could not be read: %v", err)
	case len(errs) > 0:
		c.print(errs[0])
	default:
		c.print("All conditions met")
	}
	return 0
}

// save_state_machine_checkpoint TYPE PROJECT SM_JSON: a save_checkpoint
// whose state holds SM_JSON. The workflow's machine stays the one
// sm_transition keeps; SM_JSON is kept in workflow_state.state_machine.
func saveStateMachineCheckpoint(c *call) int {
	if c.arg(0) == "" || c.arg(1) == "" || c.arg(2) == "" {
		return c.usage("save_state_machine_checkpoint TYPE PROJECT STATE_MACHINE_JSON")
	}
	if !json.Valid([]byte(c.arg(2))) {
		return c.fail(1, "STATE_MACHINE_JSON is not valid JSON")
	}
	return c.saveState(c.arg(0), c.arg(1), []byte(`{"state_machine": `+c.arg(2)+`}`))
}

// load_state_machine_checkpoint TYPE [PROJECT]: the state machine of
// the save of TYPE (and PROJECT) restore_checkpoint finds.
func loadStateMachineCheckpoint(c *call) int {
	_, doc, err := c.restore(c.arg(0), c.arg(1))
	if err != nil {
		return c.failErr(err)
	}
	raw, _, _ := checkpoint.Get(doc, checkpoint.PathStateMachine)
	c.print(checkpoint.Display(raw))
	return 0
}

// migrate_checkpoint_format FILE: a checkpoint file is migrated to
// schema 2.1 in place, the original kept as FILE.backup; a workflow's
// checkpoint is migrated the first time flowstate reads it (keeping a
// backup), so there is nothing left to do.
func migrateCheckpointFormat(c *call) int {
	if c.arg(0) == "" {
		return c.usage("migrate_checkpoint_format <checkpoint-file>")
	}
	r, err := c.ref(c.arg(0))
	if err == nil && r.file != "" {
		var p *store.Project
		if p, err = c.proj(); err == nil {
			_, err = migrateFile(p, r.file)
		}
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// save_parallel_operation_checkpoint PLAN_PATH OPERATION [OPERATIONS_JSON]:
// record a parallel operation before it runs; print its reference, or
// without a workflow the file parallel_ops/parallel_OP_PLAN_STAMP.json.
func saveParallelOperationCheckpoint(c *call) int {
	op := c.arg(1)
	if c.arg(0) == "" || op == "" {
		return c.fail(1, "ERROR: save_parallel_operation_checkpoint requires plan_path and operation_type: save_parallel_operation_checkpoint PLAN_PATH OPERATION [OPERATIONS_JSON]")
	}
	name := "parallel_" + op + "_" + strconv.FormatInt(c.Now().UnixNano(), 10)
	if !namedCheckpoint().MatchString(name) {
		return c.fail(1, "operation %q makes the name %q, which must match %s", op, name, namedCheckpoint())
	}
	ops := json.RawMessage(firstNonEmpty(c.arg(2), "[]"))
	if !json.Valid(ops) {
		return c.fail(1, "OPERATIONS_JSON is not valid JSON")
	}
	value := func(id string) []byte {
		return []byte(jsonText(struct {
			ID         string          `json:"checkpoint_id"`
			Operation  string          `json:"operation_type"`
			Plan       string          `json:"plan_path"`
			Created    string          `json:"created_at"`
			Operations json.RawMessage `json:"operations"`
			Status     string          `json:"status"`
		}{id, op, c.arg(0), checkpoint.Timestamp(c.Now()), ops, "pre_execution"}))
	}
	plan := strings.TrimSuffix(filepath.Base(c.arg(0)), ".md")
	base := "parallel_" + op + "_" + plan + "_" + fileStamp(c.Now())
	w, err := c.named()
	if err != nil {
		return c.failErr(err)
	}
	return c.saveNamedOr(w, name, value(name), "parallel_ops", base, value)
}

// namedPath is where a workflow's checkpoint keeps the named checkpoint
// name (a parallel-operation or iteration checkpoint).
func namedPath(name string) string { return checkpoint.PhaseData("named", name) }

// saveNamedOr keeps value as the named checkpoint name of workflow w and
// prints its reference; without a workflow (nil) it writes what
// fileValue makes of the file's name to a new file
// CHECKPOINTS_DIR/sub/base.json and prints its path.
func (c *call) saveNamedOr(w *store.Workflow, name string, value []byte, sub, base string, fileValue func(name string) []byte) int {
	if w != nil {
		if err := w.SetCheckpoint(namedPath(name), value); err != nil {
			return c.failErr(err)
		}
		c.print(w.CheckpointPath() + "#" + name)
		return 0
	}
	if err := fileName("checkpoint name", base); err != nil {
		return c.failErr(err)
	}
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	path, err := newFile(p, filepath.Join(checkpointsDir(p), sub), base, func(name string) ([]byte, error) { return fileValue(name), nil })
	if err != nil {
		return c.failErr(err)
	}
	c.print(path)
	return 0
}

// restore_from_checkpoint FILE: a banner on stderr, the document on
// stdout.
func restoreFromCheckpoint(c *call) int {
	doc, err := c.refDoc(c.arg(0))
	if err != nil {
		return c.failErr(err)
	}
	fmt.Fprintf(c.Stderr, "Restoring from checkpoint: %s\n", c.arg(0))
	c.print(string(doc))
	return 0
}

// checkResult is validate_checkpoint_integrity's JSON.
type checkResult struct {
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// CheckJSON is the JSON of a Check's findings, as
// validate_checkpoint_integrity printed them.
func CheckJSON(errs, warns []string) string {
	return jsonText(checkResult{Valid: len(errs) == 0, Errors: errs, Warnings: warns})
}

// CheckText is a Check's findings a line each, `error: TEXT` lines before
// `warning: TEXT` lines, as checkpoint-check prints them.
func CheckText(errs, warns []string) string {
	var b strings.Builder
	for _, t := range errs {
		b.WriteString("error: " + t + "\n")
	}
	for _, t := range warns {
		b.WriteString("warning: " + t + "\n")
	}
	return b.String()
}

// validate_checkpoint_integrity FILE: {"valid": true} (with "warnings"
// when the plan file is gone) or {"valid": false, "errors": [...]}.
func validateCheckpointIntegrity(c *call) int {
	errs, warns, err := c.check(CheckOperation)
	if err != nil {
		return c.failErr(err)
	}
	c.print(CheckJSON(errs, warns))
	if len(errs) > 0 {
		return 1
	}
	return 0
}

// validate_iteration_checkpoint FILE: 0 valid, 1 errors, 2 warnings
// only; the findings go to stderr.
func validateIterationCheckpoint(c *call) int {
	errs, warns, err := c.check(CheckIteration)
	if err != nil {
		return c.failErr(err)
	}
	for _, e := range errs {
		c.warn("error: %s", e)
	}
	for _, w := range warns {
		c.warn("warning: %s", w)
	}
	switch {
	case len(errs) > 0:
		return 1
	case len(warns) > 0:
		return 2
	}
	return 0
}

// load_iteration_checkpoint FILE: the iteration checkpoint, when it
// validates. Warnings do not fail it (the original failed on them too).
func loadIterationCheckpoint(c *call) int {
	if rc := validateIterationCheckpoint(c); rc == 1 {
		return 1
	}
	doc, err := c.refDoc(c.arg(0))
	if err != nil {
		return c.failErr(err)
	}
	c.print(string(doc))
	return 0
}

// save_iteration_checkpoint JSON: keep JSON (an object with an integer
// iteration) as the named checkpoint iteration_N of the workflow its
// workflow_id names (else the shell's), under the project instead of
// $HOME; version and timestamp are added when absent. Prints its
// reference.
func saveIterationCheckpoint(c *call) int {
	doc := strings.TrimSpace(c.arg(0))
	if !gjson.Valid(doc) || !gjson.Parse(doc).IsObject() {
		return c.fail(1, "the iteration checkpoint must be a JSON object")
	}
	iteration, id := gjson.Get(doc, "iteration"), gjson.Get(doc, "workflow_id").String() // not a checkpoint path: the iteration checkpoint's
	n := checkpoint.Display(iteration.Raw)
	if !iteration.Exists() || !isDigits(n) {
		return c.fail(1, "the checkpoint needs an integer \"iteration\"")
	}
	var add []string
	if !gjson.Get(doc, "version").Exists() {
		add = append(add, `"version": "2.1"`)
	}
	if !gjson.Get(doc, "timestamp").Exists() {
		add = append(add, `"timestamp": `+jsonText(checkpoint.Timestamp(c.Now())))
	}
	if len(add) > 0 {
		body := strings.TrimSpace(doc[1:])
		sep := ", "
		if strings.HasPrefix(body, "}") {
			sep = ""
		}
		doc = "{" + strings.Join(add, ", ") + sep + body
	}
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	var w *store.Workflow
	switch {
	case id == "":
		w, err = c.named()
	case exists(p, id):
		w, err = p.Workflow(id)
	}
	if err != nil {
		return c.failErr(err)
	}
	name := "iteration_" + n
	base := "build_" + firstNonEmpty(id, "none") + "_iteration_" + n
	return c.saveNamedOr(w, name, []byte(doc), "", base, func(string) []byte { return []byte(doc) })
}

func isDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}
