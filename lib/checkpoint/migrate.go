package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// Migrations follow the bash library's chain (1.0 → 1.1 → 1.2 → 1.3 → 2.0 →
// 2.1), one pure function per step over the decoded document, with its
// bugs fixed: the newest transition table, research-and-revise ends at
// plan, tests_passing is never touched, and the 2.1 step fills every field
// flowstate's 2.1 requires so the result validates.
//
// Fields a step does not know are kept: users keep their own data there,
// and the 1.x fields (replanning_count, replan_history, …) live on.

type step func(m map[string]any, k known) error

// known is what a migration knows besides the document: the caller's
// scope guess, and the machine the document's workflow runs (a
// definition's; nil for the default machine).
type known struct {
	guess ScopeGuesser
	runs  *machine.Machine
}

// machine is the machine the document runs.
func (k known) machine() *machine.Machine {
	if k.runs != nil {
		return k.runs
	}
	return machine.Default()
}

// ScopeGuesser names the scope of a workflow whose checkpoint names none,
// from its description. Migrate takes it from its caller (the offline
// classifier, lib/intent) so that the document's rules depend on no word
// list: tuning one changes the guess, never what Migrate does with it.
type ScopeGuesser func(description string) string

var migrations = map[string]step{
	"1.0": migrate10to11,
	"1.1": migrate11to12,
	"1.2": migrate12to13,
	"1.3": migrate13to20,
	"2.0": migrate20to21,
}

var nextVersion = map[string]string{"1.0": "1.1", "1.1": "1.2", "1.2": "1.3", "1.3": "2.0", "2.0": "2.1"}

// Migrate returns doc as a valid 2.1 document and the version it had.
//
// An already valid flowstate 2.1 document comes back as the same bytes
// (out == doc), so callers can skip the write. A document saying "2.1"
// without workflow_id was written by the bash library (its 2.1 is not
// ours); it is migrated like a 2.0 one and from is still "2.1": callers
// decide whether to write by comparing bytes, not versions.
//
// The version is schema_version, else the bash libraries' "version", else 1.0.
// Unknown or newer versions, corrupt JSON and documents that cannot be
// repaired are fail.Invalid naming the version or path and what to do.
//
// A document that names no scope gets the one guess reads in its
// description (see guessScope); with guess nil, full-implementation.
func Migrate(doc []byte, guess ScopeGuesser) (out []byte, from string, err error) {
	return MigrateRunning(doc, guess, nil)
}

// MigrateRunning is Migrate for a document whose workflow runs machine
// runs, a definition's (nil: the default machine): a 2.0 document's
// partial transition table and missing terminal state come from its
// scopes, as they come from the built-in ones for the default machine.
func MigrateRunning(doc []byte, guess ScopeGuesser, runs *machine.Machine) (out []byte, from string, err error) {
	if err := limit.JSON(doc, "checkpoint"); err != nil {
		return nil, "", err
	}
	if !gjson.ValidBytes(doc) {
		return nil, "", ErrNotJSON
	}
	root := gjson.ParseBytes(doc)
	if !root.IsObject() {
		return nil, "", fail.Invalidf("checkpoint: must be a JSON object, got %s", describe(root))
	}
	from, key, err := detectVersion(root)
	if err != nil {
		return nil, "", err
	}
	if from == SchemaVersion && root.Get("workflow_id").Exists() {
		if err := Validate(doc); err != nil {
			return nil, from, err
		}
		return doc, from, nil
	}
	m, err := Decode(doc)
	if err != nil {
		return nil, from, err
	}
	if key == "version" {
		delete(m, "version") // superseded by schema_version
	}
	v := from
	if v == SchemaVersion {
		v = "2.0" // the bash library's 2.1: same shape as 2.0 plus classification
	}
	for v != SchemaVersion {
		if err := migrations[v](m, known{guess, runs}); err != nil {
			return nil, from, fail.Invalidf("checkpoint: cannot migrate %s to %s: %w", v, nextVersion[v], err)
		}
		v = nextVersion[v]
	}
	if out, err = Encode(m); err != nil {
		return nil, from, err
	}
	if err := Validate(out); err != nil {
		return nil, from, fmt.Errorf("checkpoint: migrated from %s, but the result is still invalid (fix the original and retry; it is unchanged): %w", from, err)
	}
	return out, from, nil
}

// detectVersion returns the document's version and the key it came from.
func detectVersion(root gjson.Result) (version, key string, err error) {
	key = "schema_version"
	v := root.Get(key)
	if !v.Exists() {
		key = "version"
		if v = root.Get(key); !v.Exists() {
			return "1.0", "", nil // the bash library's rule
		}
	}
	if v.Type != gjson.String {
		return "", key, fail.Invalidf("checkpoint: %s must be a string such as %q, got %s; fix it or restore a backup", key, SchemaVersion, describe(v))
	}
	if v.Str == SchemaVersion {
		return v.Str, key, nil
	}
	if _, ok := migrations[v.Str]; ok {
		return v.Str, key, nil
	}
	if f, err := strconv.ParseFloat(v.Str, 64); err == nil && f > 2.1 {
		return "", key, fail.Invalidf("checkpoint: schema version %q is newer than this flowstate understands (%s); upgrade flowstate, or restore a backup written by this version", v.Str, SchemaVersion)
	}
	return "", key, fail.Invalidf("checkpoint: schema version %q is unknown (this flowstate migrates 1.0, 1.1, 1.2, 1.3, 2.0 and reads %s); fix %s or restore a backup", v.Str, SchemaVersion, key)
}

// Decode decodes a JSON object, keeping numbers exactly as written (ids,
// big counters), for the operations that rebuild a whole document.
func Decode(doc []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fail.Invalidf("checkpoint: not a JSON object: %v", err)
	}
	return m, nil
}

// 1.0 → 1.1: replanning bookkeeping.
func migrate10to11(m map[string]any, _ known) error {
	setDefault(m, "replanning_count", json.Number("0"))
	setDefault(m, "last_replan_reason", nil)
	setDefault(m, "replan_phase_counts", map[string]any{})
	setDefault(m, "replan_history", []any{})
	m["schema_version"] = "1.1"
	return nil
}

// 1.1 → 1.2: debugging bookkeeping.
func migrate11to12(m map[string]any, _ known) error {
	setDefault(m, "debug_report_path", nil)
	setDefault(m, "user_last_choice", nil)
	setDefault(m, "debug_iteration_count", json.Number("0"))
	m["schema_version"] = "1.2"
	return nil
}

// 1.2 → 1.3: topic and template fields (from workflow_state when the
// caller saved them there), context preservation, spec maintenance.
func migrate12to13(m map[string]any, _ known) error {
	ws, _ := m["workflow_state"].(map[string]any)
	for _, k := range []string{"topic_directory", "topic_number", "template_source", "template_variables"} {
		setDefault(m, k, ws[k]) // nil when absent, as in the bash library
	}
	setDefault(m, "context_preservation", map[string]any{
		"pruning_log":                []any{},
		"artifact_metadata_cache":    map[string]any{},
		"subagent_output_references": []any{},
	})
	setDefault(m, "spec_maintenance", map[string]any{
		"parent_plan_path":         nil,
		"grandparent_plan_path":    nil,
		"spec_updater_invocations": []any{},
		"checkbox_propagation_log": []any{},
	})
	m["schema_version"] = "1.3"
	return nil
}

// 1.3 → 2.0: the state machine becomes first-class. Phase numbers map to
// states; the table is the newest one, not the bash migration's old one.
// The scope is what the offline classifier (flowstate classify) reads in
// the description, or full-implementation when the current state is off
// that scope's route.
func migrate13to20(m map[string]any, k known) error {
	if _, ok := m["state_machine"].(map[string]any); !ok {
		m["state_machine"] = smFromPhases(m, k.guess)
	}
	setObject(m, "phase_data")
	setObject(m, "supervisor_state")
	if _, ok := m["error_state"].(map[string]any); !ok {
		last, _ := m["last_error"].(string)
		m["error_state"] = map[string]any{"last_error": nilIfEmpty(last), "retry_count": json.Number("0"), "failed_state": nil}
	}
	if _, ok := m["metadata"].(map[string]any); !ok {
		m["metadata"] = map[string]any{
			"checkpoint_id": m["checkpoint_id"],
			"project_name":  m["project_name"],
			"created_at":    m["created_at"],
			"updated_at":    m["updated_at"],
		}
	}
	m["schema_version"] = "2.0"
	return nil
}

// migrate20to21 adds the classification and fills, from what the document
// has, every field flowstate's 2.1 requires (a missing scope is guessed
// as in 1.3 → 2.0). It also repairs what 2.0 documents commonly carry:
// comma-string transition lists, the bash migration's old default table,
// missing terminal states.
func migrate20to21(m map[string]any, k known) error {
	command, desc, err := stateMachine21(m, k)
	if err != nil {
		return err
	}
	md, err := objectOrNew(m, "metadata", func() map[string]any { return map[string]any{} })
	if err != nil {
		return err
	}
	created, err := firstTime("created_at", m["created_at"], md["created_at"], m["updated_at"], md["updated_at"], m["timestamp"])
	if err != nil {
		return err
	}
	updated, _ := firstTime("updated_at", m["updated_at"], md["updated_at"])
	if updated == "" {
		updated = created
	}
	id := firstString(m["workflow_id"], m["checkpoint_id"], md["checkpoint_id"])
	if id == "" {
		prefix := command
		if prefix == "" {
			prefix = "workflow"
		}
		t, _ := time.Parse(time.RFC3339Nano, created)
		id = prefix + "_" + t.Format("20060102_150405") // the bash checkpoint id shape
	}
	project := firstString(m["project_name"], md["project_name"])
	m["workflow_id"] = id
	m["command"] = command
	m["project_name"] = project
	m["workflow_description"] = desc
	m["created_at"] = created
	m["updated_at"] = updated
	migrateStatus(m)
	if err := records21(m); err != nil {
		return err
	}
	metadata21(md, id, project, created, updated)
	m["schema_version"] = SchemaVersion
	return nil
}

// stateMachine21 is migrate20to21's state_machine: its table, current and
// completed states, workflow_config (a missing scope guessed, a missing
// terminal state from the scope) and classification. It returns the
// command and description the document has.
func stateMachine21(m map[string]any, k known) (command, desc string, err error) {
	sm, err := objectOrNew(m, "state_machine", func() map[string]any { return smFromPhases(m, k.guess) })
	if err != nil {
		return "", "", err
	}
	table, err := migrateTable(sm)
	if err != nil {
		return "", "", err
	}
	if s, ok := sm["current_state"].(string); !ok || s == "" {
		sm["current_state"] = phaseState(m["current_phase"], "initialize")
	}
	sm["completed_states"] = dedupeStrings(sm["completed_states"])

	wc, err := objectOrNew(sm, "workflow_config", func() map[string]any { return map[string]any{} })
	if err != nil {
		return "", "", fmt.Errorf("state_machine.%w", err)
	}
	desc = firstString(m["workflow_description"], wc["description"])
	command = firstString(m["command"], wc["command"], m["workflow_type"])
	scope := firstString(wc["scope"])
	if scope == "" {
		current, _ := sm["current_state"].(string)
		scope = guessScope(k.guess, desc, current)
	}
	setDefault(wc, "scope", scope)
	setDefault(wc, "description", desc)
	setDefault(wc, "command", command)
	if mach := k.machine(); partial(table, sm, mach.Scopes[scope].Terminal) && runsOn(table, mach) {
		table = tableOf(mach)
		sm["transition_table"] = table
	}
	if t, ok := wc["terminal_state"].(string); !ok || t == "" {
		t, err := terminalFor(scope, table, k.machine())
		if err != nil {
			return "", "", err
		}
		wc["terminal_state"] = t
	}
	return command, desc, migrateClassification(sm, scope)
}

// partial reports whether table leaves out a state the document needs: a
// state a transition leads to, the current or a completed state, or the
// scope's terminal state ("" for none). The bash libraries wrote such
// tables (only the rows a workflow had used) and ran on their own table
// whatever the document said.
func partial(table, sm map[string]any, terminal string) bool {
	needed := []any{sm["current_state"], terminal}
	if done, ok := sm["completed_states"].([]any); ok {
		needed = append(needed, done...)
	}
	for _, next := range table {
		if l, ok := next.([]any); ok {
			needed = append(needed, l...)
		}
	}
	for _, s := range needed {
		if name, ok := s.(string); ok && name != "" {
			if _, row := table[name]; !row {
				return true
			}
		}
	}
	return false
}

// runsOn reports whether every state table names, as a row or a target,
// is a state of machine m: a partial table of m's states is m's table
// written in part, which m completes. One naming other states is the
// user's own and stays as it is.
func runsOn(table map[string]any, m *machine.Machine) bool {
	for s, next := range table {
		if !m.HasState(s) {
			return false
		}
		l, _ := next.([]any)
		for _, t := range l {
			if name, ok := t.(string); !ok || !m.HasState(name) {
				return false
			}
		}
	}
	return true
}

// records21 is migrate20to21's phase_data, supervisor_state (its workers'
// records) and error_state.
func records21(m map[string]any) error {
	if err := setObject(m, "phase_data"); err != nil {
		return err
	}
	if err := setObject(m, "supervisor_state"); err != nil {
		return err
	}
	migrateWorkers(m["supervisor_state"])
	return migrateErrorState(m)
}

// metadata21 is migrate20to21's metadata: its id, project and times,
// from the top level where it lacks them.
func metadata21(md map[string]any, id, project, created, updated string) {
	if s, ok := md["checkpoint_id"].(string); !ok || s == "" {
		md["checkpoint_id"] = id
	}
	if _, ok := md["project_name"].(string); !ok {
		md["project_name"] = project
	}
	if t, err := firstTime("metadata.created_at", md["created_at"]); err == nil {
		md["created_at"] = t
	} else {
		md["created_at"] = created
	}
	if t, err := firstTime("metadata.updated_at", md["updated_at"]); err == nil {
		md["updated_at"] = t
	} else {
		md["updated_at"] = updated
	}
}

// defaultTable is the table of machine.Default (the newest one of the
// bash state machine, 2.0.0, Dec 2025) as a decoded document holds it.
// Built from the machine, not frozen here: a migrated workflow has no
// machine.json, so machine.Default runs it, and its checkpoint must name
// the same states, or the first transition into a state the copy lacks
// would be refused as invalid. The migration tests pin the table, so a
// change to the default machine is a deliberate act for migrations too.
func defaultTable() map[string]any { return tableOf(machine.Default()) }

// tableOf is machine m's transition table as a decoded document holds it.
func tableOf(m *machine.Machine) map[string]any {
	t := map[string]any{}
	for state, next := range m.Transitions {
		l := make([]any, len(next))
		for i, s := range next {
			l[i] = s
		}
		t[state] = l
	}
	return t
}

// The table the bash 1.3 → 2.0 migration wrote into checkpoints (bug 12).
// A 2.0 document carrying exactly this table gets the newest one instead;
// any other table is the user's and is kept.
var oldDefaultTable = map[string]string{
	"initialize": "research", "research": "plan,complete", "plan": "implement,complete",
	"implement": "test", "test": "debug,document", "debug": "test,complete",
	"document": "complete", "complete": "",
}

var phaseStates = []string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"}

// PhaseStates lists the states of the 1.x phase numbers 0..7, in order:
// the bash libraries' map_phase_to_state.
func PhaseStates() []string { return slices.Clone(phaseStates) }

// AddV1Fields adds the top-level fields the 1.0 → 1.3 migrations add,
// with their defaults, where m lacks them; schema_version stays as it is.
func AddV1Fields(m map[string]any) {
	version, ok := m["schema_version"]
	for _, step := range []step{migrate10to11, migrate11to12, migrate12to13} {
		_ = step(m, known{}) // these steps only add defaults; they cannot fail
	}
	if ok {
		m["schema_version"] = version
	} else {
		delete(m, "schema_version")
	}
}

// phaseState maps a 1.x phase number (0..7, number or digit string) to
// its state, or returns def.
func phaseState(v any, def string) string {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= len(phaseStates) {
		return def
	}
	return phaseStates[n]
}

// smFromPhases builds a 2.0 state machine from 1.x fields.
func smFromPhases(m map[string]any, guess ScopeGuesser) map[string]any {
	completed := []any{}
	if phases, ok := m["completed_phases"].([]any); ok {
		for _, p := range phases {
			// Unknown phases are dropped: the bash library mapped them all
			// to initialize.
			if s := phaseState(p, ""); s != "" && !containsAny(completed, s) {
				completed = append(completed, s)
			}
		}
	}
	desc, _ := m["workflow_description"].(string)
	command, _ := m["workflow_type"].(string)
	current := phaseState(m["current_phase"], "initialize")
	scope := guessScope(guess, desc, current)
	terminal, _ := terminalFor(scope, defaultTable(), machine.Default())
	return map[string]any{
		"current_state":    current,
		"completed_states": completed,
		"transition_table": defaultTable(),
		"workflow_config": map[string]any{
			"scope":          scope,
			"description":    desc,
			"command":        command,
			"terminal_state": terminal,
		},
	}
}

// guessScope is the scope of a workflow whose checkpoint names none, from
// its description and the state it is in. The description is read by the
// caller's guess (the one offline classifier, lib/intent, not keyword
// rules of the migration's own as the bash migration had: research...plan,
// fix|debug), so a migrated "revise plans/003.md" is research-and-revise
// as a new one would be. The state is evidence the text is not: a
// workflow of a scope is only ever in that scope's reach
// (docs/architecture.md, "The state machine"), so when the text's scope
// cannot be in the current state the text is wrong, and the scope is
// full-implementation, whose reach holds every state of the default
// machine; the migrated workflow can then move on instead of being
// refused every transition. Without a guess, it is full-implementation
// for the same reason.
func guessScope(guess ScopeGuesser, desc, current string) string {
	if guess == nil {
		return machine.FullImplementation
	}
	scope := guess(desc)
	m := machine.Default()
	if sc, ok := m.Scopes[scope]; ok && m.HasState(current) && !slices.Contains(m.Reach(sc), current) {
		return machine.FullImplementation
	}
	return scope
}

// terminalFor is the terminal state of scope in table: machine m's for
// its scopes (for the default machine sm_init's map, including
// research-and-revise → plan, which sm_load forgot and ended at
// complete), else complete, else the table's only state with no way out.
func terminalFor(scope string, table map[string]any, m *machine.Machine) (string, error) {
	if sc, ok := m.Scopes[scope]; ok {
		if _, ok := table[sc.Terminal]; ok {
			return sc.Terminal, nil
		}
	}
	if _, ok := table["complete"]; ok {
		return "complete", nil
	}
	var ends []string
	for s, next := range table {
		if l, ok := next.([]any); ok && len(l) == 0 {
			ends = append(ends, s)
		}
	}
	if len(ends) == 1 {
		return ends[0], nil
	}
	return "", fmt.Errorf("state_machine.workflow_config.terminal_state: missing and cannot be inferred for scope %q; set it to a state of the transition table", scope)
}

// migrateTable turns the bash libraries' comma strings into arrays and replaces
// the bash migration's outdated default table.
func migrateTable(sm map[string]any) (map[string]any, error) {
	raw, present := sm["transition_table"]
	if !present || raw == nil {
		t := defaultTable()
		sm["transition_table"] = t
		return t, nil
	}
	t, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("state_machine.transition_table: must be an object, got %s; fix it and retry", typeName(raw))
	}
	old := len(t) == len(oldDefaultTable)
	for s, v := range t {
		str, isStr := v.(string)
		if old && (!isStr || oldDefaultTable[s] != str) {
			old = false
		}
		if isStr {
			t[s] = splitComma(str)
		}
	}
	if old {
		t = defaultTable()
		sm["transition_table"] = t
	}
	return t, nil
}

func splitComma(s string) []any {
	out := []any{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !containsAny(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// migrateClassification adds the 2.1 classification, or completes one
// that a caller already stored (some stored topics as objects).
func migrateClassification(sm map[string]any, scope string) error {
	c, err := objectOrNew(sm, "classification", func() map[string]any {
		return map[string]any{"reasoning": "migrated from 2.0; re-classify"}
	})
	if err != nil {
		return fmt.Errorf("state_machine.%w", err)
	}
	setDefault(c, "workflow_type", scope)
	setDefault(c, "research_complexity", json.Number("2"))
	c["research_complexity"] = NormalizeComplexity(c["research_complexity"])
	setDefault(c, "confidence", json.Number("0"))
	setDefault(c, "reasoning", "")
	topics := []any{}
	if list, ok := c["research_topics"].([]any); ok {
		for i, t := range list {
			switch x := t.(type) {
			case string:
				topics = append(topics, x)
			case map[string]any:
				name, ok := x["short_name"].(string)
				if !ok {
					return fmt.Errorf("state_machine.classification.research_topics.%d: an object without a short_name string; replace it with a topic string", i)
				}
				topics = append(topics, name)
			default:
				return fmt.Errorf("state_machine.classification.research_topics.%d: must be a string, got %s", i, typeName(t))
			}
		}
	} else if c["research_topics"] != nil {
		return fmt.Errorf("state_machine.classification.research_topics: must be an array, got %s", typeName(c["research_topics"]))
	}
	c["research_topics"] = topics
	if t, err := firstTime("classified_at", c["classified_at"]); err == nil {
		c["classified_at"] = t
	} else {
		c["classified_at"] = nil
	}
	return nil
}

// NormalizeComplexity is sm_init's normalize_complexity, the one copy
// of its rule: decimals cut off, then anything but digits → 2, 1-4 kept,
// else a 0-100 score bucketed (<30 → 1, <50 → 2, <70 → 3, else 4).
func NormalizeComplexity(v any) json.Number {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return "2"
	}
	s, _, _ = strings.Cut(s, ".")
	if !isDigits(s) {
		return "2"
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil: // more digits than an int64: a score past 70
		return "4"
	case n >= 1 && n <= 4:
		return json.Number(strconv.FormatInt(n, 10))
	case n < 30:
		return "1"
	case n < 50:
		return "2"
	case n < 70:
		return "3"
	}
	return "4"
}

// migrateStatus maps the statuses found in the wild (the case labels) to
// four of 2.1's. An unknown one becomes in_progress and is kept as
// legacy_status.
func migrateStatus(m map[string]any) {
	s, _ := m["status"].(string)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "in_progress", "in-progress", "running", "pending", "paused", "pre_execution":
		m["status"] = InProgress
	case "complete", "completed", "done", "success", "succeeded":
		m["status"] = Complete
	case "failed", "failure", "error":
		m["status"] = Failed
	case "abandoned", "cancelled", "canceled", "aborted":
		m["status"] = Abandoned
	default:
		m["legacy_status"] = m["status"]
		m["status"] = InProgress
	}
}

// migrateWorkers maps the bash libraries' worker statuses (the case
// labels) onto 2.1's.
func migrateWorkers(ss any) {
	sups, _ := ss.(map[string]any)
	for _, sup := range sups {
		s, _ := sup.(map[string]any)
		workers, _ := s["workers"].([]any)
		for _, w := range workers {
			wm, _ := w.(map[string]any)
			if st, ok := wm["status"].(string); ok {
				switch st {
				case "in_progress", "in-progress", "started":
					wm["status"] = WorkerRunning
				case "complete", "done", "success":
					wm["status"] = WorkerCompleted
				case "error":
					wm["status"] = WorkerFailed
				case "queued":
					wm["status"] = WorkerPending
				}
			}
		}
	}
}

func migrateErrorState(m map[string]any) error {
	es, err := objectOrNew(m, "error_state", func() map[string]any { return map[string]any{} })
	if err != nil {
		return err
	}
	if _, ok := es["last_error"]; !ok {
		last, _ := m["last_error"].(string)
		es["last_error"] = nilIfEmpty(last)
	}
	switch x := es["last_error"].(type) {
	case nil, string:
	default: // an error object: keep its text
		b, _ := json.Marshal(x)
		es["last_error"] = string(b)
	}
	setDefault(es, "retry_count", json.Number("0"))
	if s, ok := es["failed_state"].(string); ok && s == "" {
		es["failed_state"] = nil
	}
	setDefault(es, "failed_state", nil)
	return nil
}

// firstTime returns the first value that parses as a time, written as
// every time in a checkpoint is (Timestamp: RFC 3339 UTC, seconds), so
// migrated and new times compare as text alike.
func firstTime(name string, vals ...any) (string, error) {
	for _, v := range vals {
		if t, ok := ParseTime(v); ok {
			return Timestamp(t), nil
		}
	}
	return "", fmt.Errorf("%s: no usable timestamp (created_at, updated_at or metadata.*); add \"created_at\": \"2025-11-07T14:30:22Z\" with the real time and retry", name)
}

// ParseTime reads a time as the bash libraries wrote them: RFC 3339,
// the same without a zone (UTC), or epoch seconds.
func ParseTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		x = strings.TrimSpace(x)
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t, true
		}
		// Zoneless forms: `date -u` output without the Z.
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t, true
			}
		}
	case json.Number:
		if n, err := x.Int64(); err == nil && n > 0 && n < 1<<34 {
			return time.Unix(n, 0), true // epoch seconds
		}
	}
	return time.Time{}, false
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// setObject makes m[k] an empty object when missing or null.
func setObject(m map[string]any, k string) error {
	_, err := objectOrNew(m, k, func() map[string]any { return map[string]any{} })
	return err
}

func objectOrNew(m map[string]any, k string, mk func() map[string]any) (map[string]any, error) {
	switch x := m[k].(type) {
	case map[string]any:
		return x, nil
	case nil:
		o := mk()
		m[k] = o
		return o, nil
	default:
		return nil, fmt.Errorf("%s: must be an object, got %s; fix it and retry", k, typeName(x))
	}
}

func firstString(vals ...any) string {
	for _, v := range vals {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func dedupeStrings(v any) []any {
	out := []any{}
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); !ok || !containsAny(out, s) {
			out = append(out, x) // non-strings are left for Validate to name
		}
	}
	return out
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// Encode writes a decoded document in the one layout: the 2.1 fields in
// Validate's order (topNames, smNames), which is how New writes them,
// then everything else sorted (encoding/json sorts nested maps anyway).
func Encode(m map[string]any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeOrdered(&b, m, topNames[:], true); err != nil {
		return nil, fail.Invalidf("checkpoint: encode document: %v", err)
	}
	return format(b.Bytes()), nil
}

func encodeOrdered(b *bytes.Buffer, m map[string]any, order []string, top bool) error {
	keys := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeValue(b, k); err != nil {
			return err
		}
		b.WriteByte(':')
		if sm, ok := m[k].(map[string]any); ok && top && k == "state_machine" {
			if err := encodeOrdered(b, sm, smNames[:], false); err != nil {
				return err
			}
			continue
		}
		if err := encodeValue(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func encodeValue(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
