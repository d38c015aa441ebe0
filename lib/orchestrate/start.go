package orchestrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// coordination values stored in phase_data.initialize.coordination.
const (
	adaptive   = "adaptive"
	sequential = "sequential"
)

// Request is one phase-start.
type Request struct {
	Command     string
	Scope       string // given by the user; "" to classify
	Description string
	Sequential  bool    // one worker at a time and no sub-supervisors
	ApprovePlan bool    // a person approves the plan before the state that follows it
	Budget      string  // the workflow's spend limit (usage.ParseBudget), "" for the project's
	Classified  bool    // the classifier has written its JSON
	Session     string  // CLAUDE_CODE_SESSION_ID; may be empty
	Mode        string  // FLOWSTATE_CLASSIFICATION: "" or agent, offline
	Options     Options // how the first phase is planned
	// Machine is the command's workflow definition, nil for the default
	// one; MachineJSON is the file as given, kept with the workflow, and
	// Definition the file's absolute path.
	Machine     *machine.Machine
	MachineJSON []byte
	Definition  string
	// Flow is the saved workflow the workflow engine launches (as the
	// Workflow tool names it); "" runs the steps engine.
	Flow string
}

// definition is the request's workflow definition.
func (r Request) definition() *machine.Machine {
	if r.Machine != nil {
		return r.Machine
	}
	return machine.Default()
}

// scope is the scope a request runs without classification: the one
// given, else the definition's only scope; "" when the definition's
// classifier must choose. A definition with several scopes and no
// classifier needs one given.
func (r Request) scope(m *machine.Machine) (string, error) {
	switch {
	case r.Scope != "":
		return r.Scope, nil
	case len(m.Scopes) == 1:
		return m.ScopeNames()[0], nil
	case m.Classifier == "":
		return "", fail.Usagef("/%s needs a scope: give --scope SCOPE before the description, SCOPE one of %s", r.Command, strings.Join(m.ScopeNames(), ", "))
	}
	return "", nil
}

// Start creates the workflow of r and plans its first phase (Plan's
// output), or, when the workflow-classifier agent must classify the
// request first, keeps the id it will write under and asks for it
// (NEXT=classify); r.Classified then creates the workflow from what the
// agent wrote, waiting a while if the agent is still at work
// (NEXT=classified when it is not done by then).
//
// It is safe to run again: the same request in the same session keeps its
// id, and once that workflow exists, starting it again answers as the
// start that created it did. A start that finds the classification
// already written (run again after the classifier, say after compaction)
// creates the workflow at once.
func Start(p *store.Project, r Request) (Output, error) {
	if r.Session != "" {
		if err := store.ValidID(r.Session); err != nil {
			return Output{}, fail.Usagef("CLAUDE_CODE_SESSION_ID: %v", err)
		}
	}
	if err := runnable(r); err != nil {
		return Output{}, err
	}
	run, exists := r.runOf(p)
	if exists {
		return r.begin(p, run.Workflow)
	}
	m := r.definition()
	if err := checkArguments(p, r, m); err != nil {
		return Output{}, err
	}
	if deferred, err := r.classifiedInScript(p, m, &run); deferred || err != nil {
		if err != nil {
			return Output{}, err
		}
		return r.begin(p, run.Workflow)
	}
	cls, classPath, ended, err := r.classification(p, m, &run)
	if ended != nil || err != nil {
		return *orEmpty(ended), err
	}
	return create(p, r, m, run, cls, classPath)
}

// classifiedInScript records, for the workflow engine, a request its
// definition's classifier agent classifies: the script's first step asks
// it, as the steps engine's start block would, and creates the workflow
// from its answer. The run record keeps the workflow's id meanwhile.
// deferred is false when the request needs no agent (a scope given, a
// definition of one scope, offline classification) or runs on the steps
// engine.
func (r Request) classifiedInScript(p *store.Project, m *machine.Machine, run *Run) (deferred bool, err error) {
	if r.Flow == "" || r.Mode == "offline" {
		return false, nil
	}
	if scope, err := r.scope(m); err != nil || scope != "" {
		return false, err
	}
	if r.Mode != "" && r.Mode != "agent" {
		return false, fail.Usagef("FLOWSTATE_CLASSIFICATION=%q: use agent (the default) or offline", r.Mode)
	}
	if run.Workflow == "" {
		run.Workflow = store.NewID(r.Command, p.Now())
	}
	run.Classifier = m.Classifier
	return true, writeRun(p, r.Session, *run)
}

// begin is what a start prints once the workflow exists, or, for the
// workflow engine, once its run is recorded: the steps engine plans the
// first phase, so that no turn of the model is spent on a block that
// only says where to go; the workflow engine prints the launch.
func (r Request) begin(p *store.Project, id string) (Output, error) {
	if r.Flow != "" {
		return launch(p, r.Session, id, r.Flow)
	}
	return started(p, id, r.Options)
}

// runOf is the run record of the request: the session's earlier one when
// it is the same request (its workflow id and what the hooks recorded of
// its classifier stay) unless that run failed or finished; a new one
// otherwise. exists is true when that earlier run's workflow exists and is
// active: the start is done, and answers as it did.
func (r Request) runOf(p *store.Project) (run Run, exists bool) {
	prev, ok := ReadRun(p, r.Session)
	again := ok && prev.Command == r.Command && prev.Description == r.Description && prev.Scope == r.Scope &&
		prev.Sequential == r.Sequential && prev.ApprovePlan == r.ApprovePlan && prev.Budget == r.Budget
	s, created := p.Summary(prev.Workflow)
	switch {
	case again && created && s.Active():
		return prev, true
	case again && !created && prev.Halted == "":
		return prev, false
	}
	return Run{Command: r.Command, Description: r.Description, Scope: r.Scope, Sequential: r.Sequential, ApprovePlan: r.ApprovePlan,
		Budget: r.Budget, User: r.Machine != nil, Definition: r.Definition}, false
}

// orEmpty is *o, or an empty output for nil.
func orEmpty(o *Output) *Output {
	if o == nil {
		return &Output{}
	}
	return o
}

// classification is how the request is classified: by its given scope
// (or its definition's only one), offline, or by the definition's
// classifier agent. ended is the step's output when it ends before the
// workflow exists: the classifier is asked for (NEXT=classify) or still
// at work (NEXT=classified). classPath is where the agent wrote, "" for
// no agent.
func (r Request) classification(p *store.Project, m *machine.Machine, run *Run) (cls classify.Classification, classPath string, ended *Output, err error) {
	scope, err := r.scope(m)
	switch mode := r.Mode; {
	case err != nil:
		return cls, "", nil, err
	case scope != "":
		// No topics: a topics fan-out studies the request itself, one worker.
		if _, err := m.Scope(scope); err != nil {
			return cls, "", nil, err
		}
		cls, err = classify.Given(scope, 1, "")
		return cls, "", nil, err
	case mode == "offline":
		// The offline classifier knows the built-in scopes only.
		cls = intent.Classify(r.Description)
		if _, ok := m.Scopes[cls.WorkflowType]; !ok {
			return cls, "", nil, fail.Usagef("FLOWSTATE_CLASSIFICATION=offline chooses among the built-in scopes only, and /%s's definition has %s: give --scope SCOPE before the description",
				r.Command, strings.Join(m.ScopeNames(), ", "))
		}
		return cls, "", nil, nil
	case mode != "" && mode != "agent":
		return cls, "", nil, fail.Usagef("FLOWSTATE_CLASSIFICATION=%q: use agent (the default) or offline", mode)
	}
	return r.askedClassification(p, m, run)
}

// askedClassification is the classification the definition's classifier
// agent wrote, which runs between two bash blocks that share nothing but
// files: the run record keeps the workflow id it writes under. Without a
// usable answer yet the classifier is asked for (again); while it is at
// work the step waits, then answers NEXT=classified.
func (r Request) askedClassification(p *store.Project, m *machine.Machine, run *Run) (cls classify.Classification, classPath string, ended *Output, err error) {
	if run.Workflow == "" && !r.Classified {
		run.Workflow = store.NewID(r.Command, p.Now())
	}
	run.Classifier = m.Classifier
	if r.Classified && run.Workflow == "" {
		return cls, "", nil, fail.Usagef("no classification pending for this session; start again with /%s DESCRIPTION", r.Command)
	}
	classPath = filepath.Join(specDir(p, run.Workflow), "classification.json")
	cls, found, err := readClassification(classPath, m)
	if err == nil && !found && r.Classified && (run.RefusedWhy == "" || classifierAskedAgain(p, r.Session, *run)) {
		busy := r.Options.Waiting.wait(func() bool {
			cls, found, err = readClassification(classPath, m)
			return err == nil && !found && classifierBusy(p, r.Session, r.Options.Waiting)
		})
		switch {
		case err == nil && busy:
			return cls, classPath, &Output{Pairs: kv.Pairs{{Key: "NEXT", Value: "classified"}}}, nil
		case err == nil && !found:
			return cls, classPath, nil, fail.Usagef("the %s wrote no classification at %s; run /%s again", m.Classifier, classPath, r.Command)
		}
	}
	switch {
	case fail.Code(err) == fail.Invalid:
		out, err := refuseClassification(p, r, *run, classPath, err)
		return cls, classPath, &out, err
	case err != nil:
		return cls, classPath, nil, err
	case !found:
		// Nothing usable yet, or the block that refused the first answer
		// run again before the classifier was: ask (again).
		if run.Asked.IsZero() {
			run.Asked = p.Now().UTC()
		}
		out, err := askClassifier(p, r, *run, classPath)
		return cls, classPath, &out, err
	}
	return cls, classPath, nil, nil
}

// create creates the workflow of r from its classification, with the
// coordination the command asked for, and plans its first phase. The run
// record names the workflow before it exists, so that a start killed in
// between is found again rather than started twice.
func create(p *store.Project, r Request, m *machine.Machine, run Run, cls classify.Classification, classPath string) (Output, error) {
	var out Output
	if err := preflight(m, cls.WorkflowType, cls, r.Description); err != nil {
		return out, err
	}
	if run.Workflow == "" {
		run.Workflow = store.NewID(r.Command, p.Now())
	}
	run.Halted, run.StopBlocks = "", 0
	if err := writeRun(p, r.Session, run); err != nil {
		return out, err
	}
	var gates map[string]machine.Gate
	if r.ApprovePlan {
		var warning string
		if gates, warning = planGate(m, cls.WorkflowType); warning != "" {
			out.warn(note, "%s", warning)
		}
	}
	coord := adaptive
	if r.Sequential {
		coord = sequential
	}
	init := map[string]string{coordinationKey: coord}
	if classPath != "" {
		init["classification_path"] = classPath
	}
	var budget usage.Budget
	if r.Budget != "" {
		var err error
		if budget, err = usage.ParseBudget(r.Budget); err != nil {
			return out, fail.Usagef("%v", err)
		}
	}
	w, _, err := sm.Init(p, sm.InitParams{ID: run.Workflow, Description: r.Description, Command: r.Command, Scope: cls.WorkflowType,
		Classification: cls, Machine: m, MachineJSON: r.MachineJSON, Session: r.Session, Gates: gates, PhaseData: init, Budget: budget})
	if err != nil {
		return out, err
	}
	st, err := r.begin(p, w.ID)
	st.Warnings = append(out.Warnings, st.Warnings...)
	return st, err
}

// Unstarted answers a phase step (phase-plan, phase-verify) that
// session's command ran before its workflow exists: the model skipped the
// block that creates it (the classified start, or the start itself).
// Rather than fail with a hint no model inside a command should follow,
// it does what the skipped block does, which is safe to run twice: the
// workflow is created from the classification (or the classifier is
// asked for again, NEXT=classify, when it never ran), and its first phase
// planned. ok is false when the session's command has its workflow, or
// runs none (then the step resolves its workflow as usual).
func Unstarted(p *store.Project, session, mode string, o Options) (Output, bool, error) {
	run, ok := ReadRun(p, session)
	if !ok || run.ByState {
		return Output{}, false, nil
	}
	if _, exists := p.Summary(run.Workflow); exists {
		return Output{}, false, nil
	}
	r, err := requestOf(run, session, mode, o)
	if err != nil {
		return Output{}, true, err
	}
	out, err := Start(p, r)
	out.Warnings = append([]Warning{{Text: fmt.Sprintf("/%s had not created its workflow yet (a block of its start was not run): flowstate did that now", run.Command)}}, out.Warnings...)
	return out, true, err
}

// requestOf is the start request run records, to finish a start whose
// workflow does not exist yet: with its definition read again, and the
// classifier's answer awaited once it was launched since it was asked.
func requestOf(run Run, session, mode string, o Options) (Request, error) {
	r := Request{Command: run.Command, Scope: run.Scope, Description: run.Description, Sequential: run.Sequential,
		ApprovePlan: run.ApprovePlan, Budget: run.Budget, Session: session, Mode: mode, Options: o, Definition: run.Definition,
		Classified: run.Classifier != "" && !run.ClassifierLaunched.IsZero() && !run.ClassifierLaunched.Before(run.Asked)}
	if run.Definition == "" {
		return r, nil
	}
	b, err := fsx.ReadNamed(run.Definition, limit.Max)
	if err != nil {
		return r, fmt.Errorf("the definition of /%s: %w", run.Command, err)
	}
	if r.Machine, err = machine.Parse(b); err != nil {
		return r, fmt.Errorf("%s: %w", run.Definition, err)
	}
	r.MachineJSON = b
	return r, nil
}

// NoStart answers a phase step that found no workflow for sel, run inside
// a Claude Code session that has started none (no run record, no session
// pointer): the model skipped its command's start block, and goes there
// (NEXT=start), never to a low-level command. ok is false anywhere else.
func NoStart(p *store.Project, sel store.Selector) (out Output, ok bool) {
	if sel.Session == "" || sel.Flag != "" || sel.Env != "" {
		return out, false
	}
	if _, ok := ReadRun(p, sel.Session); ok {
		return out, false
	}
	if id, err := p.SessionWorkflow(sel.Session); err != nil || id != "" {
		return out, false
	}
	out.warn(note, "no workflow was started in this Claude Code session: run the command's start block first")
	out.add("NEXT", "start")
	return out, true
}

// refuseClassification answers the classifier's malformed answer err (at
// classPath): the first is removed and asked for again, with what was
// wrong; a second fails the start. The file goes because Claude Code's
// Write tool refuses to replace a file the agent has not read.
func refuseClassification(p *store.Project, r Request, run Run, classPath string, err error) (Output, error) {
	if run.RefusedWhy != "" {
		return Output{}, err
	}
	why := err
	if inner := errors.Unwrap(err); inner != nil {
		why = inner // without the path: the classifier has it
	}
	if err := os.Remove(classPath); err != nil {
		return Output{}, fmt.Errorf("remove the refused classification: %w", err)
	}
	run.RefusedWhy, run.Asked = why.Error(), p.Now().UTC()
	return askClassifier(p, r, run, classPath)
}

// askClassifier records run and prints what the classifier agent is
// asked: the description (with why its first answer was refused, if it
// was) and where to write (NEXT=classify).
func askClassifier(p *store.Project, r Request, run Run, classPath string) (Output, error) {
	var out Output
	if err := writeRun(p, r.Session, run); err != nil {
		return out, err
	}
	if err := ensureSpecDir(p, filepath.Dir(classPath)); err != nil {
		return out, err
	}
	desc := r.Description
	if run.RefusedWhy != "" {
		desc += " [Your previous classification was refused: " + run.RefusedWhy + ". Write the JSON object again, exactly as your instructions say.]"
	}
	out.add("DESCRIPTION", desc)
	out.add("CLASSIFICATION_PATH", r.Options.show(p, classPath))
	out.add("NEXT", "classify")
	return out, nil
}

// classifierAskedAgain reports whether the classifier was launched since
// it was last asked, as the hooks recorded it; without them, once the
// grace for their records is over.
func classifierAskedAgain(p *store.Project, session string, run Run) bool {
	if rec, ok := ReadRun(p, session); ok && !rec.ClassifierLaunched.Before(run.Asked) {
		return true
	}
	return p.Now().Sub(run.Asked) >= hookGrace
}

// planGate is the gate --approve-plan puts on the state that follows the
// definition's approve_after state (the plan) on the scope's route; a
// scope that ends there (or never passes it) gets none, and a warning
// saying so.
func planGate(m *machine.Machine, scope string) (map[string]machine.Gate, string) {
	route := m.Scopes[scope].Route
	i := slices.Index(route, m.ApproveAfter)
	if m.ApproveAfter == "" || i < 0 || i == len(route)-1 {
		return nil, fmt.Sprintf("--approve-plan: scope %s has no state after a plan to hold; the workflow runs without a gate", scope)
	}
	next := route[i+1]
	return map[string]machine.Gate{next: {Message: "Approve the plan before " + next + " starts"}}, ""
}

// readClassification reads the classifier's JSON at path, whose
// workflow_type must be one of m's scopes; found is false when there is
// no file yet.
func readClassification(path string, m *machine.Machine) (cls classify.Classification, found bool, err error) {
	data, err := fsx.ReadFile(path, limit.Max)
	if errors.Is(err, fs.ErrNotExist) {
		return cls, false, nil
	}
	if err == nil {
		cls, err = classify.ParseFor(data, classify.MinConfidence, m.ScopeNames())
	}
	if err != nil {
		return cls, true, fmt.Errorf("%s: %w", path, err)
	}
	return cls, true, nil
}

// classifierBusy reports whether the session's classifier agent is at
// work, as the hooks recorded it, or may be: asked for moments ago and
// not on record yet.
func classifierBusy(p *store.Project, session string, wt Waiting) bool {
	r, ok := ReadRun(p, session)
	now := p.Now()
	switch {
	case !ok:
		return false
	case r.ClassifierLaunched.IsZero():
		return now.Sub(r.Asked) < hookGrace
	}
	return r.ClassifierStopped.Before(r.ClassifierLaunched) && now.Sub(r.ClassifierLaunched) < wt.stuckAfter()
}

// started is what a start prints once the workflow exists: the plan of
// its first phase, so that no turn of the model is spent on a block that
// only says where to go.
func started(p *store.Project, id string, o Options) (Output, error) {
	w, err := p.Workflow(id)
	if err != nil {
		return Output{}, err
	}
	return Plan(w, o)
}

func specDir(p *store.Project, id string) string { return filepath.Join(p.Dir, SpecsDir, id) }

// ensureSpecDir creates dir, a directory under the project's spec
// directory, refusing a symlink on the way: the agents' artifacts and the
// briefs stay inside the project, whatever a cloned repository carries.
func ensureSpecDir(p *store.Project, dir string) error {
	if err := refuseLinkedSpecDir(p, dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// Again: MkdirAll follows a link put there since the first look.
	return refuseLinkedSpecDir(p, dir)
}

// refuseLinkedSpecDir fails (exit 2) when dir is not inside the project
// or a directory on the way to it from the project is a link: reading
// artifacts through one, and setting aside a bad one, would happen
// outside the project. Directories not there yet pass.
func refuseLinkedSpecDir(p *store.Project, dir string) error {
	rel, err := filepath.Rel(p.Dir, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside the project %s", dir, p.Dir)
	}
	var chain []string
	cur := p.Dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		chain = append(chain, cur)
	}
	return fsx.RefuseSymlinks(chain...)
}

// set writes value as JSON at path of tx's checkpoint.
func set(tx *store.Tx, path string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return setRaw(tx, path, raw)
}

// setRaw writes raw JSON at path of tx's checkpoint through
// checkpoint.Set, so every write touches updated_at as any other
// checkpoint edit does and is refused if it would make the checkpoint
// invalid.
func setRaw(tx *store.Tx, path string, raw []byte) error {
	doc, err := checkpoint.Set(tx.Checkpoint, path, raw, tx.Now)
	if err != nil {
		return err
	}
	tx.Checkpoint = doc
	return nil
}
