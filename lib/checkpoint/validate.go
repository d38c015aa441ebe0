package checkpoint

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/tidwall/gjson"
)

// Validate reports whether doc is a valid 2.1 checkpoint. The error is a
// fail.Invalid naming the first offending JSON path, e.g.
// `checkpoint: state_machine.current_state: must be a string, got number 3`.
//
// It checks what checkpoint-2.1.schema.json says, plus what a JSON Schema
// cannot say: every state named anywhere is a state of
// state_machine.transition_table, and known keys are not duplicated (gjson
// reads the first duplicate, encoding/json the last: they must not differ).
//
// One pass of gjson over the bytes, no decoding into Go values: every CLI
// call validates and the whole call has about a millisecond. Before it,
// limit.JSON: a checkpoint is valid UTF-8 and nests at most
// limit.MaxDepth levels, so every parser reads what flowstate writes.
func Validate(doc []byte) error {
	if err := limit.JSON(doc, "checkpoint"); err != nil {
		return err
	}
	if !gjson.ValidBytes(doc) {
		return ErrNotJSON
	}
	root := gjson.ParseBytes(doc)
	if !root.IsObject() {
		return invalidf("", "must be a JSON object, got %s", describe(root))
	}
	vd := &validator{}
	if err := vd.document(root); err != nil {
		return err
	}
	return vd.semantic
}

// validator holds the first semantic finding (see semanticError) while the
// structural checks go on: a structural error, which the JSON Schema also
// reports, always wins, so both validators agree on every document.
type validator struct {
	semantic error
	// known is the set of the transition table's states. A checkpoint a
	// cloned repository carries can name hundreds of thousands of them,
	// each checked against it: slices.Contains made that hours.
	known map[string]bool
}

func (vd *validator) note(err error) {
	if vd.semantic == nil {
		vd.semantic = err
	}
}

// notState notes that s at p is not one of states; the message (which
// lists them) is built only for the first such note.
func (vd *validator) notState(p, s string, states []string) {
	if vd.semantic == nil {
		vd.semantic = notAState(p, s, states)
	}
}

func (vd *validator) document(root gjson.Result) error {
	var top [len(topNames)]gjson.Result
	vd.collect(root, "", topNames[:], top[:])
	// Version first: a 2.0 or 3.0 document fails here with advice, not on
	// whatever field happens to differ.
	if err := checkVersion(top[topVersion]); err != nil {
		return err
	}
	if err := required("", topNames[:requiredTop], top[:requiredTop]); err != nil {
		return err
	}
	if err := wantNonEmptyString(top[topWorkflowID], "workflow_id"); err != nil {
		return err
	}
	for _, i := range [...]int{topCommand, topProjectName, topDescription} {
		if err := wantString(top[i], topNames[i]); err != nil {
			return err
		}
	}
	if err := wantEnum(top[topStatus], "status", statuses); err != nil {
		return err
	}
	for _, i := range [...]int{topCreatedAt, topUpdatedAt} {
		if err := wantTimestamp(top[i], topNames[i]); err != nil {
			return err
		}
	}
	states, err := vd.checkStateMachine(top[topStateMachine])
	if err != nil {
		return err
	}
	if err := vd.checkPhaseData(top[topPhaseData]); err != nil {
		return err
	}
	if err := vd.checkSupervisorState(top[topSupervisorState]); err != nil {
		return err
	}
	if err := vd.checkErrorState(top[topErrorState], states); err != nil {
		return err
	}
	if err := vd.checkMetadata(top[topMetadata]); err != nil {
		return err
	}
	if err := vd.checkHold(top[topHold], states); err != nil {
		return err
	}
	return vd.checkRewinds(top[topRewinds])
}

// The top-level fields, in the order New writes them; the fields before
// requiredTop are required.
const (
	topVersion = iota
	topWorkflowID
	topCommand
	topProjectName
	topDescription
	topStatus
	topCreatedAt
	topUpdatedAt
	topStateMachine
	topPhaseData
	topSupervisorState
	topErrorState
	topMetadata
	topHold
	topRewinds
	nTop
	requiredTop = topHold
)

var topNames = [nTop]string{
	topVersion: PathSchemaVersion, topWorkflowID: PathWorkflowID, topCommand: PathCommand,
	topProjectName: PathProjectName, topDescription: PathDescription, topStatus: PathStatus,
	topCreatedAt: PathCreatedAt, topUpdatedAt: PathUpdatedAt, topStateMachine: PathStateMachine,
	topPhaseData: PathPhaseData, topSupervisorState: PathSupervisorState, topErrorState: PathErrorState,
	topMetadata: PathMetadata, topHold: PathHold, topRewinds: PathRewinds,
}

func checkVersion(v gjson.Result) error {
	switch {
	case !v.Exists():
		return invalidf("schema_version", `required field is missing; a document without it is a 1.0 checkpoint: migrate it`)
	case v.Type != gjson.String:
		return invalidf("schema_version", "must be the string %q, got %s", SchemaVersion, describe(v))
	case v.Str != SchemaVersion:
		if _, ok := migrations[v.Str]; ok {
			return invalidf("schema_version", "%q is an older schema; migrate the checkpoint to %s first", v.Str, SchemaVersion)
		}
		return invalidf("schema_version", "%q is not supported (this flowstate reads %s); upgrade flowstate or restore a backup", v.Str, SchemaVersion)
	}
	return nil
}

// The fields of state_machine; those before smGates are required.
const (
	smCurrent = iota
	smCompleted
	smTable
	smConfig
	smClassification
	smGates
	smAgents
	nSM
)

var smNames = [nSM]string{
	smCurrent: "current_state", smCompleted: "completed_states", smTable: "transition_table",
	smConfig: "workflow_config", smClassification: "classification", smGates: "gates",
	smAgents: "agents",
}

// checkStateMachine returns the states of the transition table, which the
// rest of the document refers to.
func (vd *validator) checkStateMachine(sm gjson.Result) ([]string, error) {
	const p = "state_machine"
	if err := wantObject(sm, p); err != nil {
		return nil, err
	}
	var f [len(smNames)]gjson.Result
	vd.collect(sm, p, smNames[:], f[:])
	if err := required(p, smNames[:smGates], f[:smGates]); err != nil {
		return nil, err
	}
	states, err := vd.checkTable(f[smTable])
	if err != nil {
		return nil, err
	}
	if err := vd.wantState(f[smCurrent], p+".current_state", states); err != nil {
		return nil, err
	}
	if err := vd.checkStateList(f[smCompleted], p+".completed_states", states); err != nil {
		return nil, err
	}
	if err := vd.checkWorkflowConfig(f[smConfig], states); err != nil {
		return nil, err
	}
	if err := vd.checkClassification(f[smClassification]); err != nil {
		return nil, err
	}
	if err := checkAgents(f[smAgents]); err != nil {
		return nil, err
	}
	return states, vd.checkGates(f[smGates], states)
}

// checkAgents: the agents declared for the workflow (sm-init --agents), an
// array of agent names that the hooks hold to the protocol.
func checkAgents(v gjson.Result) error {
	const p = "state_machine.agents"
	if !v.Exists() {
		return nil
	}
	if !v.IsArray() {
		return invalidf(p, "must be an array of agent names, got %s", describe(v))
	}
	var err error
	i := 0
	v.ForEach(func(_, a gjson.Result) bool {
		if a.Type != gjson.String || !machine.ValidAgentName(a.Str) {
			err = invalidf(p+"."+strconv.Itoa(i), "must be an agent name (letters, digits, '-', '_'), got %s", describe(a))
		}
		i++
		return err == nil
	})
	return err
}

// The fields of a gate; message is required.
const (
	gateMessage = iota
	gateRejectTo
	nGate
)

var gateNames = [nGate]string{gateMessage: "message", gateRejectTo: "reject_to"}

// checkGates: state -> {message, reject_to}, the states a person must
// approve before the workflow enters them.
func (vd *validator) checkGates(g gjson.Result, states []string) error {
	const p = "state_machine.gates"
	if !g.Exists() {
		return nil
	}
	if err := wantObject(g, p); err != nil {
		return err
	}
	var err error
	g.ForEach(func(k, v gjson.Result) bool {
		gp := p + "." + k.Str
		if !vd.known[k.Str] {
			vd.notState(gp, k.Str, states)
		}
		if err = wantObject(v, gp); err != nil {
			return false
		}
		var f [nGate]gjson.Result
		vd.collect(v, gp, gateNames[:], f[:])
		if err = required(gp, gateNames[:gateRejectTo], f[:gateRejectTo]); err != nil {
			return false
		}
		if err = wantString(f[gateMessage], gp+".message"); err != nil {
			return false
		}
		if f[gateRejectTo].Exists() {
			err = vd.wantState(f[gateRejectTo], gp+".reject_to", states)
		}
		return err == nil
	})
	return err
}

// The fields of hold: kind and since are required, state and from name
// states, the rest are text.
const (
	holdKind = iota
	holdSince
	holdState
	holdFrom
	holdMessage
	holdReason
	holdBy
	holdVia
	nHold
)

var holdNames = [nHold]string{
	holdKind: "kind", holdSince: "since", holdState: "state", holdFrom: "from",
	holdMessage: "message", holdReason: "reason", holdBy: "by", holdVia: "via",
}

// checkHold: what a person holds the workflow for (optional).
func (vd *validator) checkHold(h gjson.Result, states []string) error {
	const p = "hold"
	if !h.Exists() {
		return nil
	}
	if err := wantObject(h, p); err != nil {
		return err
	}
	var f [len(holdNames)]gjson.Result
	vd.collect(h, p, holdNames[:], f[:])
	if err := required(p, holdNames[:holdState], f[:holdState]); err != nil {
		return err
	}
	if err := wantEnum(f[holdKind], p+".kind", holdKinds); err != nil {
		return err
	}
	if err := wantTimestamp(f[holdSince], p+".since"); err != nil {
		return err
	}
	for i := holdState; i < nHold; i++ {
		if !f[i].Exists() {
			continue
		}
		if i == holdState || i == holdFrom {
			if err := vd.wantState(f[i], p+"."+holdNames[i], states); err != nil {
				return err
			}
		} else if err := wantString(f[i], p+"."+holdNames[i]); err != nil {
			return err
		}
	}
	return nil
}

// The fields of a rewind, all required.
const (
	rewindAt = iota
	rewindFrom
	rewindTo
	nRewind
)

var rewindNames = [nRewind]string{rewindAt: "at", rewindFrom: "from", rewindTo: "to"}

// checkRewinds: the history of rewinds, each with what it took back.
func (vd *validator) checkRewinds(r gjson.Result) error {
	const p = "rewinds"
	if !r.Exists() {
		return nil
	}
	if !r.IsArray() {
		return invalidf(p, "must be an array of rewind objects, got %s", describe(r))
	}
	var err error
	i := 0
	r.ForEach(func(_, rw gjson.Result) bool {
		rp := p + "." + strconv.Itoa(i)
		i++
		if err = wantObject(rw, rp); err != nil {
			return false
		}
		var f [nRewind]gjson.Result
		vd.collect(rw, rp, rewindNames[:], f[:])
		if err = required(rp, rewindNames[:], f[:]); err != nil {
			return false
		}
		if err = wantTimestamp(f[rewindAt], rp+".at"); err != nil {
			return false
		}
		if err = wantString(f[rewindFrom], rp+".from"); err != nil {
			return false
		}
		err = wantString(f[rewindTo], rp+".to")
		return err == nil
	})
	return err
}

func (vd *validator) checkTable(t gjson.Result) ([]string, error) {
	const p = "state_machine.transition_table"
	if err := wantObject(t, p); err != nil {
		return nil, err
	}
	states := make([]string, 0, 8)
	vd.known = map[string]bool{}
	var err error
	t.ForEach(func(k, _ gjson.Result) bool {
		switch {
		case k.Str == "":
			err = invalidf(p, "a state name must not be empty")
		case vd.known[k.Str]:
			vd.note(semanticf(p+"."+k.Str, "appears twice; remove one of them"))
		default:
			vd.known[k.Str] = true
			states = append(states, k.Str)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if len(states) == 0 {
		return nil, invalidf(p, "must name at least one state")
	}
	t.ForEach(func(k, v gjson.Result) bool {
		err = vd.checkStateList(v, p+"."+k.Str, states)
		return err == nil
	})
	return states, err
}

// checkStateList checks an array of distinct state names.
func (vd *validator) checkStateList(v gjson.Result, p string, states []string) error {
	if !v.IsArray() {
		if v.Type == gjson.String && strings.Contains(p, "transition_table") {
			return invalidf(p, "must be an array of states, got the string %q (a 2.0 comma list? migrate the checkpoint)", v.Str)
		}
		return invalidf(p, "must be an array of states, got %s", describe(v))
	}
	var err error
	i := 0
	seen := map[string]bool{}
	v.ForEach(func(_, s gjson.Result) bool {
		if s.Type != gjson.String {
			err = invalidf(p+"."+strconv.Itoa(i), "must be a string, got %s", describe(s))
		} else if seen[s.Str] {
			err = invalidf(p+"."+strconv.Itoa(i), "%q is listed twice", s.Str)
		} else if !vd.known[s.Str] {
			vd.notState(p+"."+strconv.Itoa(i), s.Str, states)
		}
		seen[s.Str] = true
		i++
		return err == nil
	})
	return err
}

// The fields of workflow_config, all required.
const (
	wcScope = iota
	wcDescription
	wcCommand
	wcTerminal
	nWC
)

var wcNames = [nWC]string{wcScope: "scope", wcDescription: "description", wcCommand: "command", wcTerminal: "terminal_state"}

func (vd *validator) checkWorkflowConfig(wc gjson.Result, states []string) error {
	const p = "state_machine.workflow_config"
	if err := wantObject(wc, p); err != nil {
		return err
	}
	var f [len(wcNames)]gjson.Result
	vd.collect(wc, p, wcNames[:], f[:])
	if err := required(p, wcNames[:], f[:]); err != nil {
		return err
	}
	for _, i := range [...]int{wcScope, wcDescription, wcCommand} {
		if err := wantString(f[i], p+"."+wcNames[i]); err != nil {
			return err
		}
	}
	return vd.wantState(f[wcTerminal], p+".terminal_state", states)
}

// The fields of classification; those before clClassifiedAt are required.
const (
	clType = iota
	clComplexity
	clTopics
	clConfidence
	clReasoning
	clClassifiedAt
	clTopicDetails
	nCl
)

var clNames = [nCl]string{
	clType: "workflow_type", clComplexity: "research_complexity", clTopics: "research_topics",
	clConfidence: "confidence", clReasoning: "reasoning", clClassifiedAt: "classified_at",
	clTopicDetails: "research_topic_details",
}

func (vd *validator) checkClassification(c gjson.Result) error {
	const p = "state_machine.classification"
	if err := wantObject(c, p); err != nil {
		return err
	}
	var f [len(clNames)]gjson.Result
	vd.collect(c, p, clNames[:], f[:])
	if err := required(p, clNames[:clClassifiedAt], f[:clClassifiedAt]); err != nil {
		return err
	}
	if err := wantString(f[clType], p+".workflow_type"); err != nil {
		return err
	}
	if n, err := wantInteger(f[clComplexity], p+".research_complexity"); err != nil {
		return err
	} else if n < 1 || n > 4 {
		return invalidf(p+".research_complexity", "must be 1, 2, 3 or 4, got %s", f[clComplexity].Raw)
	}
	topics := f[clTopics]
	if !topics.IsArray() {
		return invalidf(p+".research_topics", "must be an array of strings, got %s", describe(topics))
	}
	var err error
	i := 0
	topics.ForEach(func(_, t gjson.Result) bool {
		err = wantString(t, p+".research_topics."+strconv.Itoa(i))
		i++
		return err == nil
	})
	if err != nil {
		return err
	}
	if conf := f[clConfidence]; conf.Type != gjson.Number {
		return invalidf(p+".confidence", "must be a number from 0 to 1, got %s", describe(conf))
	} else if !(conf.Num >= 0 && conf.Num <= 1) {
		return invalidf(p+".confidence", "must be from 0 to 1, got %s", conf.Raw)
	}
	if err := wantString(f[clReasoning], p+".reasoning"); err != nil {
		return err
	}
	if at := f[clClassifiedAt]; at.Exists() && at.Type != gjson.Null {
		if err := wantTimestamp(at, p+".classified_at"); err != nil {
			return invalidf(p+".classified_at", "must be null or an RFC 3339 UTC time like 2025-11-14T14:30:00Z, got %s", describe(at))
		}
	}
	if d := f[clTopicDetails]; d.Exists() {
		if !d.IsArray() {
			return invalidf(p+".research_topic_details", "must be an array of objects, got %s", describe(d))
		}
		for i, t := range d.Array() {
			if err := wantObject(t, p+".research_topic_details."+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPhaseData: free-form, but one object per state so phases can add
// keys without clobbering each other.
func (vd *validator) checkPhaseData(pd gjson.Result) error {
	if err := wantObject(pd, "phase_data"); err != nil {
		return err
	}
	var err error
	pd.ForEach(func(k, v gjson.Result) bool {
		err = wantObject(v, "phase_data."+k.Str)
		return err == nil
	})
	return err
}

func (vd *validator) checkSupervisorState(ss gjson.Result) error {
	if err := wantObject(ss, "supervisor_state"); err != nil {
		return err
	}
	var err error
	ss.ForEach(func(k, sup gjson.Result) bool {
		p := "supervisor_state." + k.Str
		if err = wantObject(sup, p); err != nil {
			return false
		}
		var workers [1]gjson.Result
		vd.collect(sup, p, []string{"workers"}, workers[:])
		if !workers[0].Exists() {
			return true
		}
		err = vd.checkWorkers(workers[0], p+".workers")
		return err == nil
	})
	return err
}

// The fields of a worker record this package checks, both required.
const (
	wkID = iota
	wkStatus
	nWk
)

var workerNames = [nWk]string{wkID: "worker_id", wkStatus: "status"}

func (vd *validator) checkWorkers(ws gjson.Result, p string) error {
	if !ws.IsArray() {
		return invalidf(p, "must be an array of worker objects, got %s", describe(ws))
	}
	var err error
	i := 0
	ws.ForEach(func(_, w gjson.Result) bool {
		wp := p + "." + strconv.Itoa(i)
		i++
		if err = wantObject(w, wp); err != nil {
			return false
		}
		var f [nWk]gjson.Result
		vd.collect(w, wp, workerNames[:], f[:])
		if err = required(wp, workerNames[:], f[:]); err != nil {
			return false
		}
		if err = wantNonEmptyString(f[wkID], wp+".worker_id"); err != nil {
			return false
		}
		err = wantEnum(f[wkStatus], wp+".status", workerStatuses)
		return err == nil
	})
	return err
}

// The fields of error_state; those before esRetries are required.
const (
	esLastError = iota
	esRetryCount
	esFailedState
	esRetries
	nES
)

var esNames = [nES]string{esLastError: "last_error", esRetryCount: "retry_count", esFailedState: "failed_state", esRetries: "retries"}

func (vd *validator) checkErrorState(es gjson.Result, states []string) error {
	const p = "error_state"
	if err := wantObject(es, p); err != nil {
		return err
	}
	var f [len(esNames)]gjson.Result
	vd.collect(es, p, esNames[:], f[:])
	if err := required(p, esNames[:esRetries], f[:esRetries]); err != nil {
		return err
	}
	if last := f[esLastError]; last.Type != gjson.Null && last.Type != gjson.String {
		return invalidf(p+".last_error", "must be a string or null, got %s", describe(last))
	}
	if n, err := wantInteger(f[esRetryCount], p+".retry_count"); err != nil {
		return err
	} else if n < 0 {
		return invalidf(p+".retry_count", "must not be negative, got %s", f[esRetryCount].Raw)
	}
	if failed := f[esFailedState]; failed.Type != gjson.Null {
		if failed.Type != gjson.String {
			return invalidf(p+".failed_state", "must be a state or null, got %s", describe(failed))
		}
		if err := vd.wantState(failed, p+".failed_state", states); err != nil {
			return err
		}
	}
	retries := f[esRetries]
	if !retries.Exists() {
		return nil
	}
	if err := wantObject(retries, p+".retries"); err != nil {
		return err
	}
	var err error
	retries.ForEach(func(k, v gjson.Result) bool {
		rp := p + ".retries." + k.Str
		var n float64
		if n, err = wantInteger(v, rp); err != nil {
			return false
		}
		if n < 0 {
			err = invalidf(rp, "must not be negative, got %s", v.Raw)
		} else if !vd.known[k.Str] {
			vd.notState(rp, k.Str, states)
		}
		return err == nil
	})
	return err
}

// The fields of metadata; those before mdRevision are required.
const (
	mdCheckpointID = iota
	mdProjectName
	mdCreatedAt
	mdUpdatedAt
	mdRevision
	nMD
)

var mdNames = [nMD]string{
	mdCheckpointID: "checkpoint_id", mdProjectName: "project_name", mdCreatedAt: "created_at",
	mdUpdatedAt: "updated_at", mdRevision: "revision",
}

func (vd *validator) checkMetadata(md gjson.Result) error {
	const p = "metadata"
	if err := wantObject(md, p); err != nil {
		return err
	}
	var f [len(mdNames)]gjson.Result
	vd.collect(md, p, mdNames[:], f[:])
	if err := required(p, mdNames[:mdRevision], f[:mdRevision]); err != nil {
		return err
	}
	if rev := f[mdRevision]; rev.Exists() {
		if n, err := wantInteger(rev, p+".revision"); err != nil {
			return err
		} else if n < 0 {
			return invalidf(p+".revision", "must not be negative, got %s", rev.Raw)
		}
	}
	if err := wantNonEmptyString(f[mdCheckpointID], p+".checkpoint_id"); err != nil {
		return err
	}
	if err := wantString(f[mdProjectName], p+".project_name"); err != nil {
		return err
	}
	if err := wantTimestamp(f[mdCreatedAt], p+".created_at"); err != nil {
		return err
	}
	return wantTimestamp(f[mdUpdatedAt], p+".updated_at")
}

// collect stores the members of obj named in names into out (same index)
// in one pass, and notes a known name that appears twice (a semantic
// finding, reported after the structural checks). Unknown keys are the
// user's and are left alone.
func (vd *validator) collect(obj gjson.Result, p string, names []string, out []gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, n := range names {
			if k.Str == n {
				if out[i].Exists() {
					vd.note(semanticf(join(p, n), "appears twice; remove one of them"))
					break
				}
				out[i] = v
				break
			}
		}
		return true
	})
}

func required(p string, names []string, f []gjson.Result) error {
	for i, n := range names {
		if !f[i].Exists() {
			return invalidf(join(p, n), "required field is missing")
		}
	}
	return nil
}

func wantObject(v gjson.Result, p string) error {
	if !v.IsObject() {
		return invalidf(p, "must be an object, got %s", describe(v))
	}
	return nil
}

func wantString(v gjson.Result, p string) error {
	if v.Type != gjson.String {
		return invalidf(p, "must be a string, got %s", describe(v))
	}
	return nil
}

func wantNonEmptyString(v gjson.Result, p string) error {
	if err := wantString(v, p); err != nil {
		return err
	}
	if v.Str == "" {
		return invalidf(p, "must not be empty")
	}
	return nil
}

func wantEnum(v gjson.Result, p string, allowed []string) error {
	if v.Type != gjson.String || !slices.Contains(allowed, v.Str) {
		return invalidf(p, "must be one of %s, got %s", strings.Join(allowed, ", "), describe(v))
	}
	return nil
}

func (vd *validator) wantState(v gjson.Result, p string, states []string) error {
	if err := wantString(v, p); err != nil {
		return err
	}
	if !vd.known[v.Str] {
		vd.notState(p, v.Str, states)
	}
	return nil
}

// wantInteger accepts what JSON Schema calls an integer: any number with
// no fractional part, so 2.0 and 2e0 pass as they do for the schema.
func wantInteger(v gjson.Result, p string) (float64, error) {
	if v.Type != gjson.Number || math.IsInf(v.Num, 0) || v.Num != math.Trunc(v.Num) {
		return 0, invalidf(p, "must be an integer, got %s", describe(v))
	}
	return v.Num, nil
}

// wantTimestamp accepts RFC 3339 in UTC ("Z"), optionally with fractional
// seconds: the one form that sorts as text and that every writer produces.
func wantTimestamp(v gjson.Result, p string) error {
	if v.Type != gjson.String || !isUTCTimestamp(v.Str) {
		return invalidf(p, "must be an RFC 3339 UTC time like 2025-11-07T14:30:22Z, got %s", describe(v))
	}
	return nil
}

// isUTCTimestamp mirrors the schema's pattern
// ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$
// plus format date-time (real month, day, hour…), without a regexp.
func isUTCTimestamp(s string) bool {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(shape)+1 || s[len(s)-1] != 'Z' {
		return false
	}
	for i := 0; i < len(shape); i++ {
		if shape[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != shape[i] {
			return false
		}
	}
	if frac := s[len(shape) : len(s)-1]; frac != "" {
		if len(frac) < 2 || frac[0] != '.' {
			return false
		}
		for i := 1; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return false
			}
		}
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func notAState(p, s string, states []string) error {
	const shown = 20
	list := strings.Join(states[:min(len(states), shown)], ", ")
	if len(states) > shown {
		list += fmt.Sprintf(" and %d more", len(states)-shown)
	}
	return semanticf(p, "%q is not a state of state_machine.transition_table (states: %s)", s, list)
}

func join(p, name string) string {
	if p == "" {
		return name
	}
	return p + "." + name
}

// invalidf is the one shape of a validation error: the path, then what is
// wrong with the value found there.
func invalidf(path, format string, args ...any) error {
	if path == "" {
		path = "(document)"
	}
	return fail.Invalidf("checkpoint: "+path+": "+format, args...)
}

// semanticError marks the checks a JSON Schema cannot express (a state
// must exist in the table, no duplicate keys); the schema agreement test
// expects exactly these to pass the schema and fail Validate.
type semanticError struct{ msg string }

func (e *semanticError) Error() string { return e.msg }

func semanticf(path, format string, args ...any) error {
	return &fail.Error{Code: fail.Invalid, Err: &semanticError{"checkpoint: " + path + ": " + fmt.Sprintf(format, args...)}}
}

// describe names a value's JSON type, with the value itself when short.
func describe(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.Type == gjson.Null:
		return "null"
	case v.Type == gjson.True, v.Type == gjson.False:
		return "boolean " + v.Raw
	case v.Type == gjson.Number:
		return "number " + short(v.Raw)
	case v.Type == gjson.String:
		return "string " + short(strconv.Quote(v.Str))
	case v.IsArray():
		return "an array"
	default:
		return "an object"
	}
}

func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
