package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// phaseCommands are the steps of the orchestrator commands. Each prints
// KEY=VALUE lines and a NEXT=<section> for the command markdown
// (docs/command-protocol.md); lib/phase decides, this file does the I/O.
func phaseCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "phase-start",
			Usage:     "start a workflow from a command's arguments (stdin); print NEXT=classify or NEXT=phase",
			UsageText: "flowstate phase-start --command NAME [--sequential] [--require-scope] [--classified] < ARGUMENTS",
			Description: "stdin is the command's arguments as typed: [--scope SCOPE] DESCRIPTION. With a scope, or with\n" +
				"FLOWSTATE_CLASSIFICATION=offline, the workflow is created at once (NEXT=phase). Otherwise it prints\n" +
				"DESCRIPTION= and CLASSIFICATION_PATH= for the workflow-classifier agent (NEXT=classify); run it\n" +
				"again with --classified to create the workflow from the JSON the agent wrote.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "command", Usage: "the command running the workflow, e.g. coordinate"},
				&cli.BoolFlag{Name: "sequential", Usage: "one worker at a time and no sub-supervisors (/supervise)"},
				&cli.BoolFlag{Name: "require-scope", Usage: "the arguments must start with --scope SCOPE (/orchestrate)"},
				&cli.BoolFlag{Name: "classified", Usage: "the classifier has written its JSON; create the workflow"},
			},
			Action: e.phaseStart,
		},
		{
			Name:      "phase-plan",
			Usage:     "advance past finished states and print the next batch of workers as KEY=VALUE lines",
			UsageText: "flowstate phase-plan [--supervisor]",
			Description: "Prints STATE, AGENT, ARTIFACT, DESCRIPTION, CONTEXT, WORKER_COUNT and TOPIC_i, OUTPUT_PATH_i\n" +
				"for each worker not yet recorded as completed. When the state's size calls for a sub-supervisor\n" +
				"it prints SUPERVISOR= and NEXT=supervised; when the workflow is finished, NEXT=done.\n" +
				"--supervisor (inside a sub-supervisor): plan the current state only, never delegate.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "supervisor", Usage: "called by a sub-supervisor agent"}, workflowFlag()},
			Action: e.phasePlan,
		},
		{
			Name:      "phase-verify",
			Usage:     "check and record the artifacts of the batch phase-plan printed; print NEXT",
			UsageText: "flowstate phase-verify [--supervisor]",
			Description: "Each worker's artifact must exist and parse (report, plan or test results, protocol section 6).\n" +
				"Missing or unreadable: the worker is recorded failed and the command stops naming the file.\n" +
				"Failing tests spend one retry (sm-fail, sm-retry) and lead to debug; exit 3 once spent.\n" +
				"--supervisor: never stop; loop with NEXT=workers, then print the SUPERVISOR_COMPLETE or\n" +
				"SUPERVISOR_FAILED line.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "supervisor", Usage: "called by a sub-supervisor agent"}, workflowFlag()},
			Action: e.phaseVerify,
		},
		{
			Name:      "resume",
			Usage:     "point this session at an unfinished workflow and print NEXT=phase",
			UsageText: "flowstate resume [ID|-]   (- reads an optional ID from stdin)",
			Description: "Without an ID: this session's workflow if unfinished, else the project's only unfinished one.\n" +
				"phase-plan then re-runs only unfinished states and workers.",
			Action: e.resume,
		},
	}
}

// coordination values stored in phase_data.initialize.coordination.
const (
	adaptive   = "adaptive"
	sequential = "sequential"
)

func (e *env) phaseStart(c *cli.Context) error {
	command := c.String("command")
	if command == "" {
		return fail.Usagef("phase-start needs --command NAME")
	}
	raw, err := limit.ReadAll(e.Stdin, "command arguments")
	if err != nil {
		return err
	}
	scope, desc, err := phase.Args(string(raw))
	if err != nil {
		return err
	}
	m := machine.Default()
	if scope == "" && c.Bool("require-scope") {
		return fail.Usagef("give the scope first: /flowstate:%s --scope SCOPE DESCRIPTION, SCOPE one of %s", command, strings.Join(m.ScopeNames(), ", "))
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	session := e.Getenv("CLAUDE_CODE_SESSION_ID")
	if session != "" {
		if err := store.ValidID(session); err != nil {
			return fail.Usagef("CLAUDE_CODE_SESSION_ID: %v", err)
		}
	}
	pending := filepath.Join(p.StateDir, "pending", orDefault(session, "no-session"))
	var cls classify.Classification
	id, classPath := "", ""
	switch mode := e.Getenv("FLOWSTATE_CLASSIFICATION"); {
	case scope != "":
		// No topics: the research phase studies the request itself, one worker.
		cls = classify.Classification{WorkflowType: scope, Confidence: 1, ResearchComplexity: 1, ResearchTopics: []string{}, Reasoning: "scope given by the user"}
	case mode == "offline":
		cls = classify.Offline(desc)
	case mode != "" && mode != "agent":
		return fail.Usagef("FLOWSTATE_CLASSIFICATION=%q: use agent (the default) or offline", mode)
	case c.Bool("classified"):
		b, err := os.ReadFile(pending)
		if err != nil {
			return fail.Usagef("no classification pending for this session (%v); start again with /flowstate:%s DESCRIPTION", err, command)
		}
		id = strings.TrimSpace(string(b))
		classPath = filepath.Join(specDir(p, id), "classification.json")
		data, err := os.ReadFile(classPath)
		if err != nil {
			return fail.Usagef("the workflow-classifier wrote no classification at %s; run /flowstate:%s again", classPath, command)
		}
		if cls, err = classify.Parse(data, 0.7); err != nil {
			return fmt.Errorf("%s: %w", classPath, err)
		}
	default:
		// The classifier runs between two bash blocks that share nothing but
		// files: keep the workflow id it writes under for the second block.
		id = store.NewID(command, p.Now())
		classPath = filepath.Join(specDir(p, id), "classification.json")
		if err := fsx.EnsureDir(filepath.Dir(pending)); err != nil {
			return err
		}
		if err := fsx.WriteFile(pending, []byte(id+"\n")); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(classPath), 0o755); err != nil {
			return err
		}
		e.printf("DESCRIPTION=%s\nCLASSIFICATION_PATH=%s\nNEXT=classify\n", phase.OneLine(desc), classPath)
		return nil
	}
	w, err := sm.Init(p, sm.InitParams{ID: id, Description: desc, Command: command, Scope: cls.WorkflowType,
		Classification: cls, Machine: m, Session: session})
	if err != nil {
		return err
	}
	coord := adaptive
	if c.Bool("sequential") {
		coord = sequential
	}
	init := map[string]string{"coordination": coord}
	if classPath != "" {
		init["classification_path"] = classPath
	}
	if err := setPhaseData(w, "initialize", init); err != nil {
		return err
	}
	if err := os.Remove(pending); err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.warn("could not remove %s: %v", pending, err)
	}
	e.printf("WORKFLOW_ID=%s\nWORKFLOW_SCOPE=%s\nNEXT=phase\n", w.ID, cls.WorkflowType)
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func specDir(p *store.Project, id string) string { return filepath.Join(p.Dir, phase.SpecsDir, id) }

// setPhaseData merges fields into phase_data.<state>.
func setPhaseData(w *store.Workflow, state string, fields map[string]string) error {
	return w.Update(func(tx *store.Tx) error {
		for k, v := range fields {
			doc, err := sjson.SetBytes(tx.Checkpoint, "phase_data."+state+"."+k, v)
			if err != nil {
				return err
			}
			tx.Checkpoint = doc
		}
		return nil
	})
}

// phaseView is one read of a workflow: its current state and everything
// lib/phase needs to plan or verify that state's workers.
type phaseView struct {
	w          *store.Workflow
	state      string
	terminal   string
	role       phase.Role
	hasRole    bool
	facts      phase.Facts
	workers    []phase.Worker
	records    map[string]map[string]supervisor.Record // role key -> worker id -> record
	sequential bool
}

func (e *env) view(w *store.Workflow) (*phaseView, error) {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return nil, err
	}
	r := gjson.GetManyBytes(doc, "state_machine.current_state", "state_machine.workflow_config.terminal_state",
		"workflow_description", "state_machine.classification.research_topics", "phase_data.initialize.coordination",
		"error_state.failed_state", "error_state.retries.test")
	v := &phaseView{w: w, state: r[0].String(), terminal: r[1].String(), sequential: r[4].String() == sequential,
		records: map[string]map[string]supervisor.Record{}}
	v.facts = phase.Facts{SpecDir: specDir(w.P, w.ID), Description: r[2].String(),
		Loop: phase.Loop{FailedState: r[5].String(), Retries: int(r[6].Int())}}
	for _, t := range r[3].Array() {
		v.facts.Topics = append(v.facts.Topics, t.String())
	}
	for _, role := range phase.Roles() {
		raw := gjson.GetBytes(doc, "supervisor_state."+role.Key+".workers").Raw
		byID := map[string]supervisor.Record{}
		if raw != "" {
			recs, err := supervisor.ParseRecords([]byte(raw))
			if err != nil {
				return nil, fmt.Errorf("workflow %s, supervisor_state.%s.workers: %w", w.ID, role.Key, err)
			}
			for _, rec := range recs {
				byID[rec.WorkerID] = rec
			}
		}
		v.records[role.Key] = byID
	}
	// Debug attempts run one after another, so the completed ones are 1..n.
	for v.completed("debug", phase.DebugID(v.facts.Loop.DebugDone+1)) {
		v.facts.Loop.DebugDone++
	}
	if rec := v.record("plan", phase.PlanID); rec.Status == supervisor.Completed {
		md, err := os.ReadFile(rec.OutputPath)
		if err != nil {
			return nil, fail.Usagef("the plan %s recorded for workflow %s is gone (%v); restore it or re-run the plan phase", rec.OutputPath, w.ID, err)
		}
		if v.facts.Plan, err = supervisor.ParsePlan(md); err != nil {
			return nil, fmt.Errorf("%s: %w", rec.OutputPath, err)
		}
	}
	// The debug analyst works on the failures of the run it follows.
	failedRun := v.facts
	failedRun.Loop = phase.Loop{Retries: v.facts.Loop.DebugAttempt() - 1}
	if n, fs := v.testResults(failedRun); n > 0 {
		v.facts.Failures = phase.FailureLine(n, fs)
	}
	v.role, v.hasRole = phase.RoleOf(v.state)
	if v.workers, err = phase.Workers(v.state, v.facts); err != nil {
		return nil, fmt.Errorf("workflow %s, state %s: %w", w.ID, v.state, err)
	}
	return v, nil
}

// record is the stored record of worker id of state; zero if none.
func (v *phaseView) record(state, id string) supervisor.Record {
	r, _ := phase.RoleOf(state)
	return v.records[r.Key][id]
}

func (v *phaseView) completed(state, id string) bool {
	return v.record(state, id).Status == supervisor.Completed
}

// done reports whether worker id of the current state completed.
func (v *phaseView) done(id string) bool { return v.completed(v.state, id) }

// testResults sums the failing tests of the test run f's loop points at.
func (v *phaseView) testResults(f phase.Facts) (int64, []supervisor.Failing) {
	ws, _ := phase.Workers("test", f)
	var failed int64
	var all []supervisor.Failing
	for _, w := range ws {
		var res supervisor.TestResults
		if rec := v.record("test", w.ID); json.Unmarshal(rec.Metadata, &res) == nil {
			failed += res.TestsFailed
			all = append(all, res.Failures...)
		}
	}
	return failed, all
}

// complete reports whether the current state's work is finished: every
// worker completed and, for test, the run passed or its failure has been
// handed to debug.
func (v *phaseView) complete() bool {
	if !v.hasRole {
		return true
	}
	if _, remaining := phase.Pending(v.workers, v.done, v.sequential); remaining > 0 {
		return false
	}
	if v.state == "test" {
		if n, _ := v.testResults(v.facts); n > 0 {
			return v.facts.Loop.OwesDebug()
		}
	}
	return true
}

func (v *phaseView) finished() bool { return v.state == v.terminal && v.complete() }

// advance moves the workflow past every finished state and returns a view
// of the first state with work left, or nil when the workflow is done.
func (e *env) advance(w *store.Workflow) (*phaseView, error) {
	for {
		v, err := e.view(w)
		if err != nil || !v.complete() {
			return v, err
		}
		next, err := sm.Next(w, v.state == "test" && v.facts.Loop.OwesDebug())
		if err != nil || next == "" {
			return nil, err
		}
		if _, err := sm.Transition(w, next, v.state+" finished"); err != nil {
			return nil, err
		}
	}
}

func (e *env) phasePlan(c *cli.Context) error {
	if _, err := args(c); err != nil {
		return err
	}
	w, err := e.workflow(c)
	if err != nil {
		return err
	}
	inSupervisor := c.Bool("supervisor")
	var v *phaseView
	if inSupervisor {
		v, err = e.view(w)
	} else if v, err = e.advance(w); err == nil && v == nil {
		return e.printDone(w)
	}
	if err != nil {
		return err
	}
	if !v.hasRole {
		return fail.Usagef("workflow %s is in state %s, which has no agents to run", w.ID, v.state)
	}
	batch, remaining := phase.Pending(v.workers, v.done, v.sequential)
	supervise, err := phase.Supervise(v.role, v.workers, v.sequential)
	if err != nil {
		return err
	}
	for _, wk := range batch {
		if err := os.MkdirAll(filepath.Dir(wk.Output), 0o755); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "WORKFLOW_ID=%s\nSTATE=%s\nAGENT=%s\nARTIFACT=%s\nDESCRIPTION=%s\nCONTEXT=%s\nREMAINING=%d\nWORKER_COUNT=%d\n",
		w.ID, v.state, v.role.Agent, v.role.Artifact, phase.OneLine(v.facts.Description), phase.Context(v.state, v.outputs()), remaining, len(batch))
	for i, wk := range batch {
		fmt.Fprintf(&b, "TOPIC_%d=%s\nOUTPUT_PATH_%d=%s\n", i+1, wk.Label, i+1, wk.Output)
	}
	if supervise && !inSupervisor && len(batch) > 0 {
		fmt.Fprintf(&b, "SUPERVISOR=%s\nNEXT=supervised\n", v.role.Supervisor)
	}
	if !inSupervisor {
		coord := "flat"
		if supervise {
			coord = "hierarchical"
		}
		if err := setPhaseData(w, v.state, map[string]string{"coordination": coord}); err != nil {
			return err
		}
	}
	e.printf("%s", b.String())
	return nil
}

// outputs lists the completed workers' artifacts per state, in worker order.
func (v *phaseView) outputs() map[string][]string {
	out := map[string][]string{}
	for _, role := range phase.Roles() {
		for _, rec := range sortedRecords(v.records[role.Key]) {
			if rec.Status == supervisor.Completed {
				out[role.State] = append(out[role.State], rec.OutputPath)
			}
		}
	}
	return out
}

// sortedRecords orders records by output path, which numbers the workers.
func sortedRecords(byID map[string]supervisor.Record) []supervisor.Record {
	recs := slices.Collect(maps.Values(byID))
	slices.SortFunc(recs, func(a, b supervisor.Record) int { return strings.Compare(a.OutputPath, b.OutputPath) })
	return recs
}

func (e *env) phaseVerify(c *cli.Context) error {
	if _, err := args(c); err != nil {
		return err
	}
	w, err := e.workflow(c)
	if err != nil {
		return err
	}
	inSupervisor := c.Bool("supervisor")
	v, err := e.view(w)
	if err != nil {
		return err
	}
	if !v.hasRole || v.role.Kind == "" && inSupervisor {
		if inSupervisor {
			return fail.Usagef("workflow %s is in state %s, which has no sub-supervisor", w.ID, v.state)
		}
		e.printf("NEXT=phase\n")
		return nil
	}
	batch, remaining := phase.Pending(v.workers, v.done, v.sequential)
	problems, err := recordBatch(v, batch)
	if err != nil {
		return err
	}
	left := remaining - len(batch) + len(problems)
	if len(problems) > 0 && !inSupervisor {
		if err := sm.Fail(w, problems[0].Error()); err != nil {
			return err
		}
		return fmt.Errorf("%w; run /flowstate:workflow-resume to re-run only the workers that did not deliver", errors.Join(problems...))
	}
	if left > 0 && len(problems) == 0 {
		next := "phase"
		if inSupervisor {
			next = "workers"
		}
		e.printf("NEXT=%s\n", next)
		return nil
	}
	if v, err = e.view(w); err != nil {
		return err
	}
	signal, err := aggregatePhase(v)
	if err != nil {
		return err
	}
	if inSupervisor {
		e.printf("%s\n", signal)
		return nil
	}
	if v.state == "test" {
		failed, fs := v.testResults(v.facts)
		if failed > 0 && !v.facts.Loop.OwesDebug() {
			if err := sm.Fail(w, phase.FailureLine(failed, fs)); err != nil {
				return err
			}
			if _, err := sm.Retry(w, sm.DefaultMaxRetries); err != nil {
				return err
			}
		}
		e.printf("TESTS_FAILED=%d\n", failed)
	}
	e.printf("NEXT=phase\n")
	return nil
}

// recordBatch checks each worker's artifact and records every worker,
// completed or failed, in one locked write, along with the state's
// artifacts in phase_data. It returns one error per worker that did not
// deliver; each names the file.
func recordBatch(v *phaseView, batch []phase.Worker) ([]error, error) {
	var problems []error
	recs := make([]supervisor.Record, len(batch))
	for i, wk := range batch {
		var checked phase.Checked
		data, err := os.ReadFile(wk.Output)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fail.Usagef("%s %s wrote no %s at %s", v.role.Agent, wk.ID, v.role.Artifact, wk.Output)
		case err != nil:
			err = fmt.Errorf("%s %s: %w", v.role.Agent, wk.ID, err)
		default:
			if checked, err = phase.Check(v.role, data); err != nil {
				err = fmt.Errorf("%s %s: %s is not a valid %s: %w", v.role.Agent, wk.ID, wk.Output, v.role.Artifact, err)
			}
		}
		if err != nil {
			problems = append(problems, err)
		}
		recs[i] = phase.Record(v.role, wk, checked, err)
	}
	path := "supervisor_state." + v.role.Key + ".workers"
	err := v.w.Update(func(tx *store.Tx) error {
		workers := []byte(gjson.GetBytes(tx.Checkpoint, path).Raw)
		for _, rec := range recs {
			var err error
			if workers, err = supervisor.Upsert(workers, rec); err != nil {
				return fmt.Errorf("workflow %s, %s: %w", v.w.ID, path, err)
			}
			tx.Event("worker", map[string]any{"state": v.state, "worker_id": rec.WorkerID, "status": rec.Status})
		}
		doc, err := sjson.SetRawBytes(tx.Checkpoint, path, workers)
		if err != nil {
			return err
		}
		var artifacts []string
		for _, rec := range gjson.GetBytes(doc, path).Array() {
			if rec.Get("status").String() == supervisor.Completed {
				artifacts = append(artifacts, rec.Get("output_path").String())
			}
		}
		tx.Checkpoint, err = sjson.SetBytes(doc, "phase_data."+v.state+".artifacts", artifacts)
		return err
	})
	return problems, err
}

// aggregatePhase stores the aggregated_metadata of the state's workers and
// returns the supervisor's completion signal line. All workers failed is
// not an error here: the signal says SUPERVISOR_FAILED and the
// orchestrator's phase-verify then stops on the missing files.
func aggregatePhase(v *phaseView) (string, error) {
	if v.role.Kind == "" {
		return "", nil
	}
	var recs []supervisor.Record
	outputs := map[string][]byte{}
	for _, wk := range v.workers {
		rec, ok := v.records[v.role.Key][wk.ID]
		if !ok {
			rec = supervisor.Record{WorkerID: wk.ID, Status: supervisor.Pending, OutputPath: wk.Output}
		}
		recs = append(recs, rec)
		if data, err := os.ReadFile(wk.Output); err == nil {
			outputs[wk.Output] = data
		}
	}
	agg, err := supervisor.Aggregate(v.role.Kind, recs, supervisor.Inputs{Outputs: outputs})
	var failed *supervisor.FailedError
	if errors.As(err, &failed) {
		return failed.Error(), nil
	}
	if err != nil {
		return "", err
	}
	err = v.w.Update(func(tx *store.Tx) error {
		doc, err := sjson.SetRawBytes(tx.Checkpoint, "supervisor_state."+v.role.Key+".aggregated_metadata", agg)
		tx.Checkpoint = doc
		return err
	})
	return supervisor.SupervisorComplete + ": " + string(agg), err
}

// printDone prints the finished workflow's artifacts and NEXT=done.
func (e *env) printDone(w *store.Workflow) error {
	v, err := e.view(w)
	if err != nil {
		return err
	}
	if err := sm.Finish(w, "complete"); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "WORKFLOW_ID=%s\nFINAL_STATE=%s\nARTIFACTS_DIR=%s\n", w.ID, v.state, v.facts.SpecDir)
	n := 0
	outs := v.outputs()
	for _, role := range phase.Roles() {
		for _, p := range outs[role.State] {
			n++
			fmt.Fprintf(&b, "ARTIFACT_%d=%s\n", n, p)
		}
	}
	fmt.Fprintf(&b, "ARTIFACT_COUNT=%d\nNEXT=done\n", n)
	e.printf("%s", b.String())
	return nil
}

func (e *env) resume(c *cli.Context) error {
	if c.NArg() > 1 {
		return fail.Usagef("resume takes at most one workflow ID")
	}
	id := c.Args().First()
	if id == "-" {
		raw, err := limit.ReadAll(e.Stdin, "workflow id")
		if err != nil {
			return err
		}
		id = strings.TrimSpace(string(raw))
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	session := e.Getenv("CLAUDE_CODE_SESSION_ID")
	var w *store.Workflow
	if id != "" {
		if w, err = p.Workflow(id); err != nil {
			return err
		}
	} else if w, err = e.unfinished(p, session); err != nil {
		return err
	}
	if session != "" {
		if err := p.SetSession(session, w.ID); err != nil {
			return err
		}
		err := w.Update(func(tx *store.Tx) error {
			doc, err := sjson.SetBytes(tx.Checkpoint, "session_id", session)
			tx.Checkpoint = doc
			return err
		})
		if err != nil {
			return err
		}
	}
	v, err := e.view(w)
	if err != nil {
		return err
	}
	if v.finished() {
		return e.printDone(w)
	}
	e.printf("WORKFLOW_ID=%s\nCURRENT_STATE=%s\nNEXT=phase\n", w.ID, v.state)
	return nil
}

// unfinished finds the workflow to resume: the session's own if it is
// unfinished, else the project's only unfinished one. Finished means the
// terminal phase's work is verified, not merely that the status says so:
// a workflow whose status was set by hand may still lack artifacts.
func (e *env) unfinished(p *store.Project, session string) (*store.Workflow, error) {
	if w, err := p.Resolve(store.Selector{Env: e.Getenv("FLOWSTATE_WORKFLOW"), Session: session}); err == nil {
		if v, err := e.view(w); err == nil && !v.finished() {
			return w, nil
		}
	}
	all, err := p.List()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		if s.Status == "failed" || s.Status == "abandoned" {
			continue
		}
		w, err := p.Workflow(s.ID)
		if err != nil {
			continue
		}
		if v, err := e.view(w); err == nil && !v.finished() {
			ids = append(ids, s.ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil, fail.Usagef("no unfinished workflow in %s; see `flowstate list`", p.Dir)
	case 1:
		return p.Workflow(ids[0])
	}
	return nil, fail.Usagef("%d unfinished workflows: %s; pass one: /flowstate:workflow-resume ID", len(ids), strings.Join(ids, ", "))
}
