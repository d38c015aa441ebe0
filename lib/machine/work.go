package machine

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Work is what one state of a workflow definition asks of agents: which
// agent does it (and which sub-supervisor coordinates a large fan-out),
// how the fan-out is formed, where each worker writes and what its file
// must hold to count, what the workers read first, how their results are
// aggregated and what a failed check or a missing worker means. The phase
// loop (lib/orchestrate) runs any Work; a state without one has no agents
// and is passed through.
type Work struct {
	// Agent is the worker agent's name, without a plugin prefix
	// (research-specialist, not flowstate:research-specialist): the
	// command's task block adds the prefix its install needs.
	Agent      string      `json:"agent"`
	Supervisor *Supervisor `json:"supervisor,omitempty"`
	// Each forms the fan-out: one worker per item.
	Each Each `json:"each,omitempty"`
	// ID, Label and Output are templates (see Render): the worker's id in
	// the records, the "Topic:" line of its prompt, and its artifact's path
	// relative to the workflow's spec directory.
	ID     string `json:"id,omitempty"`
	Label  string `json:"label,omitempty"`
	Output string `json:"output"`
	// Format is what the artifact must be to count: report, plan,
	// test-results, markdown (with Sections) or json (with Fields).
	Format   string   `json:"format"`
	Sections []string `json:"sections,omitempty"`
	Fields   []Field  `json:"fields,omitempty"`
	// Artifact is how messages name the file ("research report"); the
	// format's name by default.
	Artifact string `json:"artifact,omitempty"`
	// Reads lists earlier states whose artifacts the workers' brief names
	// to read first, in that order.
	Reads []string `json:"reads,omitempty"`
	// Aggregate is how the workers' results are summed up once all are
	// recorded: research, implementation or testing; none when empty.
	Aggregate string `json:"aggregate,omitempty"`
	// MinDelivered is how many workers of the state must deliver for the
	// failures of the others (in the last wave) to be accepted and the
	// workflow to go on, a count or a percentage; 0 means every worker
	// must deliver. Unset: 2.
	MinDelivered *Share `json:"min_delivered,omitempty"`
	// FailWhen names a number in the artifacts (a JSON field, such as
	// tests_failed): when the workers' sum is above 0 the state's check
	// failed, a retry is spent and the workflow goes to the state's
	// recovery state, whose workers get the failures, then back.
	FailWhen string `json:"fail_when,omitempty"`
	// Records is the supervisor_state key the workers are recorded under;
	// <state>_workers by default.
	Records string `json:"records,omitempty"`
	// Isolation "worktree" runs each worker of a state that fans out in
	// a git worktree of its own (the Agent tool's isolation), and merges
	// their branches into the working branch after each wave, in plan
	// order (lib/worktree); "" shares the project's tree.
	Isolation string `json:"isolation,omitempty"`
	// OnConflict is what a merge that conflicts leads to: "redo" runs
	// the conflicting worker again on the merged tree, its brief naming
	// the conflict and both workers' files; "wait" (the default) stops
	// the state for a person to merge the branch by hand.
	OnConflict string `json:"on_conflict,omitempty"`
}

// Isolation and conflict handling a state's work can ask for.
const (
	IsolationWorktree = "worktree"
	ConflictRedo      = "redo"
	ConflictWait      = "wait"
)

// Isolated reports whether the state's workers run in worktrees of their
// own when the project allows (a git repository): the definition asks
// for it and the state can have more than one worker.
func (w Work) Isolated() bool { return w.Isolation == IsolationWorktree && w.fansOut() }

// ConflictPolicy is what a merge conflict leads to, its default applied.
func (w Work) ConflictPolicy() string {
	if w.OnConflict == "" {
		return ConflictWait
	}
	return w.OnConflict
}

// Supervisor is the sub-supervisor agent that coordinates a state's
// workers once there are From of them or more.
type Supervisor struct {
	Agent string `json:"agent"`
	From  int    `json:"from"`
}

// Each is how a state's workers are formed: one per item of Source, or
// of Items (a fixed list) when Source is SourceItems.
type Each struct {
	Source string
	Items  []Item
}

// Sources of a fan-out.
const (
	// SourceRequest is one worker on the workflow's request (the default).
	SourceRequest = "request"
	// SourceTopics is one worker per research topic of the
	// classification; none classified: the request.
	SourceTopics = "topics"
	// SourceArguments is one worker per item of the command's argument,
	// the request: comma or newline separated when it has commas or
	// newlines, else one per word.
	SourceArguments = "arguments"
	// SourcePlan is one worker per phase of the plan (the artifact of the
	// state whose format is plan), batched in dependency waves; no plan:
	// the request.
	SourcePlan = "plan"
	// SourceFailures is one worker on the failures of the check that sent
	// the workflow here (a recovery state); none: the request.
	SourceFailures = "failures"
	// SourceItems is one worker per item of a fixed list.
	SourceItems = "items"
)

var sources = []string{SourceRequest, SourceTopics, SourceArguments, SourcePlan, SourceFailures}

// Item is one entry of a fixed list. MinWaves keeps it for plans with at
// least that many dependency waves (integration tests where pieces meet).
type Item struct {
	Name     string `json:"item"`
	MinWaves int    `json:"min_waves,omitempty"`
}

// UnmarshalJSON takes a source name ("topics") or a fixed list
// (["security", "style", {"item": "integration", "min_waves": 2}]).
func (e *Each) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*e = Each{Source: name}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("each: want a source (%s) or a list of items", strings.Join(sources, ", "))
	}
	items := make([]Item, len(raw))
	for i, r := range raw {
		if json.Unmarshal(r, &items[i].Name) == nil {
			continue
		}
		if err := strictly(r, &items[i]); err != nil {
			return fmt.Errorf("each[%d]: want a name or {\"item\", \"min_waves\"}: %v", i, err)
		}
	}
	*e = Each{Source: SourceItems, Items: items}
	return nil
}

// MarshalJSON writes what UnmarshalJSON reads.
func (e Each) MarshalJSON() ([]byte, error) {
	if e.Source != SourceItems {
		return json.Marshal(e.Source)
	}
	out := make([]any, len(e.Items))
	for i, it := range e.Items {
		out[i] = it
		if it.MinWaves == 0 {
			out[i] = it.Name
		}
	}
	return json.Marshal(out)
}

// Formats an artifact can have (docs/command-protocol.md, section 6).
const (
	FormatReport      = "report"       // markdown: # Title, ## Executive Summary, ## Key Findings
	FormatPlan        = "plan"         // markdown: phases with dependencies
	FormatTestResults = "test-results" // JSON: total_tests, tests_passed, tests_failed, ...
	FormatMarkdown    = "markdown"     // markdown with the given Sections
	FormatJSON        = "json"         // a JSON object with the given Fields
)

var formats = []string{FormatReport, FormatPlan, FormatTestResults, FormatMarkdown, FormatJSON}

// Aggregations of a fan-out's results (docs/supervisors.md) and the
// format each needs.
var aggregations = map[string]string{"research": FormatReport, "implementation": FormatReport, "testing": FormatTestResults}

// DefaultMinDelivered is how many workers must deliver for the others'
// failures to be accepted, unless a state says otherwise.
const DefaultMinDelivered = 2

// Delivered is how many of the state's workers workers must deliver,
// its default applied.
func (w Work) Delivered(workers int) int {
	if w.MinDelivered == nil {
		return DefaultMinDelivered
	}
	return w.MinDelivered.Of(workers)
}

// RecordsKey is where the state's workers are recorded in
// supervisor_state.
func (w Work) RecordsKey(state string) string {
	if w.Records != "" {
		return w.Records
	}
	return strings.ReplaceAll(state, "-", "_") + "_workers"
}

// IDTemplate, LabelTemplate and ArtifactName are the state's templates
// and name, defaults applied.
func (w Work) IDTemplate() string {
	if w.ID != "" {
		return w.ID
	}
	return "{state}_{n}"
}

func (w Work) LabelTemplate() string {
	if w.Label != "" {
		return w.Label
	}
	return "{text}"
}

func (w Work) ArtifactName() string {
	if w.Artifact != "" {
		return w.Artifact
	}
	return w.Format + " file"
}

// Source is the fan-out's source, request by default.
func (w Work) Source() string {
	if w.Each.Source == "" {
		return SourceRequest
	}
	return w.Each.Source
}

// Vars are what a template may use: {state}, {n} (the item's number, a
// plan phase's own), {run} (the run of a state in a check-and-recover
// loop, 1 otherwise), {item} (the item as a file-name part) and, in a
// label only, {text} (the item as written). {n:3} pads with zeros to 3
// digits.
type Vars struct {
	State string
	N     int
	Run   int
	Item  string
	Text  string
}

// templateVar matches {name} and {name:width}; compiled on first use, as
// every package's work before main is paid by every command.
var templateVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z]+)(?::([1-9]))?\}`) })

// Render fills a template with v.
func Render(tmpl string, v Vars) string {
	return templateVar().ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := templateVar().FindStringSubmatch(m)
		var s string
		num := -1
		switch sub[1] {
		case "state":
			s = v.State
		case "n":
			num = v.N
		case "run":
			num = v.Run
		case "item":
			s = v.Item
		case "text":
			s = v.Text
		default:
			return m
		}
		if num >= 0 {
			s = strconv.Itoa(num)
			if sub[2] != "" {
				w, _ := strconv.Atoi(sub[2])
				s = fmt.Sprintf("%0*d", w, num)
			}
		}
		return s
	})
}

// checkTemplate reports a variable the template may not use, or a
// template that names no variable where each worker needs its own.
func checkTemplate(field, tmpl string, allowed []string) error {
	for _, m := range templateVar().FindAllStringSubmatch(tmpl, -1) {
		if !slices.Contains(allowed, m[1]) {
			return fmt.Errorf("%s: {%s} in %q is not a template variable here; use %s", field, m[1], tmpl, "{"+strings.Join(allowed, "}, {")+"}")
		}
	}
	if strings.Count(tmpl, "{") != len(templateVar().FindAllString(tmpl, -1)) {
		return fmt.Errorf("%s: %q has a brace that is not a template variable; variables are %s", field, tmpl, "{"+strings.Join(allowed, "}, {")+"}")
	}
	return nil
}

// refusedName reports whether an artifact named by tmpl may be one Claude
// Code 2.1.328 refuses a subagent to Write: a .md file whose base name
// starts with REPORT, SUMMARY, FINDINGS or ANALYSIS, in any case, which it
// wants returned as text instead. A name that starts with {item} or
// {text} could be one.
func refusedName(tmpl string) bool {
	base := strings.ToLower(path.Base(tmpl))
	if !strings.HasSuffix(base, ".md") {
		return false
	}
	for _, p := range []string{"report", "summary", "findings", "analysis", "{item}", "{text}"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// distinct reports whether tmpl tells the workers of a fan-out apart:
// {run} does not, all workers of a run share it.
func distinct(tmpl string) bool {
	return strings.Contains(tmpl, "{n") || strings.Contains(tmpl, "{item}")
}

// ValidAgentName reports whether s is an agent's name as Claude Code
// names agent files, without a plugin prefix.
func ValidAgentName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validateWork checks the work of every state; errors name the state and
// the field ("work.review.output: ...").
func (m *Machine) validateWork() error {
	if m.Work != nil && len(m.Work) == 0 {
		// Given but empty: a definition the phase loop would refuse.
		return fail.Invalidf("machine %q: work: no state has work; give at least one state its work, or leave work out for a machine your command runs with sm-init", m.Name)
	}
	for _, state := range slices.Sorted(maps.Keys(m.Work)) {
		if err := m.checkWork(state, m.Work[state]); err != nil {
			return fail.Invalidf("machine %q: work.%s.%v", m.Name, state, err)
		}
	}
	for _, check := range []func() error{m.checkRecordsApart, m.checkOutputsApart, m.checkArguments} {
		if err := check(); err != nil {
			return fail.Invalidf("machine %q: %v", m.Name, err)
		}
	}
	for i, a := range m.Agents {
		if !ValidAgentName(a) {
			return fail.Invalidf("machine %q: agents[%d]: %q is not an agent name (letters, digits, '-' and '_'; no plugin prefix)", m.Name, i, a)
		}
	}
	if m.Classifier != "" && !ValidAgentName(m.Classifier) {
		return fail.Invalidf("machine %q: classifier: %q is not an agent name", m.Name, m.Classifier)
	}
	return nil
}

// checkWork checks one state's work, a group of fields at a time in the
// order of Work's fields, and returns the first problem.
func (m *Machine) checkWork(state string, w Work) error {
	for _, check := range []func() error{
		func() error { return m.checkWorkState(state) },
		w.checkAgents,
		w.checkOutput,
		w.checkFormat,
		func() error { return m.checkResults(state, w) },
		func() error { return m.checkInputs(state, w) },
		func() error { return w.checkTemplates(state) },
		w.checkRecords,
		func() error { return w.checkIsolation(state) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkWorkState: work belongs to a state the workflow can reach.
func (m *Machine) checkWorkState(state string) error {
	switch {
	case !m.HasState(state):
		return fmt.Errorf("agent: %q is not a state; states are: %s", state, strings.Join(m.States(), ", "))
	case state == m.Initial:
		return fmt.Errorf("agent: the initial state %q has no work (the workflow starts there)", state)
	}
	return nil
}

// checkAgents: the worker and its sub-supervisor.
func (w Work) checkAgents() error {
	switch {
	case !ValidAgentName(w.Agent):
		return fmt.Errorf("agent: %q is not an agent name (letters, digits, '-' and '_'; no plugin prefix such as flowstate:)", w.Agent)
	case len(w.Agent) > maxName:
		return fmt.Errorf("agent: %q is longer than %d bytes", w.Agent, maxName)
	case w.Supervisor == nil:
		return nil
	case !ValidAgentName(w.Supervisor.Agent):
		return fmt.Errorf("supervisor.agent: %q is not an agent name", w.Supervisor.Agent)
	case w.Supervisor.From < 2:
		return fmt.Errorf("supervisor.from: %d; give the number of workers (2 or more) from which the sub-supervisor coordinates them", w.Supervisor.From)
	}
	return nil
}

// checkOutput: where a worker writes, inside the spec directory and under
// a name Claude Code lets an agent write.
func (w Work) checkOutput() error {
	switch {
	case w.Output == "":
		return fmt.Errorf("output: missing; give the artifact's path under the spec directory, e.g. \"reports/{n:3}_{item}.md\"")
	case strings.HasPrefix(w.Output, "/") || slices.Contains(strings.Split(w.Output, "/"), ".."):
		return fmt.Errorf("output: %q must stay inside the spec directory (no leading / or ..)", w.Output)
	case refusedName(w.Output):
		return fmt.Errorf("output: %q: Claude Code refuses an agent's Write of a .md file whose name starts with report, summary, findings or analysis (or could: {item}); start the name otherwise, e.g. %q", w.Output, path.Join(path.Dir(w.Output), "001_"+path.Base(w.Output)))
	}
	return checkNameLengths(w.Output)
}

// checkFormat: what the artifact must be, with the sections or fields its
// format needs and no others.
func (w Work) checkFormat() error {
	switch {
	case !slices.Contains(formats, w.Format):
		return fmt.Errorf("format: %q; use one of %s", w.Format, strings.Join(formats, ", "))
	case w.Format == FormatMarkdown && len(w.Sections) == 0:
		return fmt.Errorf("sections: format markdown needs the sections its file must have, e.g. [\"Summary\", \"Findings\"]")
	case w.Format == FormatJSON && len(w.Fields) == 0:
		return fmt.Errorf("fields: format json needs the fields its object must have")
	case len(w.Sections) > 0 && w.Format != FormatMarkdown && w.Format != FormatReport:
		return fmt.Errorf("sections: only formats markdown and report have sections")
	case len(w.Fields) > 0 && w.Format != FormatJSON:
		return fmt.Errorf("fields: only format json has fields")
	}
	if err := w.checkSections(); err != nil {
		return err
	}
	return w.checkFields()
}

// checkResults: how the workers' results are summed up and judged.
func (m *Machine) checkResults(state string, w Work) error {
	switch {
	case w.Aggregate != "" && aggregations[w.Aggregate] == "":
		return fmt.Errorf("aggregate: %q; use research, implementation or testing, or leave it out", w.Aggregate)
	case w.Aggregate != "" && aggregations[w.Aggregate] != w.Format:
		return fmt.Errorf("aggregate: %s needs format %s, not %s", w.Aggregate, aggregations[w.Aggregate], w.Format)
	case w.FailWhen != "" && m.Recovery[state] == "":
		return fmt.Errorf("fail_when: state %s has no recovery state to go to when its check fails; add \"recovery\": {%q: STATE}", state, state)
	case w.FailWhen != "" && w.Format != FormatJSON && w.Format != FormatTestResults:
		return fmt.Errorf("fail_when: needs a JSON artifact (format json or test-results)")
	case w.FailWhen != "" && w.Format == FormatTestResults && !slices.Contains(testCounts, w.FailWhen):
		return fmt.Errorf("fail_when: %q is not a count of format test-results; use one of %s", w.FailWhen, strings.Join(testCounts, ", "))
	}
	if err := m.checkEnds(state, w); err != nil {
		return err
	}
	if err := w.checkShare(); err != nil {
		return err
	}
	return m.checkLoop(state, w)
}

// checkLoop: a check-and-recover loop can end. Its recovery state has
// work (its runs are what the check counts as recovered), repairs this
// state only (the loop is found from it), and both states number their
// workers by run: an id or output without {run} is the same in every
// run, so one recovery would count as all of them.
func (m *Machine) checkLoop(state string, w Work) error {
	if w.FailWhen != "" {
		rec := m.Recovery[state]
		if _, ok := m.Work[rec]; !ok {
			return fmt.Errorf("fail_when: the recovery state %s has no work, so a failed check would never be repaired; give %s work (e.g. \"each\": \"failures\")", rec, rec)
		}
		for _, from := range slices.Sorted(maps.Keys(m.Recovery)) {
			if from != state && m.Recovery[from] == rec {
				return fmt.Errorf("fail_when: the recovery state %s also repairs %s; give each checked state a recovery state of its own", rec, from)
			}
		}
	} else if from := m.RecoveryOf(state); from == "" || m.Work[from].FailWhen == "" {
		return nil
	}
	for _, f := range []struct{ field, tmpl string }{{"id", w.IDTemplate()}, {"output", w.Output}} {
		if !strings.Contains(f.tmpl, "{run") {
			return fmt.Errorf("%s: %q has no {run}; a state of a check-and-recover loop needs one in its id and output, so that each run's workers are its own", f.field, f.tmpl)
		}
	}
	return nil
}

// checkInputs: what the workers are formed from and what they read.
func (m *Machine) checkInputs(state string, w Work) error {
	switch plan := m.PlanState(); {
	case w.Source() != SourceItems && !slices.Contains(sources, w.Source()):
		return fmt.Errorf("each: %q; use one of %s, or a list of items", w.Source(), strings.Join(sources, ", "))
	case w.Source() == SourcePlan && plan == "":
		return fmt.Errorf("each: plan, but no state writes a plan (format plan) for its phases to be the workers")
	case w.Source() == SourcePlan && plan == state:
		return fmt.Errorf("each: plan in the state that writes the plan: once written, its phases would be new workers of the same state; fan out over the plan in a state after %s", state)
	}
	if w.Source() == SourceItems && len(w.Each.Items) == 0 {
		return fmt.Errorf("each: an empty list; give at least one item")
	}
	if n := len(w.Each.Items); n > limit.MaxWorkers {
		return fmt.Errorf("each: %d items, more than the %d workers a state may run; give fewer", n, limit.MaxWorkers)
	}
	for i, it := range w.Each.Items {
		if strings.TrimSpace(it.Name) == "" {
			return fmt.Errorf("each[%d]: an empty item", i)
		}
	}
	for _, r := range w.Reads {
		if !m.HasState(r) {
			return fmt.Errorf("reads: %q is not a state", r)
		}
	}
	return nil
}

// checkTemplates: the templates use only their variables, and a fan-out's
// workers get an output and an id each.
func (w Work) checkTemplates(state string) error {
	vars := []string{"state", "n", "run", "item"}
	if err := checkTemplate("output", w.Output, vars); err != nil {
		return err
	}
	if err := checkTemplate("id", w.IDTemplate(), vars); err != nil {
		return err
	}
	if err := checkTemplate("label", w.LabelTemplate(), append(vars, "text")); err != nil {
		return err
	}
	if !w.fansOut() {
		return nil
	}
	for _, f := range []struct{ field, tmpl string }{{"id", w.IDTemplate()}, {"output", w.Output}} {
		switch {
		case !distinct(f.tmpl):
			return fmt.Errorf("%s: %q is the same for every worker of the fan-out; use {n} or {item}", f.field, f.tmpl)
		case w.Source() == SourcePlan && !strings.Contains(f.tmpl, "{n"):
			return fmt.Errorf("%s: %q has no {n}; the workers of a plan are told apart by their phase's number (two phases may share a name)", f.field, f.tmpl)
		}
	}
	return w.checkItemsApart(state)
}

// fansOut reports whether the state can have more than one worker.
func (w Work) fansOut() bool {
	switch w.Source() {
	case SourceRequest, SourceFailures:
		return false
	case SourceItems:
		return len(w.Each.Items) > 1
	}
	return true
}

// WorkOf returns the work of state; ok is false for a state without
// agents.
func (m *Machine) WorkOf(state string) (Work, bool) {
	w, ok := m.Work[state]
	return w, ok
}

// WorkStates lists the states that have work, in the machine's state
// order.
func (m *Machine) WorkStates() []string {
	var out []string
	for _, s := range m.States() {
		if _, ok := m.Work[s]; ok {
			out = append(out, s)
		}
	}
	return out
}

// PlanState is the state whose artifact is the plan later states build
// on (the first state of format plan), "" when the machine has none.
func (m *Machine) PlanState() string {
	for _, s := range m.WorkStates() {
		if m.Work[s].Format == FormatPlan {
			return s
		}
	}
	return ""
}

// RecoveryOf names the state whose failed check sends a workflow to
// state, "" when state recovers none.
func (m *Machine) RecoveryOf(state string) string {
	for _, from := range slices.Sorted(maps.Keys(m.Recovery)) {
		if m.Recovery[from] == state {
			return from
		}
	}
	return ""
}

// AgentNames lists every agent of the definition: the classifier, each
// state's worker and sub-supervisor, and the listed agents.
func (m *Machine) AgentNames() []string {
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	add(m.Classifier)
	for _, s := range m.WorkStates() {
		w := m.Work[s]
		add(w.Agent)
		if w.Supervisor != nil {
			add(w.Supervisor.Agent)
		}
	}
	for _, a := range m.Agents {
		add(a)
	}
	return out
}

// Slug makes a short file-name part from text: lower-case letters and
// digits joined by single underscores, at most 40 bytes, "untitled" if empty.
func Slug(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			gap = false
			if b.Len() >= 40 {
				break
			}
			continue
		}
		gap = true
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return strings.TrimRight(b.String(), "_")
}
