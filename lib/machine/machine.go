// Package machine owns state machines as data: states, the transition
// table, the initial state and, per scope, the terminal state and the happy
// route to it. It is pure: no I/O, so every rule is table-tested.
//
// lib/sm applies these rules to a stored workflow. The two are separate
// packages, not two halves of one, because the rules sit below the
// document: lib/checkpoint's migrations need the default machine, and
// lib/sm needs lib/checkpoint and lib/store.
package machine

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// Scope is one way through a machine: where it stops and the states it
// passes on the way when nothing fails.
type Scope struct {
	Terminal string   `json:"terminal"`
	Route    []string `json:"route"`
}

// Machine is a state machine as data. Recovery names, for a state whose
// phase can fail, the state that repairs it (test -> debug); after the
// repair the route resumes at the failed state. Gates names the states a
// person must approve before a workflow enters them.
type Machine struct {
	Name        string              `json:"name"`
	Initial     string              `json:"initial"`
	Transitions map[string][]string `json:"transitions"`
	Scopes      map[string]Scope    `json:"scopes"`
	Recovery    map[string]string   `json:"recovery,omitempty"`
	Gates       map[string]Gate     `json:"gates,omitempty"`
	// Work says what each state asks of agents (work.go); a machine with
	// Work is a workflow definition the phase loop runs.
	Work map[string]Work `json:"work,omitempty"`
	// Agents lists agents that belong to the definition's workflows
	// besides the workers and sub-supervisors of Work: the hooks hold
	// them to the protocol too.
	Agents []string `json:"agents,omitempty"`
	// Classifier is the agent that classifies a request before the
	// workflow exists (workflow-classifier for the default machine).
	Classifier string `json:"classifier,omitempty"`
	// ApproveAfter names the state whose artifact a person approves when a
	// command runs with --approve-plan: the gate goes on the state after
	// it on the scope's route.
	ApproveAfter string `json:"approve_after,omitempty"`
	// Arguments says what each item of the command's arguments is:
	// files, dirs, or a pattern each matches (checks.go); the start
	// refuses others.
	Arguments string `json:"arguments,omitempty"`
	// Engine is how a command runs the definition in Claude Code:
	// "steps" always through the model following its blocks, "" or
	// "workflow" as a Claude Code workflow where the Workflow tool is on
	// (lib/engine decides).
	Engine string `json:"engine,omitempty"`
}

// The engines a definition may ask for.
const (
	EngineSteps    = "steps"
	EngineWorkflow = "workflow"
)

// Gate holds a workflow before it enters a state until a person approves:
// Message says what to approve. A rejection sends the workflow to
// RejectTo, by default the state it waits in, whose work is done again.
type Gate struct {
	Message  string `json:"message"`
	RejectTo string `json:"reject_to,omitempty"`
}

// UnmarshalJSON also takes a gate written as its message alone:
// "gates": {"implement": "Approve the plan"}.
func (g *Gate) UnmarshalJSON(b []byte) error {
	var msg string
	if json.Unmarshal(b, &msg) == nil {
		*g = Gate{Message: msg}
		return nil
	}
	type plain Gate // without this method
	return strictly(b, (*plain)(g))
}

// ParseGate reads sm-init's --gate STATE or --gate STATE=MESSAGE.
func ParseGate(spec string) (string, Gate, error) {
	state, msg, _ := strings.Cut(spec, "=")
	state, msg = strings.TrimSpace(state), strings.TrimSpace(msg)
	if !validName(state) {
		return "", Gate{}, fail.Usagef("--gate %q: give STATE or 'STATE=MESSAGE', STATE a state of the machine", spec)
	}
	if msg == "" {
		msg = "Approve entering " + state
	}
	return state, Gate{Message: msg}, nil
}

// ParseGates reads every --gate of sm-init into gates by state; a later
// gate on the same state replaces an earlier one.
func ParseGates(specs []string) (map[string]Gate, error) {
	gates := make(map[string]Gate, len(specs))
	for _, spec := range specs {
		state, g, err := ParseGate(spec)
		if err != nil {
			return nil, err
		}
		gates[state] = g
	}
	return gates, nil
}

// CheckGates checks gates against the machine: each names a state other
// than the initial one (a workflow starts there, nothing enters it), and
// sends a rejection to a state.
func (m *Machine) CheckGates(gates map[string]Gate) error {
	for _, state := range slices.Sorted(maps.Keys(gates)) {
		g := gates[state]
		switch {
		case !m.HasState(state):
			return fail.Invalidf("machine %q: gate on %q, which is not a state; states are: %s", m.Name, state, strings.Join(m.States(), ", "))
		case state == m.Initial:
			return fail.Invalidf("machine %q: gate on the initial state %q, which a workflow never enters", m.Name, state)
		case g.RejectTo != "" && !m.HasState(g.RejectTo):
			return fail.Invalidf("machine %q: gate on %q: reject_to %q is not a state", m.Name, state, g.RejectTo)
		}
	}
	return nil
}

// The default machine's scopes: the seven workflow types a classifier
// chooses from.
const (
	ResearchOnly       = "research-only"
	ResearchAndPlan    = "research-and-plan"
	ResearchAndRevise  = "research-and-revise"
	FullImplementation = "full-implementation"
	DebugOnly          = "debug-only"
	ImplementOnly      = "implement-only"
	TestAndDebug       = "test-and-debug"
)

// DefaultScopes lists the default machine's scopes in the original state
// machine's order, the order messages name them in.
func DefaultScopes() []string {
	return []string{ResearchOnly, ResearchAndPlan, ResearchAndRevise, FullImplementation, DebugOnly, ImplementOnly, TestAndDebug}
}

// defaultJSON is the default machine as a workflow definition: the bash
// libraries' eight states with the newest transition table of the
// original library and its seven scopes (docs/architecture.md, "The state
// machine"), and the work of each state that the plugin's orchestrators
// run, in the very format a user's definition has.
//
//go:embed default.json
var defaultJSON []byte

// parsedDefault is the default machine, read once per process. It is
// not checked as a user's definition is at each read: a test checks it,
// and every flowstate process reads it.
var parsedDefault = sync.OnceValue(func() *Machine {
	m, err := decode(defaultJSON)
	if err != nil {
		panic("machine: default.json: " + err.Error()) // a test keeps it valid
	}
	m.normalize()
	return m
})

// Default is the default machine and its work; a copy the caller may
// change.
func Default() *Machine { return parsedDefault().clone() }

// clone copies m deeply enough that no change to the copy reaches m.
func (m *Machine) clone() *Machine {
	c := *m
	c.Transitions = make(map[string][]string, len(m.Transitions))
	for k, v := range m.Transitions {
		c.Transitions[k] = slices.Clone(v)
	}
	c.Scopes = make(map[string]Scope, len(m.Scopes))
	for k, v := range m.Scopes {
		c.Scopes[k] = Scope{Terminal: v.Terminal, Route: slices.Clone(v.Route)}
	}
	c.Recovery, c.Gates = maps.Clone(m.Recovery), maps.Clone(m.Gates)
	if m.Work != nil {
		c.Work = make(map[string]Work, len(m.Work))
	}
	for k, w := range m.Work {
		w.Each.Items = slices.Clone(w.Each.Items)
		w.Reads, w.Sections, w.Fields = slices.Clone(w.Reads), slices.Clone(w.Sections), slices.Clone(w.Fields)
		for i := range w.Fields {
			w.Fields[i].Values = slices.Clone(w.Fields[i].Values)
		}
		if w.Supervisor != nil {
			s := *w.Supervisor
			w.Supervisor = &s
		}
		if w.MinDelivered != nil {
			n := *w.MinDelivered
			w.MinDelivered = &n
		}
		c.Work[k] = w
	}
	c.Agents = slices.Clone(m.Agents)
	return &c
}

// Parse reads a custom machine from JSON and validates it.
func Parse(data []byte) (*Machine, error) {
	// Stored as given (machine.json): it must be JSON any parser reads.
	if err := limit.JSON(data, "machine"); err != nil {
		return nil, err
	}
	if err := checkShape(data); err != nil {
		return nil, fail.Invalidf("%s: %v", namedIn(data), err)
	}
	m, err := decode(data)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	m.normalize()
	return m, nil
}

// decode reads a machine's JSON as it is, without checking what it
// says.
func decode(data []byte) (*Machine, error) {
	var m Machine
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fail.Invalidf("machine: not valid machine JSON: %v", err)
	}
	// Decode stops after the first value: anything after it (a second
	// machine, a stray brace) means the file is not what its author thinks.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail.Invalidf("machine: not valid machine JSON: data after the machine's object; the file must hold exactly one JSON object")
	}
	return &m, nil
}

// namedIn is how messages name the machine in data before it is decoded:
// machine "NAME", or machine when it has no name yet.
func namedIn(data []byte) string {
	var named struct{ Name string }
	if json.Unmarshal(data, &named) != nil || named.Name == "" {
		return "machine"
	}
	return fmt.Sprintf("machine %q", named.Name)
}

// normalize writes what a definition may say two ways in one, once it
// is checked: a section as "## Overview" or "Overview".
func (m *Machine) normalize() {
	for state, w := range m.Work {
		for i, s := range w.Sections {
			w.Sections[i] = SectionName(s)
		}
		m.Work[state] = w
	}
}

// Validate checks that the machine is closed and that every scope's route
// walks allowed transitions from the initial state to its terminal state.
func (m *Machine) Validate() error {
	if m.Initial == "" || !m.HasState(m.Initial) {
		return fail.Invalidf("machine %q: initial state %q is not in transitions", m.Name, m.Initial)
	}
	for from, tos := range m.Transitions {
		if !validName(from) {
			return fail.Invalidf("machine %q: state name %q must match [a-z][a-z0-9_-]* and be at most %d bytes", m.Name, from, maxName)
		}
		for _, to := range tos {
			if !m.HasState(to) {
				return fail.Invalidf("machine %q: transition %s -> %s leads to an unknown state; add %q to transitions", m.Name, from, to, to)
			}
		}
	}
	if len(m.Scopes) == 0 {
		return fail.Invalidf("machine %q: no scopes; add at least one {\"terminal\", \"route\"}", m.Name)
	}
	for name, s := range m.Scopes {
		if !validName(name) {
			return fail.Invalidf("machine %q: scope name %q must match [a-z][a-z0-9_-]* and be at most %d bytes", m.Name, name, maxName)
		}
		if err := m.validateRoute(name, s); err != nil {
			return err
		}
	}
	for from, to := range m.Recovery {
		if !m.Allowed(from, to) || !m.Allowed(to, from) {
			return fail.Invalidf("machine %q: recovery %s -> %s needs transitions both ways", m.Name, from, to)
		}
	}
	if m.ApproveAfter != "" && !m.HasState(m.ApproveAfter) {
		return fail.Invalidf("machine %q: approve_after: %q is not a state", m.Name, m.ApproveAfter)
	}
	if m.Engine != "" && m.Engine != EngineSteps && m.Engine != EngineWorkflow {
		return fail.Invalidf("machine %q: engine %q: give %q (the model follows the command's blocks) or %q (a Claude Code workflow where the Workflow tool is on, the default)", m.Name, m.Engine, EngineSteps, EngineWorkflow)
	}
	if err := m.validateWork(); err != nil {
		return err
	}
	return m.CheckGates(m.Gates)
}

func (m *Machine) validateRoute(name string, s Scope) error {
	if !m.HasState(s.Terminal) {
		return fail.Invalidf("machine %q: scope %q: terminal state %q is not a state", m.Name, name, s.Terminal)
	}
	if len(s.Route) == 0 || s.Route[0] != m.Initial || s.Route[len(s.Route)-1] != s.Terminal {
		return fail.Invalidf("machine %q: scope %q: route must start at %q and end at %q", m.Name, name, m.Initial, s.Terminal)
	}
	seen := make(map[string]bool, len(s.Route))
	for _, st := range s.Route {
		if seen[st] {
			return fail.Invalidf("machine %q: scope %q: the route passes %s twice; a route goes through each state once (a state done again after a failed check is a recovery: \"recovery\": {\"STATE\": \"REPAIR\"})", m.Name, name, st)
		}
		seen[st] = true
	}
	for i := 1; i < len(s.Route); i++ {
		if !m.Allowed(s.Route[i-1], s.Route[i]) {
			return fail.Invalidf("machine %q: scope %q: route step %s -> %s is not in transitions", m.Name, name, s.Route[i-1], s.Route[i])
		}
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxName || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// HasState reports whether s is a state of the machine.
func (m *Machine) HasState(s string) bool {
	_, ok := m.Transitions[s]
	return ok
}

// Allowed reports whether from -> to is in the table.
func (m *Machine) Allowed(from, to string) bool {
	return slices.Contains(m.Transitions[from], to)
}

// States lists the states in route order of the longest scope, then the
// rest alphabetically, so output is stable and reads like the workflow.
func (m *Machine) States() []string {
	var longest []string
	for _, name := range m.ScopeNames() {
		if r := m.Scopes[name].Route; len(r) > len(longest) {
			longest = r
		}
	}
	out := slices.Clone(longest)
	// Sets, not slices.Contains: a machine.json a repository carries can
	// have a hundred thousand states, and every command reads it.
	onRoute := make(map[string]bool, len(out))
	for _, s := range out {
		onRoute[s] = true
	}
	var rest []string
	for s := range m.Transitions {
		if !onRoute[s] {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// ScopeNames lists the scopes sorted by name.
func (m *Machine) ScopeNames() []string {
	names := make([]string, 0, len(m.Scopes))
	for n := range m.Scopes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Scope returns the named scope or a usage error listing the valid ones.
func (m *Machine) Scope(name string) (Scope, error) {
	s, ok := m.Scopes[name]
	if !ok {
		return Scope{}, fail.Invalidf("unknown scope %q; use one of: %s", name, strings.Join(m.ScopeNames(), ", "))
	}
	return s, nil
}

// Reach lists the states a workflow of scope s may enter: the states of
// its route and, for each of them that has one, its recovery state (test
// -> debug), the one loop a route allows. A state outside it is refused,
// so that a research-only workflow never implements.
func (m *Machine) Reach(s Scope) []string {
	out := slices.Clone(s.Route)
	in := make(map[string]bool, len(out))
	for _, st := range out {
		in[st] = true
	}
	for _, st := range s.Route {
		if r, ok := m.Recovery[st]; ok && !in[r] {
			in[r] = true
			out = append(out, r)
		}
	}
	return out
}

// describeRoute is a scope's route as a person reads it, with its
// recovery loops: "initialize -> implement -> test -> complete (debug
// after a failed test)".
func (m *Machine) describeRoute(s Scope) string {
	line := strings.Join(s.Route, " -> ")
	onRoute := make(map[string]bool, len(s.Route))
	for _, st := range s.Route {
		onRoute[st] = true
	}
	var loops []string
	for _, st := range s.Route {
		if r, ok := m.Recovery[st]; ok && !onRoute[r] {
			loops = append(loops, r+" after a failed "+st)
		}
	}
	if len(loops) > 0 {
		line += " (" + strings.Join(loops, ", ") + ")"
	}
	return line
}

// Check decides a transition from current to next for a workflow of the
// scope named scopeName, whose terminal state is terminal. same is true
// when current == next: the call is idempotent and nothing must be
// written. A state off the scope's route is refused (exit 3) even where
// the transition table has the step.
func (m *Machine) Check(scopeName, current, next, terminal string) (same bool, err error) {
	if !m.HasState(next) {
		return false, fail.Refusedf("unknown state %q; states are: %s", next, strings.Join(m.States(), ", "))
	}
	if current == next {
		return true, nil
	}
	scope, err := m.Scope(scopeName)
	if err != nil {
		return false, err
	}
	if !slices.Contains(m.Reach(scope), next) {
		return false, fail.Refusedf("state %s is not on the route of scope %s: %s; start a new workflow with a scope that includes %s", next, scopeName, m.describeRoute(scope), next)
	}
	if current == terminal || len(m.Transitions[current]) == 0 {
		return false, fail.Refusedf("workflow is in terminal state %q; no transition out of it is allowed (start a new workflow with sm-init)", current)
	}
	if !m.Allowed(current, next) {
		return false, fail.Refusedf("transition %s -> %s is not allowed; allowed next states from %s: %s", current, next, current, strings.Join(m.Transitions[current], ", "))
	}
	return false, nil
}

// Next returns the state that follows current on the scope's route. With
// failed set, it returns the recovery state of current (test -> debug).
// From a recovery state off the route it returns to the state that failed.
// At the terminal state it returns "" (the workflow is done).
func (m *Machine) Next(scope Scope, current string, failed bool, failedState string) (string, error) {
	if failed {
		to, ok := m.Recovery[current]
		if !ok {
			return "", fail.Refusedf("state %q has no recovery state; the machine recovers only: %s", current, recoveryList(m.Recovery))
		}
		return to, nil
	}
	if current == scope.Terminal {
		return "", nil
	}
	if i := slices.Index(scope.Route, current); i >= 0 {
		return scope.Route[i+1], nil
	}
	if failedState != "" && m.Recovery[failedState] == current {
		return failedState, nil
	}
	return "", fmt.Errorf("state %q is not on the route %s and no failed state to return to", current, strings.Join(scope.Route, " -> "))
}

func recoveryList(r map[string]string) string {
	if len(r) == 0 {
		return "none"
	}
	var parts []string
	for from, to := range r {
		parts = append(parts, from+" -> "+to)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
