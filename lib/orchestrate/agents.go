package orchestrate

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// Which agents belong to a session's workflow, for the hooks that hold
// them to the protocol: whatever command started the workflow (the
// plugin's, a user's definition, or a command on the low-level API that
// declared its agents with sm-init --agents), and however the model
// launched them (as the agent's own type, or as a general-purpose agent
// told to follow the agent's file). An Agent call of a session that runs
// no workflow is never anyone's.

// Known is an agent the hooks recognised as one of a session's workflow.
type Known struct {
	Name     string          // the agent's name in the definition (no plugin prefix)
	Workflow *store.Workflow // its workflow; nil for the classifier, which runs before it exists
	Worker   string          // the worker of the current state its prompt is for, "" if none
	Output   string          // the file its prompt tells it to write (absolute), "" if none
	Generic  bool            // launched as a general-purpose agent told to be Name
	// Isolated: Worker is of a batch the last plan handed out to run in
	// worktrees (isolate.go); its Agent call must ask for one.
	Isolated bool
}

// genericAgents are the subagent types that take their instructions from
// the prompt alone: Claude Code's general-purpose agent, its catch-all
// "claude", and a call that names none (Claude Code then runs
// general-purpose).
var genericAgents = []string{"", "general-purpose", "claude"}

// IsGeneric reports whether an agent of subagentType takes its
// instructions from its prompt alone.
func IsGeneric(subagentType string) bool {
	return slices.Contains(genericAgents, BareName(subagentType))
}

// BareName is an agent's name without its plugin prefix.
func BareName(subagentType string) string {
	if i := strings.LastIndexByte(subagentType, ':'); i >= 0 {
		return subagentType[i+1:]
	}
	return subagentType
}

// agentFile finds an agent file's name in a prompt that tells a generic
// agent to follow it ("Read and follow the instructions in
// /p/agents/research-specialist.md").
var agentFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[/\s"'` + "`" + `])agents/([A-Za-z0-9_-]+)\.md\b`)
})

// followed is the first agent of names whose file the prompt names, ""
// when it names none. Naming a file is not enough to be the agent
// (handedIn): an agent asked to proofread one names it too.
func followed(prompt string, names []string) string {
	for _, m := range agentFile().FindAllStringSubmatch(prompt, -1) {
		if slices.Contains(names, m[1]) {
			return m[1]
		}
	}
	return ""
}

// handed is what a prompt hands its agent in the command protocol's line
// forms (docs/command-protocol.md), the form the task blocks of
// flowstate's commands give: the files its write lines name ("Write your
// result to: PATH"), the brief of its "Read first:" line, both absolute
// (relative ones against cwd, else dir), and the value of its STATE=
// line, which a sub-supervisor's prompt carries.
type handed struct {
	writes []string
	brief  string
	state  string
}

func handedIn(prompt, cwd, dir string) handed {
	if cwd == "" {
		cwd = dir
	}
	abs := func(path string) string {
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		return inProject(dir, path)
	}
	var h handed
	for _, path := range protocol.WriteTargets(prompt) {
		h.writes = append(h.writes, abs(strings.TrimSuffix(path, ".")))
	}
	if brief, ok := protocol.ReadFirst(prompt); ok {
		h.brief = abs(brief)
	}
	for _, kv := range protocol.KeyValues(prompt) {
		if kv[0] == "STATE" {
			h.state = kv[1]
		}
	}
	return h
}

// WriteTargets lists the files a prompt tells its agent to write, in
// the protocol's write lines, absolute (relative ones against cwd, else
// dir): what the workflow handed an agent of its own.
func WriteTargets(prompt, cwd, dir string) []string {
	return handedIn(prompt, cwd, dir).writes
}

// Recognize tells whether an Agent call (subagentType and prompt, or a
// subagent's type and the prompt of its transcript) is an agent of
// session's workflow: the classifier while it is asked for; an agent
// the workflow's definition or its sm-init --agents names, by its type;
// or a generic agent whose prompt is the one the workflow handed out, in
// the form the command's task blocks give (handedIn): a write line with
// the path of an artifact it planned, a "Read first:" line with its
// brief, a sub-supervisor's STATE= line; on the low-level API, a write
// line with a path in the workflow's spec directory and the file of one
// of its agents to follow. A prompt that only mentions an agent file or
// a path is nobody's. cwd resolves a relative path in the prompt (the
// project by default).
func Recognize(p *store.Project, session, subagentType, prompt, cwd string) (Known, bool) {
	if p == nil || session == "" || store.ValidID(session) != nil {
		return Known{}, false
	}
	if k, ok := classifier(p, session, subagentType, func() string { return prompt }); ok {
		return k, true
	}
	w := SessionWorkflow(p, session)
	if w == nil {
		return Known{}, false
	}
	return recognizeIn(w, subagentType, prompt, cwd)
}

// classifier tells whether an agent of subagentType (whose prompt is
// asked for only when its type does not say) is the classifier session's
// command asks for while its workflow does not exist yet.
func classifier(p *store.Project, session, subagentType string, prompt func() string) (Known, bool) {
	run, ok := ReadRun(p, session)
	if !ok || run.Classifier == "" {
		return Known{}, false
	}
	if _, exists := p.Summary(run.Workflow); exists {
		return Known{}, false
	}
	name := BareName(subagentType)
	switch {
	case name == run.Classifier:
	case !slices.Contains(genericAgents, name):
		return Known{}, false
	case prompt() == "":
		// A general-purpose agent at work whose transcript Claude Code
		// has not written out yet: the classifier launched and not
		// stopped is the one.
		if !run.ClassifierLaunched.After(run.ClassifierStopped) {
			return Known{}, false
		}
	case !slices.Contains(handedIn(prompt(), "", p.Dir).writes, filepath.Join(specDir(p, run.Workflow), "classification.json")):
		return Known{}, false
	}
	return Known{Name: run.Classifier}, true
}

// RecognizeAgent is Recognize for an agent at work or that stopped,
// known by its id: one whose start the hooks recorded for the session's
// workflow is that agent, whatever its transcript and final answer hold
// (a general-purpose agent is known by its prompt, which Claude Code may
// not have written out yet when it stops). The prompt, which the hook
// reads from the agent's transcript, is asked for only when the
// session's command asks for a classifier or runs a workflow: a session
// that runs none reads nothing more, and the workflow's events are read
// only for a generic agent.
func RecognizeAgent(p *store.Project, session, subagentType, agentID string, prompt func() string, cwd string) (Known, bool) {
	if p == nil || session == "" || store.ValidID(session) != nil {
		return Known{}, false
	}
	if k, ok := classifier(p, session, subagentType, prompt); ok {
		return k, true
	}
	w := SessionWorkflow(p, session)
	if w == nil {
		return Known{}, false
	}
	// Only a generic agent can have been known at its start and not
	// now: one of a type is known by its type at both.
	if k, ok := recognizeIn(w, subagentType, prompt(), cwd); ok || agentID == "" || !slices.Contains(genericAgents, BareName(subagentType)) {
		return k, ok
	}
	data, err := w.ReadEvents()
	if err != nil {
		return Known{}, false
	}
	start, ok := agentrun.StartOf(agentrun.Parse(data), agentID)
	if !ok || start.Session != session {
		return Known{}, false
	}
	// Known by its start, its worker is the one whose artifact its
	// prompt (or its final answer, REPORT_CREATED: path) names.
	k := Known{Name: start.AgentType, Workflow: w, Generic: start.Generic, Output: promptOutput(prompt(), cwd, w.P.Dir)}
	if v, err := load(w); err == nil && v.hasRole && v.role.Agent == k.Name {
		k.Worker = v.workerNamed(prompt())
	}
	return k, true
}

// AgentOf is the agent of workflow w, whatever its status, that an Agent
// call of subagentType with prompt stands for (as Recognize knows them),
// with the worker of the current state whose artifact the prompt gives;
// ok is false for any other.
func AgentOf(w *store.Workflow, subagentType, prompt string) (Known, bool) {
	return recognizeIn(w, subagentType, prompt, "")
}

// recognizeIn is Recognize for the agents of w.
func recognizeIn(w *store.Workflow, subagentType, prompt, cwd string) (Known, bool) {
	name := BareName(subagentType)
	generic := slices.Contains(genericAgents, name)
	p := w.P
	v, err := load(w)
	if err != nil {
		return Known{}, false
	}
	names := v.agents()
	k := Known{Workflow: w, Output: promptOutput(prompt, cwd, p.Dir), Generic: generic}
	if !generic {
		if !slices.Contains(names, name) {
			return Known{}, false
		}
		k.Name = name
		if v.hasRole {
			k.Worker = v.workerNamed(prompt)
		}
	} else if k.Name, k.Worker = v.handedAgent(handedIn(prompt, cwd, p.Dir), followed(prompt, names)); k.Name == "" {
		return Known{}, false
	}
	k.Isolated = k.Worker != "" && k.Name == v.role.Agent && v.isolatedWorker(k.Worker)
	return k, true
}

// isolatedWorker reports whether the last plan of the command or of a
// sub-supervisor handed worker id out to run in a worktree.
func (v *view) isolatedWorker(id string) bool {
	for _, pl := range v.plans {
		if pl.Isolated && pl.has(id) {
			return true
		}
	}
	return false
}

// inProject is path, clean, with the worktree of dir it is in, if any,
// replaced by dir (worktree.MainPath): what an isolated agent names in
// its worktree is the project's file there. dir is also tried with its
// links resolved, as a payload's cwd may be.
func inProject(dir, path string) string {
	path = filepath.Clean(path)
	if main := worktree.MainPath(dir, path); main != path {
		return main
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		if main := worktree.MainPath(real, path); main != path {
			return filepath.Join(dir, strings.TrimPrefix(main, real))
		}
	}
	return path
}

// workerNamed is the worker of v's state whose artifact text names
// (workerIn), "" for none.
func (v *view) workerNamed(text string) string {
	rel, err := filepath.Rel(v.w.P.Dir, v.facts.SpecDir)
	if err != nil {
		return ""
	}
	return workerIn(v.workers, v.facts.SpecDir, rel, text)
}

// handedAgent is the agent of v's workflow, and its worker, that a
// generic agent is when its prompt hands it h and tells it to follow the
// file of the agent follows ("" for none); "" when it is none of them.
func (v *view) handedAgent(h handed, follows string) (name, worker string) {
	if v.hasRole {
		for _, wk := range v.workers {
			if slices.Contains(h.writes, filepath.Clean(wk.Output)) {
				return v.role.Agent, wk.ID
			}
		}
		if h.brief != "" && h.brief == BriefPath(v.facts.SpecDir, v.role) {
			return v.role.Agent, ""
		}
		if sup := v.role.SupervisorAgent(); sup != "" && h.state == v.state && follows == sup {
			return sup, ""
		}
	}
	if follows != "" && slices.ContainsFunc(h.writes, func(path string) bool { return under(v.facts.SpecDir, path) }) {
		return follows, ""
	}
	return "", ""
}

// under reports whether path is inside dir (both clean and absolute).
func under(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RecognizeStart is Recognize for an agent that is starting, whose
// payload carries its type but no prompt: a general-purpose agent is
// known by the launch it answers (agentrun.Runs.GenericStart).
func RecognizeStart(p *store.Project, session, subagentType string) (Known, bool) {
	if !slices.Contains(genericAgents, BareName(subagentType)) {
		return Recognize(p, session, subagentType, "", "")
	}
	if p == nil || session == "" || store.ValidID(session) != nil {
		return Known{}, false
	}
	w := SessionWorkflow(p, session)
	if w == nil {
		return Known{}, false
	}
	runs, err := agentRuns(w, session, Options{})
	if err != nil {
		return Known{}, false
	}
	if t := runs.GenericStart(); t != "" {
		return Known{Name: t, Workflow: w, Generic: true}, true
	}
	return Known{}, false
}

// agents lists every agent of the view's workflow: its definition's and
// those its sm-init declared.
func (v *view) agents() []string {
	names := v.m.AgentNames()
	for _, a := range v.cv.Agents {
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	return names
}

// SessionWorkflow is the session's current workflow while it is active,
// or cancelled (its agents at work when a person cancelled it finish,
// and are recorded); nil otherwise. Only the session's own pointer
// counts: another session's workflow is never touched.
func SessionWorkflow(p *store.Project, session string) *store.Workflow {
	id, err := p.SessionWorkflow(session)
	if err != nil || id == "" {
		return nil
	}
	if s, ok := p.Summary(id); !ok || !s.Active() && s.Status != checkpoint.Cancelled {
		return nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil
	}
	return w
}

// promptOutput is the file a prompt tells its agent to write: the path
// after "to:" on its first line that has one ("Write your result to:
// reports/001_x.md"), absolute (relative ones against cwd, else dir); ""
// when no line says.
func promptOutput(prompt, cwd, dir string) string {
	for line := range strings.Lines(prompt) {
		_, rest, ok := strings.Cut(line, " to:")
		if !ok {
			continue
		}
		path := strings.Trim(strings.TrimSpace(rest), "`'\"")
		path = strings.TrimSuffix(path, ".")
		if path == "" || strings.ContainsAny(path, " \t") || !strings.Contains(path, "/") {
			continue
		}
		if !filepath.IsAbs(path) {
			if cwd == "" {
				cwd = dir
			}
			path = filepath.Join(cwd, path)
		}
		return inProject(dir, path)
	}
	return ""
}
