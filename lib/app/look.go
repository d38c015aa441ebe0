package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/report"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/status"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
	"github.com/flowstate-dev/flowstate/lib/version"
)

// Looking at a workflow (status, history, report): which one, its run
// folded into a timeline, what it cost.

// onLooked wraps an action that only reads a workflow. Without --workflow
// or FLOWSTATE_WORKFLOW, where no workflow is the session's or the only
// active one (a finished one looked at from a terminal), it takes the
// project's most recent workflow and says which on stderr, as `git log`
// names the branch it shows.
func (e *env) onLooked(fn func(w *store.Workflow) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		p, err := e.argless(c)
		if err != nil {
			return err
		}
		sel := e.selector()
		w, err := p.Resolve(sel)
		if err != nil && sel.Flag == "" && sel.Env == "" && fail.Code(err) == fail.Usage {
			if w = e.mostRecent(p); w == nil {
				return noWorkflows(p, err)
			}
			err = nil
		}
		if err != nil {
			return err
		}
		return fn(w)
	}
}

// noWorkflows is what a person looking at a project with no workflow is
// told: to start one with a slash command in Claude Code (sm-init is a
// bash block's step); err, whatever else kept one from being found.
func noWorkflows(p *store.Project, err error) error {
	if all, lerr := p.List(); lerr != nil || len(all) > 0 {
		return err
	}
	return fail.Usagef("no workflows in %s yet; start one in Claude Code, e.g. %s DESCRIPTION (or your own command), then look again", p.Dir, orchestrate.Slash(p, "coordinate"))
}

// mostRecent is the project's most recently updated workflow, nil when
// it has none.
func (e *env) mostRecent(p *store.Project) *store.Workflow {
	all, err := p.List()
	if err != nil || len(all) == 0 {
		return nil
	}
	w, err := p.Workflow(all[0].ID)
	if err != nil {
		return nil
	}
	// Short enough for 80 columns with an id: `flowstate list` has the others.
	e.tell("the most recent workflow: %s", w.ID)
	return w
}

// looked is what a look shows of w: its checkpoint, events and machine,
// and its timeline with what its running agents spent so far.
type looked struct {
	doc, events []byte
	machine     *machine.Machine
	timeline    timeline.Timeline
	stuck       time.Duration
	now         time.Time
}

func (e *env) run(w *store.Workflow) (*looked, error) {
	doc, m, err := sm.Load(w)
	if err != nil {
		return nil, err
	}
	events, err := w.ReadEvents()
	if err != nil {
		return nil, err
	}
	stuck, err := e.envDuration("FLOWSTATE_STUCK_AFTER", orchestrate.DefaultStuckAfter)
	if err != nil {
		return nil, err
	}
	r := &looked{doc: doc, events: events, machine: m, stuck: stuck, now: time.Now()}
	in := timeline.Input{ID: w.ID, Checkpoint: doc, Events: events, Initial: m.Initial, Now: r.now, StuckAfter: stuck}
	r.timeline = timeline.Build(in)
	if in.Workers = promptedWorkers(w, r.timeline); len(in.Workers) > 0 {
		r.timeline = timeline.Build(in)
	}
	liveUsage(&r.timeline)
	return r, nil
}

// promptedWorkers names the worker of each agent at work that no event
// of its own names yet (its stop will): the worker whose artifact the
// prompt its transcript begins with gives, as the hooks recognise it.
// SubagentStart, which recorded its start, comes before Claude Code
// writes that prompt. Read as liveUsage reads the transcript.
func promptedWorkers(w *store.Workflow, t timeline.Timeline) map[string]string {
	out := map[string]string{}
	for _, a := range t.Agents {
		if a.Worker != "" || a.ID == "" || !a.End.IsZero() || !agentTranscript(a.Transcript) {
			continue
		}
		head, err := fsx.ReadPrefix(a.Transcript, usage.MaxPromptHead)
		prompt, ok := usage.Prompt(head)
		if err != nil || !ok {
			continue
		}
		if k, ok := orchestrate.AgentOf(w, a.Type, prompt); ok && k.Worker != "" {
			out[a.ID] = k.Worker
		}
	}
	return out
}

// liveUsage reads what each running agent spent so far from its
// transcript, which SubagentStart recorded. The path comes from the event
// log, which a cloned repository may carry: only a file named as Claude
// Code names an agent's transcript is read, never a FIFO or device, and
// only the usage is taken from it.
func liveUsage(t *timeline.Timeline) {
	for i := range t.Agents {
		a := &t.Agents[i]
		if a.Measured || !a.End.IsZero() || !agentTranscript(a.Transcript) {
			continue
		}
		f, err := fsx.OpenRegular(a.Transcript)
		if err != nil {
			continue
		}
		got, err := usage.ScanAgent(io.LimitReader(f, usage.MaxTranscript))
		f.Close()
		if err == nil {
			a.Usage, a.Requests, a.ToolUses, a.Model = got.Usage, got.Requests, got.ToolUses, got.Model
		}
	}
}

func agentTranscript(path string) bool {
	return filepath.IsAbs(path) && strings.HasPrefix(filepath.Base(path), "agent-") && strings.HasSuffix(path, ".jsonl") &&
		filepath.Base(filepath.Dir(path)) == "subagents"
}

// settings is the project's settings file (usage.SettingsFile), nil when
// it has none.
func (e *env) settings() ([]byte, error) {
	p, err := e.Project()
	if err != nil {
		return nil, nil
	}
	b, err := fsx.ReadRegular(filepath.Join(p.Dir, filepath.FromSlash(usage.SettingsFile)), limit.Max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// prices is the project's price table (usage.SettingsFile), nil when it
// has none. A table that cannot be used is said once on stderr: the
// tokens are shown all the same.
func (e *env) prices() *usage.Prices {
	b, err := e.settings()
	if b == nil && err == nil {
		return nil
	}
	var prices *usage.Prices
	if err == nil {
		prices, err = usage.ParseSettings(b)
	}
	if err != nil {
		e.warn("no money shown: %v", err)
	}
	return prices
}

// budget is a workflow's own spend limit as given (--budget AMOUNT), or
// none: usable with the project's prices.
func (e *env) budget(amount string) (usage.Budget, error) {
	if amount == "" {
		return usage.Budget{}, nil
	}
	b, err := usage.ParseBudget(amount)
	if err != nil {
		return b, fail.Usagef("--budget: %v", err)
	}
	l, err := e.limits()
	if err == nil {
		err = b.Check(l.Prices)
	}
	if err != nil && fail.Code(err) != fail.Usage {
		err = fail.Usagef("--budget: %v", err)
	}
	return b, err
}

// limits are the project's spend limit and prices (sm.Limits), which the
// phase steps and sm-transition hold a workflow against. A settings file
// that cannot be used is exit 2: a limit is never silently dropped.
func (e *env) limits() (sm.Limits, error) {
	b, err := e.settings()
	if b == nil || err != nil {
		return sm.Limits{}, err
	}
	return sm.LimitsOf(b)
}

// report writes the HTML page of w's run (lib/report) to out (--output).
func (e *env) report(w *store.Workflow, out string) error {
	r, err := e.run(w)
	if err != nil {
		return err
	}
	p, err := e.Project()
	if err != nil {
		return err
	}
	if out == "" && e.terminal() {
		out = w.ID + ".html"
	}
	dir := e.Cwd
	if out != "" {
		dir = filepath.Dir(e.path(out))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fail.Usagef("workflow %s: cannot write the report to %s: the directory %s does not exist; create it, or give another -o", w.ID, out, dir)
		}
	}
	prices := e.prices()
	in := report.Input{
		Run: r.timeline, Scope: checkpoint.HeadOf(r.doc).Scope, Prices: prices,
		Generated: r.now, Version: version.Version, Project: p.Dir, Page: dir,
		Notes: status.Notes(w.ID, r.doc, &r.timeline, prices, hints(w)),
		Exists: func(path string) bool {
			fi, err := os.Stat(path)
			return err == nil && fi.Mode().IsRegular()
		},
	}
	var page bytes.Buffer
	if err := report.Render(&page, in); err != nil {
		return err
	}
	if out == "" {
		_, err := e.Stdout.Write(page.Bytes())
		return err
	}
	if err := renameio.WriteFile(e.path(out), page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("workflow %s: write the report: %w", w.ID, err)
	}
	e.tell("workflow %s: report written to %s", w.ID, out)
	return nil
}
