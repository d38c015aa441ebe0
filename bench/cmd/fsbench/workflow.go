package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The 20-block workflow: what a slash command costs in processes. Claude
// Code 2.1.328 runs each bash block as its own shell, `bash -c 'source
// <snapshot> 2>/dev/null || true && eval '<block>' && pwd -P >| <file>'`
// (seen with the real CLI), so a block pays for a shell, the snapshot of
// the user's shell, and every flowstate call in it. The floor is the same
// script with a no-op binary in flowstate's place: the shells and process
// starts no state tool can avoid. flowstate's target is 1.25× the floor.

// floorTarget is the README's target for the workflow: flowstate within
// this factor of the floor.
const floorTarget = 1.25

// route is the workflow's states, one transition per block from the second.
var route = []string{"research", "plan", "implement", "test", "debug", "test", "document", "complete"}

// flowstateBlocks are the 20 blocks calling $FS. A block loads the state,
// moves on (the first eight), stores two values in one call (the batch
// form), and every other block updates the checkpoint: in the same call
// as the transition where there is one (sm-transition --checkpoint).
func flowstateBlocks() []string {
	blocks := []string{`"$FS" sm-init --workflow wf --description "20-block benchmark" --command bench --scope full-implementation >/dev/null`}
	for i := 1; i < 20; i++ {
		var b strings.Builder
		b.WriteString(`out=$("$FS" state-load) && eval "$out"` + "\n")
		update := i%2 == 0
		switch {
		case i <= len(route) && update:
			fmt.Fprintf(&b, `"$FS" sm-transition %s --checkpoint '{"phase_data": {"block%d": {"n": %d}}}'`+"\n", route[i-1], i, i)
		case i <= len(route):
			fmt.Fprintf(&b, `"$FS" sm-transition %s`+"\n", route[i-1])
		case update:
			fmt.Fprintf(&b, `"$FS" checkpoint-set phase_data.block%d.n %d`+"\n", i, i)
		}
		fmt.Fprintf(&b, "\"$FS\" state-append --stdin <<'EOF'\nK%dA=value a of block %d\nK%dB=value b of block %d\nEOF\n", i, i, i, i)
		blocks = append(blocks, b.String())
	}
	return blocks
}

// Each block of the libraries' workflow starts by defining their
// functions: sourcing the bash libraries as their commands do, or with
// flowstate compat (docs/migrating-from-bash.md).
const (
	libsPrelude   = `source "$LIBS/core/state-persistence.sh"; source "$LIBS/workflow/workflow-state-machine.sh"; source "$LIBS/workflow/checkpoint-utils.sh"` + "\n"
	compatPrelude = `eval "$("$FS" compat)"` + "\n"
)

// libsBlocks are the same 20 blocks with the libraries' functions,
// defined by prelude.
func libsBlocks(prelude string) []string {
	blocks := []string{prelude + `init_workflow_state wf >/dev/null; sm_init "20-block benchmark" bench full-implementation 2 '["a","b"]' >/dev/null`}
	for i := 1; i < 20; i++ {
		var b strings.Builder
		b.WriteString(prelude + "load_workflow_state wf false\n")
		if i <= len(route) {
			fmt.Fprintf(&b, "sm_transition %s\n", route[i-1])
		}
		fmt.Fprintf(&b, "append_workflow_state_bulk <<'EOF'\nK%dA=value a of block %d\nK%dB=value b of block %d\nEOF\n", i, i, i, i)
		if i%2 == 0 {
			fmt.Fprintf(&b, "save_checkpoint bench benchmark '{\"block\": %d}' >/dev/null\n", i)
		}
		blocks = append(blocks, b.String())
	}
	return blocks
}

// tool is one way to run the workflow.
type tool struct {
	name   string
	blocks []string
	env    []string
}

// runBlocks runs the blocks, each as `bash -c`, in a fresh project, and
// returns the wall time of all of them.
func (b *bench) runBlocks(t tool, rep int) (time.Duration, error) {
	dir := filepath.Join(b.tmp, fmt.Sprintf("wf-%s-%d", t.name, rep))
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
		return 0, err
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.tmp, "CLAUDE_PROJECT_DIR=" + dir, "FLOWSTATE_WORKFLOW=wf"}, t.env...)
	snapshot := filepath.Join(b.tmp, "snapshot.sh")
	if err := os.WriteFile(snapshot, []byte(snapshotText), 0o600); err != nil {
		return 0, err
	}
	cwd := filepath.Join(b.tmp, "cwd")
	start := time.Now()
	for i, block := range t.blocks {
		wrapped := fmt.Sprintf("source %s 2>/dev/null || true && eval %s && pwd -P >| %s", snapshot, shellQuote(block), cwd)
		cmd := exec.Command("bash", "-c", wrapped)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("%s, block %d: %v\n%s", t.name, i+1, err, out)
		}
	}
	return time.Since(start), nil
}

// snapshotText stands for the shell snapshot Claude Code sources before
// every block: a bare user's options, aliases and PATH.
const snapshotText = `# shell snapshot (as Claude Code writes one for a bare user)
unalias -a 2>/dev/null || true
shopt -s expand_aliases
set -o braceexpand -o hashall -o interactive-comments
alias ll='ls -l'
export PATH="$PATH"
`

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Rows of the workflow table that the summary lines read.
const (
	idleRow      = 1
	flowstateRow = 2
)

// workflow times the 20-block workflow with flowstate, with the no-op
// binary (the floor), with flowstate's idle twin (its packages linked and
// initialised, no work), with compat and, when given, the bash libraries:
// reps runs of each, interleaved, and prints medians and ratios to the
// floor.
func (b *bench) workflow(reps int) error {
	tools := []tool{
		{name: "floor (no-op binary)", blocks: flowstateBlocks(), env: []string{"FS=" + b.noop}},
		{name: "flowstate, idle", blocks: flowstateBlocks(), env: []string{"FS=" + b.idle}},
		{name: "flowstate", blocks: flowstateBlocks(), env: []string{"FS=" + b.flowstate}},
		{name: "flowstate compat", blocks: libsBlocks(compatPrelude), env: []string{"FS=" + b.flowstate, "FLOWSTATE_BIN=" + b.flowstate}},
	}
	if b.libs != "" {
		tools = append(tools, tool{name: "bash libraries", blocks: libsBlocks(libsPrelude), env: []string{"LIBS=" + b.libs}})
	}
	times := make([][]time.Duration, len(tools))
	for rep := range reps {
		for i, t := range tools {
			d, err := b.runBlocks(t, rep)
			if err != nil {
				return err
			}
			times[i] = append(times[i], d)
		}
	}
	calls := 0
	for _, block := range flowstateBlocks() {
		calls += strings.Count(block, `"$FS"`)
	}
	fmt.Printf("\n20-block workflow: 20 `bash -c` blocks, %d flowstate calls (init, 8 transitions, 4 of them with a checkpoint update, 5 more checkpoint updates, 19 loads, 19 batch appends); median of %d runs\n", calls, reps)
	floor := median(times[0])
	for i, t := range tools {
		m := median(times[i])
		fmt.Printf("  %-22s %8s  %.2f× the floor\n", t.name, ms(m), float64(m)/float64(floor))
	}
	verdict := "met"
	if ratio := float64(median(times[flowstateRow])) / float64(floor); ratio > floorTarget {
		verdict = "MISSED"
	}
	idle := median(times[idleRow]) - floor
	fmt.Printf("  of flowstate's %s over the floor, %s (%s a call) is starting a binary of its size before any command runs (flowstate, idle)\n",
		ms(median(times[flowstateRow])-floor), ms(idle), ms(idle/time.Duration(calls)))
	fmt.Printf("  target, as the README states: flowstate within %.2f× the floor: %s\n", floorTarget, verdict)
	return nil
}
