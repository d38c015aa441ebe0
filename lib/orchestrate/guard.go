package orchestrate

import (
	"path/filepath"

	"github.com/flowstate-dev/flowstate/lib/store"
)

// AgentFile is a file only an agent may write: flowstate takes what is
// there as that agent's work.
type AgentFile struct {
	Path   string // absolute
	Agent  string // the agent that writes it, e.g. research-specialist
	Worker string // the worker's id; "" for the classification
}

// AgentFiles lists the files only agents may write for the session's
// command: while the classifier is asked for (its workflow does not exist
// yet), the classification file; once the workflow is active, the
// artifacts of the workers the last plans of its current state handed out
// (every worker of the state when a sub-supervisor has them). A main
// thread that writes one of them itself passes its own work off as the
// agent's. None for a session without a command or with a finished one.
func AgentFiles(p *store.Project, session string) []AgentFile {
	var out []AgentFile
	if run, ok := ReadRun(p, session); ok && run.Scope == "" {
		if _, exists := p.Summary(run.Workflow); !exists {
			out = append(out, AgentFile{Path: filepath.Join(specDir(p, run.Workflow), "classification.json"), Agent: Classifier})
		}
	}
	if id, err := p.SessionWorkflow(session); err == nil && id != "" {
		out = append(out, planned(p, id)...)
	}
	return out
}

// planned lists the artifacts of the workers handed out in workflow id's
// current state while it is active.
func planned(p *store.Project, id string) []AgentFile {
	if s, ok := p.Summary(id); !ok || !s.Active() {
		return nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil
	}
	v, err := load(w)
	if err != nil || !v.hasRole {
		return nil
	}
	cmd, sup := v.planned(false), v.planned(true)
	var out []AgentFile
	for _, wk := range v.workers {
		if cmd.Supervised || cmd.has(wk.ID) || sup.has(wk.ID) {
			out = append(out, AgentFile{Path: wk.Output, Agent: v.role.Agent, Worker: wk.ID})
		}
	}
	return out
}
