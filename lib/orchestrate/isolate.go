package orchestrate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/agentrun"
	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/worktree"
)

// A state whose definition says "isolation": "worktree" runs each of its
// workers in a git worktree of its own (the Agent tool's isolation), so
// that two workers of one wave never write over each other: the plan
// hands an isolated batch out to the task block of the command's ## work
// section that asks for worktrees (ISOLATED_COUNT, not WORKER_COUNT), each
// worker writes its artifact inside its worktree (the SubagentStop hook,
// or the next verify, brings it into the project), and after the wave
// the verify commits what each worker left and merges their branches
// into the working branch in plan order (integrate; the git side is
// lib/worktree). The next wave starts from the merged tree.

// isolation is how a state's workers run, decided at the state's first
// plan (phase_data.<state>.isolation) and kept for the state: so a
// project that cannot isolate says so once.
type isolation struct {
	Worktrees bool      `json:"worktrees"`
	Branch    string    `json:"branch,omitempty"` // the working branch their branches merge into
	Reason    string    `json:"reason,omitempty"` // why they share the project's tree
	At        time.Time `json:"at"`
}

// readIsolation reads the current state's isolation, its workers'
// worktrees and what became of their branches.
func (v *view) readIsolation() {
	v.trees, v.merges = map[string]string{}, map[string]worktree.Merge{}
	if raw := gjson.GetBytes(v.doc, checkpoint.PhaseData(v.state, checkpoint.PhaseIsolation)); raw.IsObject() {
		var iso isolation
		if json.Unmarshal([]byte(raw.Raw), &iso) == nil {
			v.iso = &iso
		}
	}
	gjson.GetBytes(v.doc, checkpoint.PhaseData(v.state, checkpoint.PhaseWorktrees)).ForEach(func(id, path gjson.Result) bool {
		v.trees[id.String()] = path.String()
		return true
	})
	gjson.GetBytes(v.doc, checkpoint.PhaseData(v.state, checkpoint.PhaseMerges)).ForEach(func(id, raw gjson.Result) bool {
		var m worktree.Merge
		if json.Unmarshal([]byte(raw.Raw), &m) == nil {
			v.merges[id.String()] = m
		}
		return true
	})
}

// isolated reports whether the current state's workers run in worktrees.
func (v *view) isolated() bool { return v.iso != nil && v.iso.Worktrees }

// settled reports whether worker id's latest attempt is settled: merged,
// empty, or given up and kept as a patch. A conflict whose branch is
// still there waits (a person may merge it by hand).
func (v *view) settled(id string) bool {
	m, ok := v.merges[id]
	return ok && m.Worktree == v.trees[id] && (m.Done() || m.Status == worktree.Conflict && m.Patch != "")
}

// unmerged reports a worker of an isolated state that completed and
// whose branch is not settled yet: its state is not done.
func (v *view) unmerged() bool {
	if !v.isolated() {
		return false
	}
	return slices.ContainsFunc(v.workers, func(wk Worker) bool { return v.completed(v.state, wk.ID) && !v.settled(wk.ID) })
}

// isolate decides whether the batch about to be handed out runs in
// worktrees: when the state's definition asks for it, the state has more
// than one worker, the workflow is not sequential (one worker at a time
// overwrites nobody) and the project is a git repository on a branch
// (else the workers share the tree, which the first plan records and
// says, once). Before each isolated batch the working tree must hold
// nothing of the person's that a merge would go over, and be on the
// branch the state merges into: else the step is refused, and nothing
// is handed out.
func (v *view) isolate(out *Output) (bool, error) {
	if !v.role.Isolated() || v.sequential || len(v.workers) < 2 || v.iso != nil && !v.iso.Worktrees {
		return false, nil
	}
	repo, err := worktree.Open(v.w.P.Dir)
	var refused *worktree.Refusal
	switch {
	case errors.As(err, &refused) && v.iso != nil:
		return false, fail.Usagef("workflow %s, state %s runs its workers in git worktrees merged into branch %s, and %s; restore the repository, then %s",
			v.w.ID, v.state, v.iso.Branch, refused, ResumeHint(v.w))
	case errors.As(err, &refused):
		out.warn(note, "workflow %s, state %s: its workers share the project's tree rather than a git worktree each, as its definition asks: %s", v.w.ID, v.state, refused)
		return false, v.decide(isolation{Reason: refused.Reason})
	case err != nil:
		return false, fmt.Errorf("workflow %s, state %s: %w", v.w.ID, v.state, err)
	}
	if err := v.clean(repo); err != nil {
		return false, err
	}
	if v.iso == nil {
		return true, v.decide(isolation{Worktrees: true, Branch: repo.Branch})
	}
	return true, nil
}

// clean refuses a working tree a wave's merges must not go over: a
// merge in progress, changes of the person's (what flowstate and Claude
// Code keep aside), another branch than the state's.
func (v *view) clean(repo *worktree.Repo) error {
	if v.iso != nil && v.iso.Branch != repo.Branch {
		return fail.Refusedf("workflow %s, state %s merges its workers' branches into %s, and %s is on %s now; check out %s, then %s",
			v.w.ID, v.state, v.iso.Branch, repo.Dir, repo.Branch, v.iso.Branch, ResumeHint(v.w))
	}
	if head := repo.MergeHead(); head != "" {
		return fail.Refusedf("workflow %s, state %s: a merge is in progress in %s; finish it (git commit) or abort it (git merge --abort), then %s",
			v.w.ID, v.state, repo.Dir, ResumeHint(v.w))
	}
	dirty, err := repo.Dirty()
	if err != nil || len(dirty) == 0 {
		return err
	}
	return fail.Refusedf("workflow %s, state %s runs each worker in a git worktree of its own and merges their branches into %s, which must hold no uncommitted change of yours for a merge to go over, and %s has: %s; commit them, or put them aside (git stash -u) and back after the workflow (git stash pop), then %s",
		v.w.ID, v.state, repo.Branch, repo.Dir, changes(dirty), ResumeHint(v.w))
}

// changes names at most ten changes of the working tree.
func changes(cs []worktree.Change) string {
	var names []string
	for i, c := range cs {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(cs)-10))
			break
		}
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

// decide records how the state's workers run, with an event.
func (v *view) decide(iso isolation) error {
	err := v.w.Update(func(tx *store.Tx) error {
		iso.At = tx.Now.UTC().Truncate(time.Millisecond)
		tx.Event("isolation", map[string]any{"state": v.state, "worktrees": iso.Worktrees, "branch": iso.Branch, "reason": iso.Reason})
		return set(tx, checkpoint.PhaseData(v.state, checkpoint.PhaseIsolation), iso)
	})
	if err == nil {
		v.iso = &iso // the brief written after it names paths for the workers' trees
	}
	return err
}

// collect learns where each worker of an isolated batch worked (the
// hooks' records, or else the worktree that holds its artifact) and
// brings an artifact still in its worktree into the project, where the
// verify reads it: the SubagentStop hook does that as the agent stops,
// and this is the fallback. An artifact is never written over.
func (v *view) collect(targets []Worker) error {
	data, err := v.w.ReadEvents()
	if err != nil {
		return fmt.Errorf("workflow %s: read events: %w", v.w.ID, err)
	}
	recorded := agentrun.Worktrees(agentrun.Parse(data))
	var trees []worktree.Tree
	for _, wk := range targets {
		rel, err := filepath.Rel(v.w.P.Dir, wk.Output)
		if err != nil {
			continue
		}
		wt := recorded[wk.ID].Worktree
		if wt == "" && !delivered(wk) {
			if trees == nil {
				trees = v.agentTrees()
			}
			wt = holding(trees, rel)
		}
		if wt == "" {
			continue
		}
		v.trees[wk.ID] = wt
		if err := Bring(v.w.P, wt, wk.Output); err != nil {
			return err
		}
	}
	return nil
}

// agentTrees lists the worktrees Claude Code made in the project.
func (v *view) agentTrees() []worktree.Tree {
	repo, err := worktree.Open(v.w.P.Dir)
	if err != nil {
		return []worktree.Tree{}
	}
	all, err := repo.Worktrees()
	if err != nil {
		return []worktree.Tree{}
	}
	var out []worktree.Tree
	for _, t := range all {
		if worktree.Of(v.w.P.Dir, t.Path) == filepath.Clean(t.Path) {
			out = append(out, t)
		}
	}
	return out
}

// holding is the worktree among trees that holds the file rel.
func holding(trees []worktree.Tree, rel string) string {
	for _, t := range trees {
		if _, err := os.Lstat(filepath.Join(t.Path, rel)); err == nil {
			return t.Path
		}
	}
	return ""
}

// plainFile is root/rel when it is a regular file reached through no
// link: a worktree is the agent's to shape, and a link there (the file,
// or a directory on the way) would have a rename move a file from
// anywhere it points.
func plainFile(root, rel string) (string, bool) {
	path := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		path = filepath.Join(path, part)
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return "", false
		}
	}
	fi, err := os.Lstat(path)
	return path, err == nil && fi.Mode().IsRegular()
}

// Bring moves the file an isolated agent wrote in worktree wt in place
// of artifact (the project's path) to the project: a worktree's files are
// its branch's, and an artifact is the workflow's. A file already at
// artifact stays, and so does the worktree's then, as does one that is
// not a plain file (plainFile).
func Bring(p *store.Project, wt, artifact string) error {
	rel, err := filepath.Rel(p.Dir, artifact)
	if err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	src, ok := plainFile(wt, rel)
	if !ok {
		return nil
	}
	if _, err := os.Lstat(artifact); err == nil {
		return nil
	}
	if err := ensureSpecDir(p, filepath.Dir(artifact)); err != nil {
		return err
	}
	if err := os.Rename(src, artifact); err != nil {
		return fmt.Errorf("bring %s from the worktree %s: %w", rel, wt, err)
	}
	return nil
}

// maxLaunches bounds how often an isolated worker whose agent never
// started is launched again; past it, it is checked, and fails.
const maxLaunches = 3

// unstarted takes out of targets, the workers a verify of an isolated
// batch checks, those whose Agent call failed before their agent ran
// (the PostToolUseFailure hook's record): Claude Code makes the
// worktrees of a batch's agents at once, and git (2.39) can fail one
// that reads another's half-written entry ("failed to read
// .../commondir"). Such a worker delivered nothing and was never
// started; the next plan hands it out again, rather than the command
// stopping on it.
func (v *view) unstarted(runs agentrun.Runs, targets []Worker, pl plan, out *Output) []Worker {
	if !pl.Isolated {
		return targets
	}
	var keep []Worker
	var again []string
	for _, wk := range targets {
		_, w := runs.Worker(wk.ID, v.w.P.Now(), time.Hour)
		if w.NeverStarted && !delivered(wk) && !w.Launched.Before(pl.At) && w.Launches < maxLaunches {
			again = append(again, wk.ID)
			if err := v.dropUnmade(w.Unmade); err != nil {
				out.warn(note, "workflow %s, %s: the branch of the worktree Claude Code failed to make for %s is left: %v", v.w.ID, v.state, wk.ID, err)
			}
			continue
		}
		keep = append(keep, wk)
	}
	if len(again) > 0 {
		out.warn(note, "workflow %s, %s: the agent of %s never started (its Agent call failed, as when Claude Code cannot make a worktree); launched again",
			v.w.ID, v.state, strings.Join(again, ", "))
	}
	return keep
}

// dropUnmade removes the empty branch of a worktree Claude Code failed
// to make, which would otherwise be left behind.
func (v *view) dropUnmade(wt string) error {
	if wt == "" {
		return nil
	}
	repo, err := worktree.Open(v.w.P.Dir)
	if err != nil {
		return err
	}
	return repo.DropUnmade(wt)
}

// integrated is what merging a wave came to.
type integrated struct {
	warnings []Warning
	reopened bool // a conflicting worker runs again (on_conflict redo)
}

// integrate settles the branches of the current state's workers, if it
// runs them in worktrees: a failed worker's attempt is kept as a patch
// and its worktree and branch removed (its worker runs again in a fresh
// one); the completed workers' branches not merged yet are merged in
// plan order, each merge recorded before the next. It runs before any
// plan and after each verify, so a wave is merged before the next is
// handed out and a run killed between two merges is finished by the
// next step, each merge made once.
//
// A working tree that changed while the workers ran is merged over by
// nothing: the workers that ran shell commands count as failed (they may
// have written outside their worktrees) and the step stops, naming the
// files. A conflict is aborted; with on_conflict redo its worker runs
// again on the merged tree, told of the conflict; else the step waits
// for a person to merge the branch by hand.
func integrate(w *store.Workflow) (integrated, error) {
	var res integrated
	v, err := load(w)
	if err != nil || !v.hasRole || !v.isolated() {
		return res, err
	}
	land, drop := v.unsettledBranches()
	if len(land)+len(drop) == 0 {
		return res, nil
	}
	repo, err := worktree.Open(w.P.Dir)
	if err != nil {
		return res, fmt.Errorf("workflow %s, state %s runs its workers in git worktrees: %w", w.ID, v.state, err)
	}
	for _, b := range drop {
		if err := v.discard(repo, b, worktree.Discarded, v.record(v.state, b.Worker).Error); err != nil {
			return res, err
		}
	}
	if len(land) == 0 {
		return res, nil
	}
	// A merge of ours cut short is no stray change of the tree.
	if err := repo.AbortInterrupted(land); err != nil {
		return res, err
	}
	if err := v.strays(repo, land); err != nil {
		return res, err
	}
	var earlier []worktree.Merge
	for _, wk := range v.workers {
		if m := v.merges[wk.ID]; m.Status == worktree.Merged {
			earlier = append(earlier, m)
		}
	}
	conflict, err := repo.MergeWave(worktree.Wave{Workflow: w.ID, State: v.state}, land, earlier, v.keep)
	if err != nil || conflict == nil {
		return res, err
	}
	return v.conflicted(repo, *conflict)
}

// unsettledBranches are the branches of the state's workers not settled
// yet, in plan order: the completed workers' to merge, the failed
// workers' attempts to keep and drop.
func (v *view) unsettledBranches() (land, drop []worktree.Branch) {
	for _, wk := range v.workers {
		b := worktree.Branch{Worker: wk.ID, Label: wk.Label, Worktree: v.trees[wk.ID]}
		switch st := v.record(v.state, wk.ID).Status; {
		case v.settled(wk.ID):
		case st == checkpoint.WorkerCompleted:
			land = append(land, b)
		case st == checkpoint.WorkerFailed && b.Worktree != "":
			drop = append(drop, b)
		}
	}
	return land, drop
}

// keep records one worker's merge, and its event, in one write; an
// attempt kept as a patch is listed in the state's attempts too, which
// outlive the merge of its worker's next attempt.
func (v *view) keep(m worktree.Merge) error {
	v.merges[m.Worker] = m
	return v.w.Update(func(tx *store.Tx) error {
		f := map[string]any{"state": v.state, "worker_id": m.Worker, "status": m.Status}
		for k, s := range map[string]string{"worktree": m.Worktree, "branch": m.Branch, "commit": m.Commit, "merge": m.Merge, "patch": m.Patch} {
			if s != "" {
				f[k] = s
			}
		}
		for k, l := range map[string][]string{"files": m.Files, "with": m.With} {
			if len(l) > 0 {
				f[k] = l
			}
		}
		tx.Event("merge", f)
		if m.Patch != "" {
			var kept []worktree.Merge
			raw := gjson.GetBytes(tx.Checkpoint, checkpoint.PhaseData(v.state, checkpoint.PhaseAttempts))
			if err := json.Unmarshal([]byte(cmp.Or(raw.Raw, "[]")), &kept); err != nil {
				return fmt.Errorf("workflow %s: %s: %w", v.w.ID, checkpoint.PhaseData(v.state, checkpoint.PhaseAttempts), err)
			}
			if !slices.ContainsFunc(kept, func(k worktree.Merge) bool { return k.Patch == m.Patch }) {
				if err := set(tx, checkpoint.PhaseData(v.state, checkpoint.PhaseAttempts), append(kept, m)); err != nil {
					return err
				}
			}
		}
		return set(tx, checkpoint.PhaseData(v.state, checkpoint.PhaseMerges, m.Worker), m)
	})
}

// discard keeps a worker's attempt (its work as a patch, its summary
// beside it) in the spec directory's attempts/, removes its worktree and
// branch, and records it with status (discarded, or a conflict given
// up) and why.
func (v *view) discard(repo *worktree.Repo, b worktree.Branch, status, why string) error {
	wave := worktree.Wave{Workflow: v.w.ID, State: v.state}
	patch, branch, err := repo.Patch(wave, b)
	if err != nil {
		return fmt.Errorf("workflow %s, state %s: keep %s's attempt: %w", v.w.ID, v.state, b.Worker, err)
	}
	m := v.merges[b.Worker]
	if m.Worktree != b.Worktree || m.Status != status {
		m = worktree.Merge{Worker: b.Worker, Label: b.Label, Worktree: b.Worktree, Branch: branch, Status: status, At: v.w.P.Now().UTC().Truncate(time.Millisecond)}
	}
	// An attempt that changed nothing (Claude Code removed its worktree)
	// leaves its artifact set aside and no patch.
	if m.Patch, err = v.attempt(b.Worker, patch); err != nil {
		return err
	}
	m.Reason = why
	if err := v.keep(m); err != nil {
		return err
	}
	return repo.Remove(b, branch)
}

// attempt keeps a worker's attempt in attempts/: its artifact, set
// aside from where its next attempt writes, as <worker>.<n>.<ext>, and
// its changes, if it made any, as <worker>.<n>.patch. It returns the
// patch's path from the project's root, as the records keep it ("" for
// none).
func (v *view) attempt(id string, patch []byte) (string, error) {
	dir := filepath.Join(v.facts.SpecDir, "attempts")
	if err := ensureSpecDir(v.w.P, dir); err != nil {
		return "", err
	}
	out := v.record(v.state, id).OutputPath
	base := ""
	for n := 1; base == ""; n++ {
		b := filepath.Join(dir, fmt.Sprintf("%s.%d", id, n))
		_, errPatch := os.Lstat(b + ".patch")
		_, errOut := os.Lstat(b + filepath.Ext(out))
		if os.IsNotExist(errPatch) && os.IsNotExist(errOut) {
			base = b
		}
	}
	if _, err := os.Lstat(out); out != "" && err == nil {
		if err := os.Rename(out, base+filepath.Ext(out)); err != nil {
			return "", fmt.Errorf("set aside %s: %w", out, err)
		}
	}
	if len(patch) == 0 {
		return "", nil
	}
	if err := fsx.WriteFile(base+".patch", patch); err != nil {
		return "", err
	}
	return fromProject(v.w, base+".patch"), nil
}

// strays stops a wave whose working tree changed while its workers ran:
// an isolated worker writes nothing outside its worktree (Claude Code
// refuses its Write and Edit there; a shell command is not held), so a
// change there may be one's, and a merge would go over it. The workers
// about to be merged that ran shell commands (the hooks' records; a
// worker with none is not known not to) count as failed and run again,
// their attempts kept; the others wait for the tree to be clean.
func (v *view) strays(repo *worktree.Repo, land []worktree.Branch) error {
	dirty, err := repo.Dirty()
	if err != nil || len(dirty) == 0 {
		return err
	}
	data, err := v.w.ReadEvents()
	if err != nil {
		return err
	}
	ran := agentrun.Worktrees(agentrun.Parse(data))
	var suspects []string
	var recs []supervisor.Record
	msg := fmt.Sprintf("files of the project's tree changed while the workers of %s ran in their worktrees: %s", v.state, changes(dirty))
	for _, b := range land {
		if sh := ran[b.Worker].Shell; sh != nil && !*sh {
			continue
		}
		suspects = append(suspects, b.Worker)
		rec := v.record(v.state, b.Worker)
		rec.Status, rec.Error = checkpoint.WorkerFailed, strayed+msg+", and it ran shell commands"
		recs = append(recs, rec)
	}
	// Those an earlier run of this check failed are named again: the
	// person reads one message.
	for _, wk := range v.workers {
		if m, ok := v.merges[wk.ID]; ok && m.Status == worktree.Discarded && strings.HasPrefix(m.Reason, strayed) && !v.completed(v.state, wk.ID) && !slices.Contains(suspects, wk.ID) {
			suspects = append(suspects, wk.ID)
		}
	}
	if err := v.fail(recs, msg); err != nil {
		return err
	}
	for _, b := range land {
		if slices.ContainsFunc(recs, func(r supervisor.Record) bool { return r.WorkerID == b.Worker }) {
			if err := v.discard(repo, b, worktree.Discarded, strayed+msg); err != nil {
				return err
			}
		}
	}
	who := "none of its workers ran shell commands, so none is known to have written them"
	slices.Sort(suspects)
	if len(suspects) > 0 {
		who = strings.Join(suspects, ", ") + " ran shell commands and may have written them: " + plural(len(suspects), "it counts", "they count") + " as failed, " + plural(len(suspects), "its attempt", "their attempts") + " kept in " +
			filepath.Join(fromSpec(v), "attempts") + ", and " + plural(len(suspects), "runs", "run") + " again"
	}
	return fail.Refusedf("workflow %s: %s; %s. flowstate merges nothing over them: look at them (git status, git diff), then commit, put aside (git stash -u) or undo them, and %s",
		v.w.ID, msg, who, ResumeHint(v.w))
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// strayed begins the error of a worker that may have written outside its
// worktree.
const strayed = "may have written outside its worktree: "

// fromSpec is the workflow's spec directory as shown to a person.
func fromSpec(v *view) string { return fromProject(v.w, v.facts.SpecDir) }

// fail records recs, workers of the current state found failed after
// their check, and the state's error.
func (v *view) fail(recs []supervisor.Record, msg string) error {
	if len(recs) > 0 {
		err := v.w.Update(func(tx *store.Tx) error {
			if err := supervisor.UpsertTx(tx, v.role.Key(), recs...); err != nil {
				return err
			}
			for _, rec := range recs {
				tx.Event("worker", map[string]any{"state": v.state, "worker_id": rec.WorkerID, "status": rec.Status})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return sm.Fail(v.w, msg)
}

// conflicted acts on a merge that conflicted (and was aborted): with
// on_conflict redo, while the state has retries left, the worker's
// attempt is kept (patch and artifact, in attempts/) and its worker runs
// again on the merged tree, its brief naming the conflict; else the step
// waits for a person to merge the branch by hand.
func (v *view) conflicted(repo *worktree.Repo, m worktree.Merge) (integrated, error) {
	var res integrated
	with := "the workers merged before it"
	if len(m.With) > 0 {
		with = strings.Join(m.With, ", ")
	}
	what := fmt.Sprintf("merge conflict in %s: %s's branch %s changes %s as %s did", v.state, m.Worker, m.Branch, strings.Join(m.Files, ", "), with)
	if v.role.ConflictPolicy() == machine.ConflictRedo && v.cv.Error.Retries[v.state] < sm.DefaultMaxRetries {
		rec := v.record(v.state, m.Worker)
		rec.Status, rec.Error = checkpoint.WorkerFailed, what
		if err := v.fail([]supervisor.Record{rec}, what); err != nil {
			return res, err
		}
		if err := v.discard(repo, worktree.Branch{Worker: m.Worker, Label: m.Label, Worktree: m.Worktree}, worktree.Conflict, what); err != nil {
			return res, err
		}
		if _, err := sm.Retry(v.w, sm.DefaultMaxRetries); err != nil {
			return res, err
		}
		res.reopened = true
		res.warnings = append(res.warnings, Warning{kind: note, Text: fmt.Sprintf("workflow %s: %s; its merge was aborted (nothing is half-merged), its attempt kept in %s, and %s runs again on the merged tree",
			v.w.ID, what, v.merges[m.Worker].Patch, m.Worker)})
		return res, nil
	}
	if err := sm.Fail(v.w, what); err != nil {
		return res, err
	}
	return res, fail.Waitingf("workflow %s: %s; its merge was aborted, nothing is half-merged, and the branches after it wait. Merge it by hand in %s: git merge %s, resolve %s, git commit; then %s merges the rest",
		v.w.ID, what, repo.Dir, m.Branch, strings.Join(m.Files, ", "), ResumeHint(v.w))
}

// conflicts are the lines the brief gives about the workers of the
// state that run again after a merge conflict: what they met and where
// both workers' files are, so that the next attempt keeps the other's
// changes.
func (v *view) conflicts() []string {
	var out []string
	for _, wk := range v.workers {
		m, ok := v.merges[wk.ID]
		if !ok || m.Status != worktree.Conflict || m.Patch == "" || v.completed(v.state, wk.ID) {
			continue
		}
		var theirs []string
		for _, id := range m.With {
			if p := v.record(v.state, id).OutputPath; p != "" {
				theirs = append(theirs, id+"'s "+p)
			}
		}
		// The worker reads them from its worktree: in the project.
		patch := m.Patch
		if !filepath.IsAbs(patch) {
			patch = filepath.Join(v.w.P.Dir, patch)
		}
		summary := strings.TrimSuffix(patch, ".patch") + filepath.Ext(wk.Output)
		out = append(out, kv.OneLine(fmt.Sprintf("%s (%s): its earlier attempt changed %s as %s did, and could not be merged. Read %s and its own earlier %s; its earlier changes are %s. Do it again on the tree as it is now, which holds the others' changes: keep them.",
			wk.ID, wk.Label, strings.Join(m.Files, ", "), strings.Join(m.With, ", "), strings.Join(theirs, " and "), summary, patch)))
	}
	return out
}
