package compat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The functions of state-persistence.sh.

// answerAll hands the shell everything load_workflow_state sets: the
// workflow's view (shellOf), exported as the sourced file did, the
// COMPLETED_STATES array and the STATE_* constants. The call then
// rewrites the generated state file from the same view.
func (c *call) answerAll(w *store.Workflow) (shell, error) {
	doc, m, err := sm.Load(w)
	if err != nil {
		return shell{}, err
	}
	s, err := shellOf(w, doc, m)
	if err != nil {
		return shell{}, err
	}
	var b bytes.Buffer
	warnings, err := s.exports(&b)
	for _, warning := range append(s.values.Warnings, warnings...) {
		c.warn("workflow %s state: %s", w.ID, warning)
	}
	if err != nil {
		return shell{}, err
	}
	c.answer.Write(b.Bytes())
	c.answerArrays(s)
	c.touch(w, &s)
	return s, nil
}

// answerMachine hands the shell the state machine's variables of view s
// as the original kept them: CURRENT_STATE, TERMINAL_STATE (none before
// sm_init unless stored), COMPLETED_STATES_COUNT and COMPLETED_STATE_i,
// all exported, and the arrays and constants.
func (c *call) answerMachine(s shell) {
	for _, k := range []string{"CURRENT_STATE", "TERMINAL_STATE", "COMPLETED_STATES_COUNT"} {
		if v, ok := s.values.Values[k]; ok {
			c.set(k, v, true)
		}
	}
	for i, state := range s.completed {
		c.set("COMPLETED_STATE_"+strconv.Itoa(i), state, true)
	}
	c.answerArrays(s)
}

// answerArrays hands the shell COMPLETED_STATES, the original's array of
// the states entered, and a STATE_* constant per state of the machine.
func (c *call) answerArrays(s shell) {
	c.setArray("COMPLETED_STATES", s.completed)
	for _, kv := range constants(s.m.States()) {
		c.set(kv[0], kv[1], false)
	}
}

// create makes workflow id as init_workflow_state does: waiting for
// sm_init (pendingKey), the session's workflow. Nothing is written if
// .claude/tmp, where its state file goes, is refused.
func (c *call) create(p *store.Project, id string) (*store.Workflow, error) {
	if err := ensureTmp(p); err != nil {
		return nil, err
	}
	_, doc, err := sm.Document(p, sm.InitParams{
		ID: id, Description: pendingDescription, Command: commandOfID(id), Scope: pendingScope,
		Classification: classify.Classification{Reasoning: pendingDescription},
		Machine:        machine.Default(), Session: c.session(),
	})
	if err != nil {
		return nil, err
	}
	if doc, err = sjson.SetBytes(doc, pendingKey, true); err != nil {
		return nil, err
	}
	return p.Create(id, doc, nil, c.session())
}

// adopt makes workflow id the shell's (init_workflow_state,
// load_workflow_state ID true): created when missing, made the
// session's, and its id, state file and project set in the shell, as
// the original's new state file exported them. Another session's
// workflow is refused; an existing one is never emptied (the original
// truncated its state file).
func (c *call) adopt(p *store.Project, id string) (*store.Workflow, error) {
	if err := store.ValidID(id); err != nil {
		return nil, fail.Invalidf("workflow id: %w", err)
	}
	session := c.session()
	s, ok := p.Summary(id)
	if ok && s.Session != "" && s.Session != session {
		return nil, fail.Usagef("workflow %s belongs to another Claude Code session; choose a new id with generate_unique_workflow_id", id)
	}
	var w *store.Workflow
	var err error
	if ok {
		if w, err = p.Workflow(id); err == nil && session != "" {
			err = p.SetSession(session, id)
		}
	} else {
		w, err = c.create(p, id)
	}
	if err != nil {
		return nil, err
	}
	if session == "" && id != c.shellWorkflowID() && id != c.Getenv("FLOWSTATE_WORKFLOW") && !onlyActive(p, id) {
		c.warn("no CLAUDE_CODE_SESSION_ID: later blocks find workflow %s by its id (WORKFLOW_ID, load_workflow_state %s, FLOWSTATE_WORKFLOW), or as the project's only active workflow", id, id)
	}
	c.set("CLAUDE_PROJECT_DIR", p.Dir, true)
	c.set("WORKFLOW_ID", id, true)
	c.set("STATE_FILE", stateFile(p, id), true)
	c.touch(w, nil)
	return w, nil
}

// onlyActive reports whether id is the project's only active workflow,
// which a later block without a session finds unasked.
func onlyActive(p *store.Project, id string) bool {
	w, err := p.Resolve(store.Selector{})
	return err == nil && w.ID == id
}

// init_workflow_state [ID]: start the workflow (see create), make it the
// session's, and print its state file, which exists from now on.
// Running it again changes nothing: without an ID it takes the workflow
// an earlier run started that still waits for sm_init (waitingID).
func initWorkflowState(c *call) int {
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	id := c.arg(0)
	if id == "" {
		id = c.waitingID(p)
	}
	if _, err := c.adopt(p, id); err != nil {
		return c.failErr(err)
	}
	c.print(stateFile(p, id))
	return 0
}

// waitingID is the workflow init_workflow_state without an ID starts or
// takes: the shell's (WORKFLOW_ID, FLOWSTATE_WORKFLOW) or the session's,
// when it still waits for sm_init and is no other session's, so a block
// run again makes one workflow, not one per run; else a new id.
func (c *call) waitingID(p *store.Project) string {
	cur, _ := p.SessionWorkflow(c.session())
	for _, id := range []string{c.shellWorkflowID(), c.Getenv("FLOWSTATE_WORKFLOW"), cur} {
		if id == "" || !waits(p, id) {
			continue
		}
		if s, ok := p.Summary(id); ok && (s.Session == "" || s.Session == c.session()) {
			return id
		}
	}
	return uniqueID("workflow", c.Now())
}

// load_workflow_state [ID] [IS_FIRST_BLOCK] [REQUIRED_VAR...]: set the
// workflow's variables in the shell. 0 loaded; 1 none, IS_FIRST_BLOCK=
// true (the workflow is then started, as init_workflow_state does); 2
// none; 3 unreadable or a REQUIRED_VAR empty. The design's
// load_workflow_state KEY prints one value instead.
func loadWorkflowState(c *call) int {
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	id, first := c.arg(0), c.arg(1) == "true"
	if len(c.args) == 1 && keyForm().MatchString(id) && !exists(p, id) {
		return loadKey(c, id)
	}
	var w *store.Workflow
	if id != "" {
		w, err = p.Workflow(id)
	} else {
		w, err = c.workflow()
	}
	var s shell
	switch {
	case err == nil:
		if s, err = c.answerAll(w); err != nil {
			return c.fail(3, "State file validation failed: workflow %s could not be read: %v", w.ID, err)
		}
	case fail.Code(err) == fail.Usage && first:
		if id == "" {
			id = c.waitingID(p)
		}
		if _, err := c.adopt(p, id); err != nil {
			return c.failErr(err)
		}
		return 1
	case fail.Code(err) == fail.Usage:
		if cur, _ := p.SessionWorkflow(c.session()); id != "" && cur != "" && cur != id && exists(p, cur) {
			err = fmt.Errorf("no workflow %s; this session's workflow is %s (an id built from $$ differs in every bash block: call load_workflow_state without an id)", id, cur)
		}
		return c.fail(2, "CRITICAL ERROR: Workflow state file not found: %v", err)
	default:
		return c.fail(3, "State file validation failed: %v", err)
	}
	return c.required(s, c.args[min(2, len(c.args)):])
}

// required is 3 when a REQUIRED_VAR of load_workflow_state is empty
// after loading: in the workflow's view, else in the shell.
func (c *call) required(s shell, names []string) int {
	var missing []string
	for _, n := range names {
		v, ok := s.value(n)
		if !ok {
			v = c.vars[n]
		}
		if !varName().MatchString(n) || v == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return c.fail(3, "CRITICAL ERROR: Required state variables missing: %s (workflow %s, state file %s)", strings.Join(missing, " "), s.w.ID, stateFile(s.w.P, s.w.ID))
	}
	return 0
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loadKey is the design's load_workflow_state KEY: print the value.
func loadKey(c *call, key string) int {
	w, err := c.workflow()
	if err != nil {
		return c.fail(2, "%v", err)
	}
	s, err := c.view(w)
	if err != nil {
		return c.failErr(err)
	}
	v, ok := s.value(key)
	if !ok {
		return c.fail(1, "no %s in workflow %s (load_workflow_state KEY prints one value; load_workflow_state [ID] loads them all)", key, w.ID)
	}
	c.print(v)
	return 0
}

// view is the shell view of w.
func (c *call) view(w *store.Workflow) (shell, error) {
	doc, m, err := sm.Load(w)
	if err != nil {
		return shell{}, err
	}
	return shellOf(w, doc, m)
}

// checkOwn splits off the pairs naming a variable flowstate sets itself
// (isOwn): one with the value the workflow gives it changes nothing (the
// design documents append CURRENT_STATE after sm_init) and is dropped;
// one with another value would never reach a shell, so it is refused, an
// error each. A reserved name is stored as it is (the original stored
// CLAUDE_PROJECT_DIR), and so, before sm_init, are the variables sm_init
// sets (pendingOwned).
func checkOwn(s shell, pairs [][2]string) (keep [][2]string, refused []error) {
	for _, kv := range pairs {
		_, reserved := statefile.Reserved(kv[0])
		if reserved || !isOwn(kv[0]) || s.waiting && isPendingOwned(kv[0]) {
			keep = append(keep, kv)
			continue
		}
		if v, _ := s.value(kv[0]); v != kv[1] {
			refused = append(refused, fail.Invalidf("%s is %q in workflow %s, which flowstate keeps; it cannot be set to %q (sm_transition and sm_init change it)", kv[0], v, s.w.ID, kv[1]))
		}
	}
	return keep, refused
}

// appendPairs stores pairs in the shell's workflow; a pair refused by
// checkOwn is reported and the rest stored, or, with all set, nothing
// is. As in the original, the shell must have a STATE_FILE (init_ or
// load_workflow_state set it), unless flowstate names its workflow: the
// session's, or FLOWSTATE_WORKFLOW (the design documents' blocks append
// without loading).
func (c *call) appendPairs(pairs [][2]string, all bool) int {
	if c.stateFile == "" && !c.flowstateNames() {
		c.suppressErrTrap()
		return c.fail(1, "ERROR: STATE_FILE not set. Call init_workflow_state first.")
	}
	w, err := c.workflow()
	if err != nil {
		return c.noWorkflow(err)
	}
	for _, kv := range pairs {
		if err := statefile.CheckStored(kv[0], kv[1]); err != nil {
			return c.failErr(err)
		}
	}
	// The view only for a pair naming a variable flowstate sets itself:
	// checkOwn keeps every other pair as it is.
	var refused []error
	if slices.ContainsFunc(pairs, func(kv [2]string) bool { return isOwn(kv[0]) }) {
		s, err := c.view(w)
		if err != nil {
			return c.failErr(err)
		}
		pairs, refused = checkOwn(s, pairs)
	}
	for _, err := range refused {
		c.warn("%v", err)
	}
	if all && len(refused) > 0 {
		return 1
	}
	if err := w.AppendState(pairs); err != nil {
		return c.failErr(err)
	}
	c.touch(w, nil)
	if len(refused) > 0 {
		return 1
	}
	return 0
}

// flowstateNames reports whether flowstate's own selectors name a
// workflow for the shell: FLOWSTATE_WORKFLOW, or the session's.
func (c *call) flowstateNames() bool {
	if c.Getenv("FLOWSTATE_WORKFLOW") != "" {
		return true
	}
	p, err := c.proj()
	if err != nil {
		return false
	}
	id, _ := p.SessionWorkflow(c.session())
	return id != ""
}

// noWorkflow reports that the shell has no workflow to store in, with the
// original's words.
func (c *call) noWorkflow(err error) int {
	return c.fail(1, "ERROR: STATE_FILE not set. Call init_workflow_state first. (%v)", err)
}

// append_workflow_state KEY VALUE
func appendWorkflowState(c *call) int {
	if len(c.args) != 2 {
		c.suppressErrTrap()
		return c.usage("append_workflow_state KEY VALUE (got %d arguments; quote a value with spaces)", len(c.args))
	}
	return c.appendScalar(c.args[0], c.args[1])
}

// append_workflow_state_array KEY ITEM...: the items joined by spaces.
func appendWorkflowStateArray(c *call) int {
	if len(c.args) < 1 {
		return c.usage("append_workflow_state_array KEY ITEM...")
	}
	return c.appendScalar(c.args[0], strings.Join(c.args[1:], " "))
}

// jsonKeys are the keys the original's append_workflow_state took a JSON
// object or array for, besides those ending in _JSON.
var jsonKeys = []string{"WORK_REMAINING", "ERROR_FILTERS", "COMPLETED_STATES_JSON", "REPORT_PATHS_JSON", "RESEARCH_TOPICS_JSON", "PHASE_DEPENDENCIES_JSON"}

// jsonKeysVar names the shell variable whose words a project adds to
// jsonKeys: the original's "add to allowlist" meant editing the library.
const jsonKeysVar = "FLOWSTATE_JSON_KEYS"

// appendScalar is append_workflow_state's store: the original's type
// check first, which refused a value starting with [ or { (a JSON array
// or object) under a key not made for JSON, so that a later block's
// word splitting never meets one; logged as a state_error through the
// shell's log_command_error when it has one, as the original did.
func (c *call) appendScalar(key, value string) int {
	if !jsonValue().MatchString(value) || strings.HasSuffix(key, "_JSON") || slices.Contains(jsonKeys, key) || slices.Contains(strings.Fields(c.vars[jsonKeysVar]), key) {
		return c.appendPairs([][2]string{{key, value}}, true)
	}
	c.suppressErrTrap()
	if c.funcs["log_command_error"] {
		c.run("log_command_error", firstNonEmpty(c.vars["COMMAND_NAME"], "unknown"), firstNonEmpty(c.shellID, "unknown"), c.vars["USER_ARGS"],
			"state_error", "Type validation failed: JSON detected", c.name, jsonText(map[string]string{"key": key, "value": value}))
	}
	return c.fail(1, "ERROR: append_workflow_state only supports scalar values for key: %s; use space-separated strings instead of JSON arrays, or a key ending in _JSON, or add %s to %s", key, key, jsonKeysVar)
}

// suppressErrTrap sets SUPPRESS_ERR_TRAP=1 in the shell, as the
// original did before an expected failure: error-handling.sh's ERR trap
// then logs no execution_error for it.
func (c *call) suppressErrTrap() { c.set("SUPPRESS_ERR_TRAP", "1", false) }

// append_workflow_state_bulk < KEY=value lines: blank and # lines are
// skipped, and so (with a warning) are lines that are not KEY=value; a
// derived variable set to another value is skipped too, and makes it
// return 1.
func appendWorkflowStateBulk(c *call) int {
	data, err := limit.ReadAll(c.Stdin, "stdin")
	if err != nil {
		return c.failErr(err)
	}
	var pairs [][2]string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !bulkKey(k) {
			c.warn("skipping a line that is not KEY=value: %s", strconv.Quote(line))
			continue
		}
		pairs = append(pairs, [2]string{k, v})
	}
	if len(pairs) == 0 {
		return 0
	}
	// Like the lines that are not KEY=value, a refused one is skipped.
	return c.appendPairs(pairs, false)
}

// bulkKey is the key form append_workflow_state_bulk took: upper case.
func bulkKey(k string) bool {
	return k != "" && !strings.ContainsFunc(k, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') }) && (k[0] < '0' || k[0] > '9')
}

// save_json_checkpoint NAME JSON: validated, and written as given to
// .claude/tmp/NAME.json, as the original did, replaced atomically. A
// workflow's commands and agents read these files by path.
func saveJSONCheckpoint(c *call) int {
	if len(c.args) < 2 {
		return c.usage("save_json_checkpoint NAME JSON")
	}
	return c.saveNamed(c.args[0], []byte(c.args[1]))
}

func (c *call) saveNamed(name string, value []byte) int {
	path, err := c.tmpFile(name, ".json")
	if err == nil {
		err = checkpoint.CheckJSON(value, "the checkpoint "+name)
	}
	if err == nil {
		err = fsx.WriteFile(path, append(value, '\n'))
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// load_json_checkpoint NAME: print it as saved, or {} when never saved.
func loadJSONCheckpoint(c *call) int {
	path, err := c.tmpFile(c.arg(0), ".json")
	if err != nil {
		return c.failErr(err)
	}
	doc, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc = []byte("{}")
	case err != nil:
		return c.failErr(err)
	}
	c.print(string(doc))
	return 0
}

// save_classification_checkpoint WORKFLOW_ID JSON
func saveClassificationCheckpoint(c *call) int {
	return c.saveNamed("classification_"+c.arg(0), []byte(c.arg(1)))
}

// load_classification_checkpoint WORKFLOW_ID
func loadClassificationCheckpoint(c *call) int {
	c.args = []string{"classification_" + c.arg(0)}
	return loadJSONCheckpoint(c)
}

// append_jsonl_log NAME JSON: a line of .claude/tmp/NAME.jsonl, as the
// original's: the JSON validated and written as given, compacted only
// when it spans lines, appended in one write with O_APPEND.
func appendJSONLLog(c *call) int {
	if len(c.args) < 2 {
		return c.usage("append_jsonl_log NAME JSON")
	}
	value := bytes.TrimSpace([]byte(c.args[1]))
	if bytes.ContainsAny(value, "\r\n") {
		value = pretty.Ugly(value)
	}
	path, err := c.tmpFile(c.args[0], ".jsonl")
	if err == nil {
		err = checkpoint.CheckJSON(value, "log "+c.args[0]+": the value")
	}
	if err == nil {
		err = fsx.AppendLine(path, value)
	}
	if err != nil {
		return c.failErr(err)
	}
	return 0
}

// discover_latest_state_file PREFIX: the state file of the shell's (or
// session's) workflow when its id starts with PREFIX_ or it runs command
// PREFIX. Without one, the newest workflow_PREFIX_*.sh in .claude/tmp, as
// the original chose, passing over what the caller must not source: the
// file of another session's workflow (its updates would land there), and
// a file flowstate did not generate unless sourcing it can only assign
// (onlyAssigns), since the original's files ran what they held.
func discoverLatestStateFile(c *call) int {
	prefix := c.arg(0)
	if prefix == "" {
		return c.usage("ERROR: discover_latest_state_file requires command_prefix argument: discover_latest_state_file COMMAND")
	}
	w, doc, err := c.checkpointed()
	if err == nil && (strings.HasPrefix(w.ID, prefix+"_") || sameCommand(gjson.GetBytes(doc, checkpoint.PathCommand).String(), prefix)) {
		c.touch(w, nil) // its state file is sourced next
		c.print(stateFile(w.P, w.ID))
		return 0
	}
	p, err := c.proj()
	if err != nil {
		return 1
	}
	for _, path := range newestFirst(tmpDir(p), "workflow_"+prefix+"_", ".sh") {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "workflow_"), ".sh")
		if sum, ok := p.Summary(id); ok {
			if sum.Session != "" && sum.Session != c.session() {
				continue
			}
			w, err := p.Workflow(id)
			if err != nil {
				continue
			}
			c.touch(w, nil)
		} else if data, err := fsx.ReadFile(path, limit.Max); err != nil || !onlyAssigns(data) {
			c.warn("passing over %s: flowstate did not write it, and sourcing it could run what it holds", path)
			continue
		}
		c.print(path)
		return 0
	}
	return 1
}

// newestFirst lists the regular files of dir named PREFIX...SUFFIX, the
// newest first (by modification time, then name, as the original's sort).
func newestFirst(dir, prefix, suffix string) []string {
	entries, err := fsx.ReadDir(dir)
	if err != nil {
		return nil
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{filepath.Join(dir, name), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(b.path, a.path)
	})
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	return paths
}

// sameCommand reports whether a and b name one command, with or without
// the slash (/plan is plan).
func sameCommand(a, b string) bool { return strings.TrimPrefix(a, "/") == strings.TrimPrefix(b, "/") }

// generate_unique_workflow_id COMMAND
func generateUniqueWorkflowID(c *call) int {
	if !commandName().MatchString(c.arg(0)) {
		return c.fail(1, "command name %q must match %s", c.arg(0), commandName())
	}
	c.print(uniqueID(c.arg(0), c.Now()))
	return 0
}

// validate_workflow_id ID [COMMAND]: ID, or a recovered one.
func validateWorkflowID(c *call) int {
	if workflowIDForm().MatchString(c.arg(0)) {
		c.print(c.arg(0))
		return 0
	}
	c.warn("invalid workflow id %q; using a recovered one", c.arg(0))
	c.print(recoveredID(c.arg(1), c.Now()))
	return 0
}

// missing lists the names that are not variable names or fail ok.
func (c *call) missing(names []string, ok func(name string) bool) []string {
	var out []string
	for _, n := range names {
		if !varName().MatchString(n) || !ok(n) {
			out = append(out, n)
		}
	}
	return out
}

func (c *call) isSet(n string) bool { _, ok := c.vars[n]; return ok }

func (c *call) nonEmpty(n string) bool { return c.vars[n] != "" }

// validate_state_restoration VAR...: 1 when one is empty.
func validateStateRestoration(c *call) int {
	if m := c.missing(c.args, c.nonEmpty); len(m) > 0 {
		return c.fail(1, "ERROR: State restoration incomplete: missing %s", strings.Join(m, " "))
	}
	return 0
}

// validate_state_variables VAR...: 1 when one is not set at all (empty
// is set), logged through log_command_error when the shell defines it.
func validateStateVariables(c *call) int {
	m := c.missing(c.args, c.isSet)
	if len(m) == 0 {
		return 0
	}
	msg := "State variables not set: " + strings.Join(m, " ")
	if c.funcs["log_command_error"] {
		c.run("log_command_error", firstNonEmpty(c.vars["COMMAND_NAME"], "unknown"), firstNonEmpty(c.shellID, "unknown"),
			c.vars["USER_ARGS"], "state_error", msg, "validate_state_variables", "{}")
	}
	return c.fail(1, "%s", msg)
}

// blockVars are validate_block_state's fixed lists.
var blockVars = map[string][]string{
	"state":  {"FEATURE_DESCRIPTION", "WORKFLOW_ID", "CLAUDE_PROJECT_DIR", "RESEARCH_COMPLEXITY"},
	"verify": {"TOPIC_PATH", "RESEARCH_DIR", "PLANS_DIR", "WORKFLOW_ID", "FEATURE_DESCRIPTION"},
}

// validate_block_state state|verify: each of the block's variables set
// and not empty.
func validateBlockState(c *call) int {
	names, ok := blockVars[c.arg(0)]
	if !ok {
		return c.fail(1, "unknown block type %q; use state or verify", c.arg(0))
	}
	if m := c.missing(names, c.nonEmpty); len(m) > 0 {
		return c.fail(1, "%s block: empty or not set: %s", c.arg(0), strings.Join(m, " "))
	}
	return 0
}

// blockVarNames are the variables validate_block_state reads.
func blockVarNames() []string {
	var out []string
	for _, k := range []string{"state", "verify"} {
		for _, n := range blockVars[k] {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// validate_state_file FILE: 0 when FILE is a readable file. The
// original also wanted 50 bytes, a guess at corruption for a script it
// sourced; flowstate's state is data, and an empty one is valid.
func validateStateFile(c *call) int {
	// OpenRegular: a FIFO named here must not hang the call.
	if f, err := fsx.OpenRegular(c.abs(c.arg(0))); err == nil {
		f.Close()
		return 0
	}
	return c.fail(1, "State file does not exist or is not readable: %s", c.arg(0))
}

// validate_state_file_path ID [STATE_FILE]: 0 when STATE_FILE (default
// the shell's) is empty or is workflow ID's state file.
func validateStateFilePath(c *call) int {
	file := c.vars["STATE_FILE"]
	if len(c.args) > 1 {
		file = c.args[1]
	}
	if file == "" {
		return 0
	}
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	if want := stateFile(p, c.arg(0)); file != want {
		return c.fail(1, "STATE_FILE PATH MISMATCH DETECTED: STATE_FILE is %s, but workflow %s's state file is %s", file, c.arg(0), want)
	}
	return 0
}

// validate_library_functions LIBRARY: compat defines every function of
// the libraries it replaces; error-handling.sh is not replaced, so its
// log_command_error must be defined.
func validateLibraryFunctions(c *call) int {
	if c.arg(0) == "error-handling" && !c.funcs["log_command_error"] {
		return c.fail(1, "error-handling: log_command_error is not defined (source error-handling.sh)")
	}
	return 0
}
