package compat

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The functions of state-persistence.sh.

// answerAll hands the shell everything load_workflow_state sets: every
// stored and derived value, exported as the sourced file did, plus
// STATE_FILE and the state machine's variables.
func (c *call) answerAll(w *store.Workflow) error {
	st, err := w.LoadState()
	if err != nil {
		return err
	}
	for _, warning := range st.Warnings {
		c.warn("workflow %s state: %s", w.ID, warning)
	}
	doc, m, err := sm.Load(w)
	if err != nil {
		return err
	}
	for k, v := range sm.Derived(w, doc) {
		st.Set(k, v)
	}
	// answerMachine gives these their original form.
	for _, k := range []string{"CURRENT_STATE", "TERMINAL_STATE", "COMPLETED_STATES", "COMPLETED_STATES_COUNT"} {
		delete(st.Values, k)
	}
	warnings, err := st.WriteLoad(&c.answer, statefile.LoadOptions{Export: true, Getenv: c.Getenv, Own: sm.IsDerived})
	for _, warning := range warnings {
		c.warn("workflow %s state: %s", w.ID, warning)
	}
	if err != nil {
		return err
	}
	c.set("STATE_FILE", w.P.StatePath(w.ID), false)
	c.answerMachine(doc, m)
	return nil
}

// answerMachine hands the shell the state machine's variables as the
// original kept them: CURRENT_STATE (shown), TERMINAL_STATE,
// COMPLETED_STATES (an array of the states entered),
// COMPLETED_STATES_COUNT, COMPLETED_STATE_i and a STATE_* constant per
// state.
func (c *call) answerMachine(doc []byte, m *machine.Machine) {
	st := sm.StatusOf("", doc)
	cur := shown(st, m)
	c.set("CURRENT_STATE", cur, true)
	c.set("TERMINAL_STATE", st.TerminalState, true)
	done := entered(st.CompletedStates, cur, m.Initial)
	c.setArray("COMPLETED_STATES", done)
	c.set("COMPLETED_STATES_COUNT", strconv.Itoa(len(done)), true)
	for i, s := range done {
		c.set("COMPLETED_STATE_"+strconv.Itoa(i), s, true)
	}
	for _, kv := range constants(m.States()) {
		c.set(kv[0], kv[1], false)
	}
}

// chooseID makes id the session's workflow-to-be (init_workflow_state),
// so a later block finds it; a workflow of another session is refused.
func (c *call) chooseID(p *store.Project, id string) error {
	if err := store.ValidID(id); err != nil {
		return fail.Invalidf("workflow id: %w", err)
	}
	session := c.session()
	if s, ok := p.Summary(id); ok && s.Session != "" && s.Session != session {
		return fail.Usagef("workflow %s belongs to another Claude Code session; choose a new id with generate_unique_workflow_id", id)
	}
	if session == "" {
		if id != c.shellID {
			c.warn("no CLAUDE_CODE_SESSION_ID, so workflow %s is known only to this shell: start it with sm_init in this block, or export FLOWSTATE_WORKFLOW=%s for the next ones", id, id)
		}
	} else if err := p.SetSession(session, id); err != nil {
		return err
	}
	c.set("WORKFLOW_ID", id, true)
	c.set("STATE_FILE", p.StatePath(id), false)
	c.set("CLAUDE_PROJECT_DIR", p.Dir, true)
	return nil
}

// init_workflow_state [ID]: choose the workflow id and print its state
// file. The id is kept for the session, so later blocks find it;
// sm_init creates the workflow. Running it again changes nothing.
func initWorkflowState(c *call) int {
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	id := c.arg(0)
	if id == "" {
		id = uniqueID("workflow", c.Now())
	}
	if err := c.chooseID(p, id); err != nil {
		return c.failErr(err)
	}
	c.print(p.StatePath(id))
	return 0
}

// load_workflow_state [ID] [IS_FIRST_BLOCK] [REQUIRED_VAR...]: set the
// workflow's variables in the shell. 0 loaded (or chosen and not yet
// started); 1 none, IS_FIRST_BLOCK=true (ID is then chosen, as
// init_workflow_state does); 2 none; 3 unreadable or a REQUIRED_VAR
// empty. The design's load_workflow_state KEY prints one value instead.
func loadWorkflowState(c *call) int {
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	id, first := c.arg(0), c.arg(1) == "true"
	if len(c.args) == 1 && keyForm().MatchString(id) && !exists(p, id) {
		return loadKey(c, id)
	}
	// A workflow chosen by init_workflow_state and not started yet loads
	// as the original's new state file did: its id and paths only.
	var w *store.Workflow
	pending := ""
	if id != "" {
		if !exists(p, id) && (id == c.shellID || c.pointsAt(p, id)) {
			pending = id
		} else {
			w, err = p.Workflow(id)
		}
	} else {
		var ns errNotStarted
		if w, err = c.workflow(); errors.As(err, &ns) {
			pending, err = ns.id, nil
		}
	}
	switch {
	case pending != "":
		if err := c.chooseID(p, pending); err != nil {
			return c.failErr(err)
		}
	case err == nil:
		if err := c.answerAll(w); err != nil {
			return c.fail(3, "the workflow's state could not be read: %v", err)
		}
	case fail.Code(err) == fail.Usage && first:
		if id != "" {
			if err := c.chooseID(p, id); err != nil {
				return c.failErr(err)
			}
		}
		return 1
	case fail.Code(err) == fail.Usage:
		if cur, _ := p.SessionWorkflow(c.session()); id != "" && cur != "" && cur != id && exists(p, cur) {
			return c.fail(2, "no workflow %s; this session's workflow is %s (an id built from $$ differs in every bash block: call load_workflow_state without an id)", id, cur)
		}
		return c.fail(2, "%v", err)
	default:
		return c.fail(3, "the workflow's state could not be read: %v", err)
	}
	return c.required(w, c.args[min(2, len(c.args)):])
}

// required is 3 when a REQUIRED_VAR of load_workflow_state is empty,
// after loading (the workflow's value) or in the shell.
func (c *call) required(w *store.Workflow, names []string) int {
	var loaded map[string]string
	if w != nil && len(names) > 0 {
		if st, err := sm.Values(w); err == nil {
			loaded = st.Values
		}
	}
	for _, n := range names {
		v, ok := loaded[n]
		if !ok {
			v = c.vars[n]
		}
		if !varName().MatchString(n) || v == "" {
			return c.fail(3, "required variable %q is empty or not set after loading", n)
		}
	}
	return 0
}

// pointsAt reports whether the session's pointer names id.
func (c *call) pointsAt(p *store.Project, id string) bool {
	cur, _ := p.SessionWorkflow(c.session())
	return cur != "" && cur == id
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
	st, err := sm.Values(w)
	if err != nil {
		return c.failErr(err)
	}
	v, ok := st.Values[key]
	if !ok {
		return c.fail(1, "no %s in workflow %s (load_workflow_state KEY prints one value; load_workflow_state [ID] loads them all)", key, w.ID)
	}
	c.print(v)
	return 0
}

// checkDerived splits off the pairs naming a variable flowstate derives
// from the checkpoint: one with the derived value changes nothing (the
// design documents append CURRENT_STATE after sm_init) and is dropped; one with
// another value would be silently ignored, so it is refused, an error
// each.
func checkDerived(w *store.Workflow, pairs [][2]string) (keep [][2]string, refused []error, err error) {
	var derived map[string]string
	for _, kv := range pairs {
		if !sm.IsDerived(kv[0]) {
			keep = append(keep, kv)
			continue
		}
		if derived == nil {
			doc, err := w.ReadCheckpoint()
			if err != nil {
				return nil, nil, err
			}
			derived = sm.Derived(w, doc)
		}
		if derived[kv[0]] != kv[1] {
			refused = append(refused, fail.Invalidf("%s is %q in workflow %s, derived from its checkpoint; it cannot be set to %q (sm_transition and sm_init change it)", kv[0], derived[kv[0]], w.ID, kv[1]))
		}
	}
	return keep, refused, nil
}

// appendPairs stores pairs in the shell's workflow; a pair refused by
// checkDerived is reported and the rest stored, or, with all set,
// nothing is.
func (c *call) appendPairs(pairs [][2]string, all bool) int {
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	for _, kv := range pairs {
		if err := statefile.CheckPair(kv[0], kv[1]); err != nil {
			return c.failErr(err)
		}
	}
	pairs, refused, err := checkDerived(w, pairs)
	if err != nil {
		return c.failErr(err)
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
	if len(refused) > 0 {
		return 1
	}
	return 0
}

// append_workflow_state KEY VALUE
func appendWorkflowState(c *call) int {
	if len(c.args) != 2 {
		return c.usage("append_workflow_state KEY VALUE (got %d arguments; quote a value with spaces)", len(c.args))
	}
	return c.appendPairs([][2]string{{c.args[0], c.args[1]}}, true)
}

// append_workflow_state_array KEY ITEM...: the items joined by spaces.
func appendWorkflowStateArray(c *call) int {
	if len(c.args) < 1 {
		return c.usage("append_workflow_state_array KEY ITEM...")
	}
	return c.appendPairs([][2]string{{c.args[0], strings.Join(c.args[1:], " ")}}, true)
}

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

// save_json_checkpoint NAME JSON: kept at phase_data.named.NAME.
func saveJSONCheckpoint(c *call) int {
	if len(c.args) < 2 {
		return c.usage("save_json_checkpoint NAME JSON")
	}
	return c.saveNamed(c.args[0], []byte(c.args[1]))
}

func (c *call) saveNamed(name string, value []byte) int {
	if !namedCheckpoint().MatchString(name) {
		return c.fail(1, "name %q must match %s", name, namedCheckpoint())
	}
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	if err := w.SetCheckpoint(namedPath(name), value); err != nil {
		return c.failErr(err)
	}
	return 0
}

func namedPath(name string) string { return "phase_data.named." + name }

// load_json_checkpoint NAME: print it (compact JSON), or {} when never
// saved.
func loadJSONCheckpoint(c *call) int {
	name := c.arg(0)
	if !namedCheckpoint().MatchString(name) {
		return c.fail(1, "name %q must match %s", name, namedCheckpoint())
	}
	_, doc, err := c.checkpointed()
	if err != nil {
		return c.failErr(err)
	}
	if raw, ok, _ := checkpoint.Get(doc, namedPath(name)); ok {
		c.print(string(pretty.Ugly([]byte(raw)))) // JSON, as saved: a string keeps its quotes
	} else {
		c.print("{}")
	}
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

// append_jsonl_log NAME JSON: a line of the workflow's logs/NAME.jsonl.
func appendJSONLLog(c *call) int {
	if len(c.args) < 2 {
		return c.usage("append_jsonl_log NAME JSON")
	}
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	if err := w.AppendLog(c.args[0], []byte(c.args[1])); err != nil {
		return c.failErr(err)
	}
	return 0
}

// discover_latest_state_file COMMAND: the state file of the shell's (or
// session's) workflow when it runs COMMAND, never the newest file.
func discoverLatestStateFile(c *call) int {
	if c.arg(0) == "" {
		return c.usage("discover_latest_state_file COMMAND")
	}
	w, doc, err := c.checkpointed()
	if err != nil || gjson.GetBytes(doc, "command").String() != c.arg(0) {
		return 1
	}
	c.print(w.P.StatePath(w.ID))
	return 0
}

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
	return c.fail(1, "state file %q is missing or unreadable", c.arg(0))
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
	if want := p.StatePath(c.arg(0)); file != want {
		return c.fail(1, "STATE_FILE is %s but workflow %s keeps its state in %s", file, c.arg(0), want)
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
