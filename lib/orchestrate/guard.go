package orchestrate

import (
	"path/filepath"
	"slices"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
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
	if run, ok := ReadRun(p, session); ok && run.Classifier != "" {
		if _, exists := p.Summary(run.Workflow); !exists {
			out = append(out, AgentFile{Path: filepath.Join(specDir(p, run.Workflow), "classification.json"), Agent: run.Classifier})
		}
	}
	if id, err := p.SessionWorkflow(session); err == nil && id != "" {
		out = append(out, planned(p, id)...)
	}
	return out
}

// planned lists the files only agents write in workflow id's current
// state while it is active: the artifacts of the workers its last plans
// handed out, and the file each of its agents launched in the state was
// told to write inside the workflow's spec directory (a command on the
// low-level API hands out nothing, but its task blocks name the files).
// A file an agent's prompt names elsewhere is the person's, never
// guarded: an agent's prompt is the model's to write.
func planned(p *store.Project, id string) []AgentFile {
	if s, ok := p.Summary(id); !ok || !s.Active() {
		return nil
	}
	w, err := p.Workflow(id)
	if err != nil {
		return nil
	}
	v, runs, err := look(w, Options{})
	if err != nil {
		return nil
	}
	var out []AgentFile
	if v.hasRole {
		cmd, sup := v.planned(false), v.planned(true)
		for _, wk := range v.workers {
			if cmd.Supervised || cmd.has(wk.ID) || sup.has(wk.ID) {
				out = append(out, AgentFile{Path: wk.Output, Agent: v.role.Agent, Worker: wk.ID})
			}
		}
	}
	for _, l := range runs.Outputs() {
		if !under(specDir(p, id), filepath.Clean(l.Output)) {
			continue
		}
		if !slices.ContainsFunc(out, func(f AgentFile) bool { return f.Path == l.Output }) {
			out = append(out, AgentFile{Path: l.Output, Agent: l.AgentType, Worker: l.ID})
		}
	}
	return out
}

// HandedOut reports whether the session's command handed the agent named
// agent a file that match accepts: the pending classification while the
// classifier is asked for; an output the PreToolUse hook recorded at the
// launch of an agent of that name in the workflow's current state. It is
// what the hooks know of an agent whose transcript, and so its prompt,
// Claude Code has not written out yet.
func HandedOut(p *store.Project, session, agent string, match func(path string) bool) bool {
	if run, ok := ReadRun(p, session); ok && run.Classifier == agent {
		if _, exists := p.Summary(run.Workflow); !exists {
			return match(filepath.Join(specDir(p, run.Workflow), "classification.json"))
		}
	}
	w := SessionWorkflow(p, session)
	if w == nil {
		return false
	}
	runs, err := agentRuns(w, session, Options{})
	if err != nil {
		return false
	}
	return slices.ContainsFunc(runs.Outputs(), func(l agentrun.Worker) bool { return l.AgentType == agent && match(l.Output) })
}
