package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// The functions of workflow-state-machine.sh.

const smInitUsage = "sm_init DESCRIPTION COMMAND [CLASSIFICATION_JSON], or sm_init DESCRIPTION COMMAND WORKFLOW_TYPE RESEARCH_COMPLEXITY RESEARCH_TOPICS_JSON"

// sm_init DESCRIPTION COMMAND [CLASSIFICATION_JSON] (the design's form)
// or sm_init DESCRIPTION COMMAND WORKFLOW_TYPE RESEARCH_COMPLEXITY
// RESEARCH_TOPICS_JSON (the library's, which prints the normalised
// complexity): start the workflow with the shell's (or the session's
// chosen) id and set its variables in the shell.
func smInit(c *call) int {
	switch len(c.args) {
	case 2, 3:
		return c.initWith(c.classification())
	case 5:
		return smInitWithClassification(c)
	}
	return c.usage("%s (got %d arguments)", smInitUsage, len(c.args))
}

// sm_init_with_classification DESCRIPTION COMMAND WORKFLOW_TYPE
// RESEARCH_COMPLEXITY RESEARCH_TOPICS_JSON (the design's name for the
// library's five-argument sm_init).
func smInitWithClassification(c *call) int {
	if len(c.args) != 5 || c.args[2] == "" || c.args[3] == "" || c.args[4] == "" {
		return c.fail(1, "ERROR: %s requires classification parameters: usage: %s DESCRIPTION COMMAND WORKFLOW_TYPE RESEARCH_COMPLEXITY RESEARCH_TOPICS_JSON, none empty", c.name, c.name)
	}
	m := machine.Default()
	if _, err := m.Scope(c.args[2]); err != nil {
		return c.fail(1, "ERROR: Invalid workflow_type: %s; valid types: %s", c.args[2], strings.Join(m.ScopeNames(), ", "))
	}
	if t := gjson.Parse(c.args[4]); !gjson.Valid(c.args[4]) || !t.IsArray() {
		return c.fail(1, "ERROR: research_topics_json must be valid JSON array; received: %s", c.args[4])
	}
	complexity := checkpoint.NormalizeComplexity(c.args[3])
	n, _ := complexity.Int64() // 1-4
	cls, err := classify.Given(c.args[2], int(n), c.args[4])
	if rc := c.initWith(cls, err); rc != 0 {
		return rc
	}
	c.print(complexity.String())
	return 0
}

// classification is what sm_init's design form starts with: the JSON the
// classifier agent answered (validated as sm-init --classification
// does), else the description classified by flowstate's offline
// classifier, the library's own classifier doing what the original's
// did, said on stderr and refused when it can only guess.
func (c *call) classification() (classify.Classification, error) {
	if given := c.arg(2); given != "" {
		cls, err := classify.Parse([]byte(given), classify.MinConfidence)
		if err != nil {
			return cls, fmt.Errorf("%w; pass the workflow-classifier agent's answer, or use the five-argument form", err)
		}
		return cls, nil
	}
	cls := intent.Classify(c.arg(0))
	if cls.Confidence < classify.MinConfidence {
		return cls, fmt.Errorf("the description does not say clearly what the workflow is for (offline classifier confidence %.2f, below %.2f); pass the workflow-classifier agent's JSON as a third argument, or use the five-argument form %s", cls.Confidence, classify.MinConfidence, smInitUsage)
	}
	c.warn("no classification given: classified offline as %s (confidence %.2f); pass the classifier agent's JSON as a third argument to decide", cls.WorkflowType, cls.Confidence)
	return cls, nil
}

// initWith starts the workflow with classification cls (and the error
// that came with it): the shell's (WORKFLOW_ID, FLOWSTATE_WORKFLOW) or
// the one init_workflow_state started in an earlier block of the
// session, else a new one.
func (c *call) initWith(cls classify.Classification, err error) int {
	if err != nil {
		return c.failErr(err)
	}
	p, err := c.proj()
	if err != nil {
		return c.failErr(err)
	}
	id := firstNonEmpty(c.shellWorkflowID(), c.Getenv("FLOWSTATE_WORKFLOW"))
	if id == "" {
		if cur, _ := p.SessionWorkflow(c.session()); cur != "" && waits(p, cur) {
			id = cur
		}
	}
	params := sm.InitParams{
		ID: id, Description: c.arg(0), Command: c.arg(1), Scope: cls.WorkflowType, Classification: cls,
		Machine: machine.Default(), Session: c.session(),
	}
	var w *store.Workflow
	if id != "" && exists(p, id) {
		w, err = reinit(p, params)
	} else {
		w, _, err = sm.Init(p, params)
	}
	if err != nil {
		return c.failErr(err)
	}
	if _, err := c.answerAll(w); err != nil {
		return c.failErr(err)
	}
	return 0
}

// waits reports whether workflow id exists and waits for sm_init.
func waits(p *store.Project, id string) bool {
	w, err := p.Workflow(id)
	if err != nil {
		return false
	}
	doc, err := w.ReadCheckpoint()
	return err == nil && pending(doc)
}

// reinit is sm_init on an existing workflow: one init_workflow_state
// started gets the description, command, scope and classification of
// ip, in one locked write, while it is still in its initial state; on
// any other, sm_init must be the same call again.
func reinit(p *store.Project, ip sm.InitParams) (*store.Workflow, error) {
	w, err := p.Workflow(ip.ID)
	if err != nil {
		return nil, err
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, err
	}
	if pending(doc) {
		err = begin(w, ip, nil)
	} else {
		err = again(w.ID, doc, ip)
	}
	if err == nil && ip.Session != "" {
		err = p.SetSession(ip.Session, w.ID)
	}
	return w, err
}

// begin gives workflow w, which init_workflow_state started, the
// description, command, scope and classification of ip, in one locked
// write while it is still in its initial state; moved to the state of
// at and its completed states when at is not nil (sm_load resuming a
// saved machine).
func begin(w *store.Workflow, ip sm.InitParams, at *savedMachine) error {
	_, fresh, err := sm.Document(w.P, ip)
	if err != nil {
		return err
	}
	return w.Update(func(tx *store.Tx) error {
		st := sm.StatusOf(w.ID, tx.Checkpoint)
		if !pending(tx.Checkpoint) {
			return again(w.ID, tx.Checkpoint, ip) // another sm_init came first
		}
		if st.CurrentState != ip.Machine.Initial || st.Status != checkpoint.InProgress {
			return fail.Refusedf("workflow %s is in %s (%s) since init_workflow_state started it; sm_init starts a workflow in %s: choose a new id with generate_unique_workflow_id", w.ID, st.CurrentState, st.Status, ip.Machine.Initial)
		}
		e := tx.Checkpoint
		for _, k := range []string{checkpoint.PathCommand, checkpoint.PathDescription, checkpoint.PathStateMachine} {
			if e, err = sjson.SetRawBytes(e, k, []byte(gjson.GetBytes(fresh, k).Raw)); err != nil {
				return err
			}
		}
		event := map[string]any{"command": ip.Command, "scope": ip.Scope}
		if at != nil {
			if e, err = sjson.SetBytes(e, checkpoint.PathCurrentState, at.current); err == nil {
				e, err = sjson.SetBytes(e, checkpoint.PathCompletedStates, left(at.completed, at.current, ip.Machine.Initial))
			}
			event["state"] = at.current
		}
		if err == nil {
			e, err = sjson.SetBytes(e, checkpoint.PathUpdatedAt, checkpoint.Timestamp(tx.Now))
		}
		if err == nil {
			tx.Checkpoint, err = sjson.DeleteBytes(e, pendingKey)
		}
		tx.Event("sm_init", event)
		return err
	})
}

// again is sm_init run a second time on its workflow: still where it
// started, with the same description, command and scope, it is the same
// call (the block was run again); anything else is refused.
func again(id string, doc []byte, ip sm.InitParams) error {
	v := checkpoint.HeadOf(doc)
	if v.Command != ip.Command || v.Scope != ip.Scope || v.ConfigDescription != ip.Description || v.CurrentState != ip.Machine.Initial || v.Status != checkpoint.InProgress {
		return fail.Usagef("workflow %s exists already (%s, %s, in state %s); choose a new id with generate_unique_workflow_id", id, v.Command, v.Scope, v.CurrentState)
	}
	return nil
}

// sm_transition STATE [REASON], or the design's sm_transition FROM TO.
func smTransition(c *call) int {
	if len(c.args) < 1 || len(c.args) > 2 || c.args[0] == "" {
		return c.usage("sm_transition STATE [REASON], or sm_transition FROM TO")
	}
	if c.stateFile == "" {
		if rc := c.autoInit(c.args[len(c.args)-1]); rc != 0 {
			return rc
		}
	}
	return c.transition(c.args, nil)
}

// autoInit is the original sm_transition's recovery in a shell without
// STATE_FILE (a block that never called load_workflow_state): it loads
// the shell's workflow as load_workflow_state does, with the original's
// two lines on stderr, and logs a state_error through the shell's
// log_command_error when it has one, so that the gap gets fixed.
func (c *call) autoInit(target string) int {
	if c.funcs["log_command_error"] {
		c.run("log_command_error", firstNonEmpty(c.vars["COMMAND_NAME"], "/unknown"), firstNonEmpty(c.shellID, "unknown"), c.vars["USER_ARGS"],
			"state_error", "STATE_FILE not set during sm_transition - load_workflow_state not called", c.name,
			jsonText(map[string]string{"target_state": target, "diagnostic": "Call load_workflow_state before sm_transition"}))
	}
	fmt.Fprintln(c.Stderr, "⚠️  WARNING: Auto-initializing state machine (load_workflow_state not called explicitly)")
	w, err := c.workflow()
	if err == nil {
		_, err = c.answerAll(w)
	}
	if err != nil {
		return c.fail(1, "ERROR: STATE_FILE not set and auto-initialization failed: %v; call load_workflow_state before sm_transition", err)
	}
	fmt.Fprintf(c.Stderr, "  ✓ Auto-initialization successful (loaded workflow ID: %s)\n", w.ID)
	return 0
}

// sm_transition_with_checkpoint [FROM] TO JSON: the transition and the
// JSON object merged into the checkpoint, in one locked write.
func smTransitionWithCheckpoint(c *call) int {
	n := len(c.args)
	if n < 2 || n > 3 || !isObject(c.args[n-1]) {
		return c.usage("sm_transition_with_checkpoint [FROM] TO JSON_OBJECT")
	}
	if n == 3 {
		return c.transition([]string{c.args[0], c.args[1]}, []byte(c.args[2]))
	}
	return c.transition(c.args[:1], []byte(c.args[1]))
}

// transition moves the shell's workflow as args say (STATE, STATE
// REASON or FROM TO), merging patch when not nil, and hands the shell
// the machine's variables. Two arguments are FROM TO when the second is
// a state of the machine; a second that only reads like one (planning)
// is refused rather than taken as a reason, which would leave the
// workflow a state behind without a word.
func (c *call) transition(args []string, patch []byte) int {
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	m, err := sm.LoadMachine(w)
	if err != nil {
		return c.failErr(err)
	}
	from, to, reason, code := c.transitionArgs(w, m, args, patch)
	if code != 0 {
		return code
	}
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return c.failErr(err)
	}
	st := sm.StatusOf(w.ID, doc)
	cur := shown(st, m)
	switch {
	case !checkpoint.Active(st.Status) && to != cur:
		return c.fail(1, "ERROR: Cannot transition from terminal state: %s: workflow %s is finished (%s, in %s); start a new one with sm_init", cur, w.ID, st.Status, cur)
	case to == cur && (from == "" || from == cur):
		c.warn("INFO: Already in state '%s', transition skipped (idempotent)", to)
	}
	if finishing(st, m, to) {
		err = c.finish(w, st, m, from, to, patch)
	} else {
		var opts []sm.Option
		if from != "" {
			opts = append(opts, sm.From(from))
		}
		if patch != nil {
			opts = append(opts, sm.WithCheckpoint(patch))
		}
		_, err = sm.Transition(w, to, reason, opts...)
	}
	if fail.Code(err) == fail.Refused {
		return c.fail(1, "ERROR: Invalid transition: %s → %s: %v", cur, to, err)
	}
	if err != nil {
		return c.failErr(err)
	}
	return c.answerMachineOf(w)
}

// transitionArgs reads sm_transition's arguments, TO [REASON] or FROM TO
// (and the JSON of sm_transition_with_checkpoint): a second argument that
// is no state but reads like one is refused rather than taken for a
// reason. code is the return of a refusal, 0 when the arguments hold.
func (c *call) transitionArgs(w *store.Workflow, m *machine.Machine, args []string, patch []byte) (from, to, reason string, code int) {
	to = args[0]
	if len(args) == 2 {
		switch like := resembles(args[1], m.States()); {
		case m.HasState(args[1]):
			from, to = args[0], args[1]
		case patch != nil: // sm_transition_with_checkpoint FROM TO JSON
			return "", "", "", c.fail(1, "%q is not a state of workflow %s (states: %s)%s", args[1], w.ID, strings.Join(m.States(), ", "), didYouMean(like))
		case like != "":
			from := args[0]
			if s := resembles(from, m.States()); !m.HasState(from) && s != "" {
				from = s
			}
			return "", "", "", c.fail(1, "%q is not a state of workflow %s but reads like %q: for FROM TO write two states (%s %s %s); for a reason, give a phrase (%s %s \"reason: %s\")",
				args[1], w.ID, like, c.name, from, like, c.name, args[0], args[1])
		default:
			reason = args[1]
		}
	}
	if !m.HasState(to) {
		return "", "", "", c.fail(1, "%q is not a state of workflow %s (states: %s)%s", to, w.ID, strings.Join(m.States(), ", "), didYouMean(resembles(to, m.States())))
	}
	return from, to, reason, 0
}

// finishing reports whether a transition to `to` is the original's last
// one, which flowstate makes by finishing the workflow: to the final
// state (complete) from the terminal state of a scope that ends before
// it (research-and-plan ends at plan), or again once finished so.
func finishing(st sm.Status, m *machine.Machine, to string) bool {
	f := final(m)
	if f == "" || to != f || st.CurrentState == f {
		return false
	}
	return st.Status == checkpoint.Complete || checkpoint.Active(st.Status) && st.CurrentState == st.TerminalState
}

// finish is that last transition: FROM checked as sm-transition --from
// does, patch merged, the workflow finished as complete (each a locked
// write, each changing nothing when the block runs again).
func (c *call) finish(w *store.Workflow, st sm.Status, m *machine.Machine, from, to string, patch []byte) error {
	if cur := shown(st, m); from != "" && from != cur && cur != to {
		return fmt.Errorf("workflow %s is in %q, not %q: refusing %s -> %s", w.ID, cur, from, from, to)
	}
	if patch != nil {
		if err := merge(w, patch); err != nil {
			return err
		}
	}
	if st.Status == checkpoint.Complete {
		return nil
	}
	return sm.Finish(w, checkpoint.Complete)
}

// final is the machine's one state with no way out (complete), or "".
func final(m *machine.Machine) string {
	f := ""
	for _, s := range m.States() {
		if len(m.Transitions[s]) == 0 {
			if f != "" {
				return ""
			}
			f = s
		}
	}
	return f
}

// shown is the state the original would show: a workflow finished as
// complete short of the final state is in the final state, where the
// original's last transition took it.
func shown(st sm.Status, m *machine.Machine) string {
	if f := final(m); f != "" && st.Status == checkpoint.Complete {
		return f
	}
	return st.CurrentState
}

func didYouMean(state string) string {
	if state == "" {
		return ""
	}
	return "; did you mean " + state + "?"
}

// sm_finish [complete|failed|abandoned]: flowstate's, not the
// original's: the workflow stays active in its terminal state while that
// last phase runs.
func smFinish(c *call) int {
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	if err := sm.Finish(w, firstNonEmpty(c.arg(0), checkpoint.Complete)); err != nil {
		return c.failErr(err)
	}
	return c.answerMachineOf(w)
}

// answerMachineOf answers the machine's variables of w.
func (c *call) answerMachineOf(w *store.Workflow) int {
	s, err := c.view(w)
	if err != nil {
		return c.failErr(err)
	}
	c.answerMachine(s)
	c.touch(w, &s)
	return 0
}

// status reads the shell's workflow: its status and machine.
func (c *call) status() (sm.Status, *machine.Machine, error) {
	w, err := c.workflow()
	if err != nil {
		return sm.Status{}, nil, err
	}
	doc, m, err := sm.Load(w)
	if err != nil {
		return sm.Status{}, nil, err
	}
	return sm.StatusOf(w.ID, doc), m, nil
}

// printStatus prints what get takes from the status.
func printStatus(get func(st sm.Status, m *machine.Machine) string) func(c *call) int {
	return func(c *call) int {
		st, m, err := c.status()
		if err != nil {
			return c.failErr(err)
		}
		c.print(get(st, m))
		return 0
	}
}

var (
	smCurrentState = printStatus(shown)
	smGetScope     = printStatus(func(st sm.Status, _ *machine.Machine) string { return st.Scope })
	// The original counted the states entered.
	smGetCompletedCount = printStatus(func(st sm.Status, m *machine.Machine) string {
		return strconv.Itoa(len(entered(st.CompletedStates, shown(st, m), m.Initial)))
	})
)

// sm_is_terminal: 0 in the terminal state or one with no way out.
func smIsTerminal(c *call) int {
	st, m, err := c.status()
	if err != nil {
		return c.failErr(err)
	}
	if st.IsTerminal || len(m.Transitions[shown(st, m)]) == 0 {
		return 0
	}
	return 1
}

// sm_validate_state: 0 when the shell has the state machine loaded, as
// the original checked: STATE_FILE set and CURRENT_STATE not empty, and
// the workflow STATE_FILE names readable (its file is written again when
// a block removed it).
func smValidateState(c *call) int {
	var errs []string
	if c.stateFile == "" {
		errs = append(errs, "STATE_FILE not set")
	} else if id := c.stateFileWorkflowID(); id != "" {
		w, err := c.workflow()
		if err == nil {
			_, err = c.view(w)
		}
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			c.touch(w, nil)
		}
	} else if !isFile(c.abs(c.stateFile)) {
		errs = append(errs, "STATE_FILE does not exist: "+c.stateFile)
	}
	if c.vars["CURRENT_STATE"] == "" {
		errs = append(errs, "CURRENT_STATE not set")
	}
	if len(errs) > 0 {
		return c.fail(1, "ERROR: State validation failed with %d errors: %s", len(errs), strings.Join(errs, "; "))
	}
	return 0
}

// sm_print_status: `flowstate status`, on stderr as the original's.
func smPrintStatus(c *call) int {
	w, err := c.workflow()
	if err != nil {
		return c.failErr(err)
	}
	doc, m, err := sm.Load(w)
	if err != nil {
		return c.failErr(err)
	}
	events, err := w.ReadEvents()
	if err != nil {
		return c.failErr(err)
	}
	fmt.Fprint(c.Stderr, status.Render(status.Input{ID: w.ID, Checkpoint: doc, Events: events, Machine: m, Now: c.Now(), StuckAfter: orchestrate.DefaultStuckAfter, Resume: orchestrate.ResumeHint(w)}))
	return 0
}

// sm_execute: the shell runs execute_<state>_phase, when it defines one.
func smExecute(c *call) int {
	st, m, err := c.status()
	if err != nil {
		return c.failErr(err)
	}
	cur := shown(st, m)
	handler := "execute_" + cur + "_phase"
	switch {
	case c.funcs[handler]:
		c.run(handler)
		return 0
	case len(m.Transitions[cur]) == 0:
		return 0
	}
	return c.fail(1, "no handler %s defined", handler)
}

// save_completed_states_to_state: every transition stores them.
func saveCompletedStatesToState(*call) int { return 0 }

// load_completed_states_from_state: COMPLETED_STATES and the rest; 0
// whatever happens, as in the original.
func loadCompletedStatesFromState(c *call) int {
	if w, err := c.workflow(); err == nil {
		c.answerMachineOf(w)
	}
	return 0
}

// normalize_complexity VALUE
func normalizeComplexity(c *call) int {
	c.print(checkpoint.NormalizeComplexity(c.arg(0)).String())
	return 0
}

// map_phase_to_state N
func mapPhaseToState(c *call) int { c.print(phaseState(c.arg(0))); return 0 }

// map_state_to_phase STATE
func mapStateToPhase(c *call) int { c.print(statePhase(c.arg(0))); return 0 }

// generate_descriptive_topics_from_description DESCRIPTION [COMPLEXITY]
func topicsFromDescription(c *call) int {
	c.print(jsonText(topics(c.arg(0), c.arg(1))))
	return 0
}

// generate_descriptive_topics_from_plans PLAN_PATH...: topics named
// after the plan files (plans/002_api_redesign.md is "Api Redesign").
func topicsFromPlans(c *call) int {
	c.print(jsonText(topics(plansDescription(c.args), strconv.Itoa(len(c.args)))))
	return 0
}

// abs resolves a path argument from the shell's working directory.
func (c *call) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(c.Cwd, path)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// refWorkflow is the workflow whose checkpoint file path is, or nil.
func (c *call) refWorkflow(path string) (*store.Workflow, error) {
	p, err := c.proj()
	if err != nil {
		return nil, err
	}
	return checkpointOf(p, path), nil
}

// checkpointOf is the workflow of p whose checkpoint file path names, or
// nil: that file of the workflow's directory. Not by the file's inode:
// every write replaces the checkpoint by a rename, so a writer between
// two looks made it another file, and the call then edited it as a file
// of its own, outside the workflow's lock (a concurrent replan was lost).
func checkpointOf(p *store.Project, path string) *store.Workflow {
	id := filepath.Base(filepath.Dir(path))
	if store.ValidID(id) != nil || !exists(p, id) {
		return nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil
	}
	a, err1 := os.Stat(filepath.Dir(path))
	b, err2 := os.Stat(w.Dir)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) || filepath.Base(path) != filepath.Base(w.CheckpointPath()) {
		return nil
	}
	return w
}
