package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/compat"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// compatCommands stand in for the original bash libraries
// (lib/compat; docs/migrating-from-bash.md): their functions, and the
// checkpoint operations of checkpoint-utils.sh the design kept.
func (e *env) compatCommands() []*cli.Command {
	var check checkOptions
	var install string
	return []*cli.Command{
		{
			Name:  "compat",
			Usage: "print bash functions with the original libraries' names, for eval",
			UsageText: `eval "$(flowstate compat)"   (instead of sourcing state-persistence.sh, workflow-state-machine.sh, checkpoint-utils.sh)` + "\n" +
				"flowstate compat --install .claude/lib   (replace the three libraries with files that do so)",
			Description: compat.Help(),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "install", Usage: "write core/state-persistence.sh, workflow/workflow-state-machine.sh and workflow/checkpoint-utils.sh under `DIR` as shims that eval `flowstate compat`, with the libraries' source guards (a file there that differs is kept as NAME.sh.orig); print their paths", Destination: &install},
			},
			Action: func(c *cli.Context) error { return e.compat(c, install) },
		},
		{
			Name:      "checkpoint-replan",
			Usage:     "record a replan of PHASE in the checkpoint's 1.x replan fields, in one locked write; print the new replanning_count",
			UsageText: "flowstate checkpoint-replan PHASE REASON",
			Description: "For checkpoint-utils.sh's checkpoint_increment_replan: adds 1 to replanning_count and\n" +
				"replan_phase_counts.phase_PHASE, sets last_replan_reason and appends {phase, timestamp,\n" +
				"reason} to replan_history. Concurrent calls all count.",
			Flags:  []cli.Flag{e.workflowFlag()},
			Action: e.onWorkflow(e.checkpointReplan, "PHASE", "REASON"),
		},
		{
			Name:      "checkpoint-check",
			Usage:     "check the checkpoint (or the object at --at) as checkpoint-utils.sh did; print errors and warnings, exit 3 on errors",
			UsageText: "flowstate checkpoint-check " + strings.Join(compat.CheckKinds, "|") + " [--at PATH] [--from FILE|-] [--json]",
			Description: "checkpoint: a valid checkpoint, after migration (validate_checkpoint).\n" +
				"resume: safe to resume: tests not failing, no last error, status in_progress, updated at\n" +
				"most 7 days ago, plan file unchanged since save_checkpoint (check_safe_resume_conditions).\n" +
				"iteration: an iteration checkpoint (validate_iteration_checkpoint).\n" +
				"operation: a parallel-operation checkpoint (validate_checkpoint_integrity).\n" +
				"Prints one `error: TEXT` or `warning: TEXT` line per finding, or with --json\n" +
				"{\"valid\": BOOL, \"errors\": [...], \"warnings\": [...]} (empty lists left out).\n" +
				"Exit 0 without errors (warnings allowed), 3 with errors.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "at", Usage: "check the object at this PATH of the checkpoint, e.g. phase_data.named.NAME", Destination: &check.at},
				&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &check.json},
				fromFlag(&check.from), e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.checkpointCheck(c, check) },
		},
		{
			// The functions' own entry point: the shell state comes as
			// options, the answer for the shell goes to fd 3.
			Name:            "compat-call",
			Usage:           "run one function of `flowstate compat` (internal: the functions call it)",
			Hidden:          true,
			SkipFlagParsing: true,
			Action:          e.compatCall,
		},
	}
}

func (e *env) compat(c *cli.Context, install string) error {
	if _, err := args(c); err != nil {
		return err
	}
	if install != "" {
		return e.compatInstall(install)
	}
	dir := ""
	if p, err := e.Project(); err == nil {
		dir = p.Dir // else the functions say why, when called
	}
	e.printf("%s", compat.Script(dir))
	return nil
}

// compatInstall writes the shims under lib, relative to the working
// directory.
func (e *env) compatInstall(lib string) error {
	if !filepath.IsAbs(lib) {
		lib = filepath.Join(e.Cwd, lib)
	}
	wrote, err := compat.Install(lib)
	for _, path := range wrote {
		e.printf("%s\n", path)
	}
	return err
}

func (e *env) compatCall(c *cli.Context) error {
	// The dispatcher names the fd it reads: an fd 3 the caller happens to
	// have open is never written to unasked.
	a := c.Args().Slice()
	if len(a) < 2 || a[0] != "--answer-fd" || a[1] != "3" {
		return fail.Usagef("compat-call is how the functions of `flowstate compat` call the binary; eval \"$(flowstate compat)\" and call them")
	}
	answer := os.NewFile(3, "fd 3")
	if _, err := answer.Stat(); err != nil {
		return fail.Usagef("compat-call --answer-fd 3: fd 3 is not open: %v", err)
	}
	rc := compat.Call(compat.Env{
		Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Answer: answer,
		Getenv: e.Getenv, Cwd: e.Cwd, Now: time.Now,
	}, a[2:])
	if rc != 0 {
		return cli.Exit("", rc)
	}
	return nil
}

func (e *env) checkpointReplan(w *store.Workflow, a []string) error {
	count, err := compat.Replan(w, a[0], a[1])
	if err == nil {
		e.printf("%d\n", count)
	}
	return err
}

// checkOptions are checkpoint-check's flags.
type checkOptions struct {
	at, from string
	json     bool
}

func (e *env) checkpointCheck(c *cli.Context, o checkOptions) error {
	a, err := args(c, "KIND")
	if err != nil {
		return err
	}
	if !slices.Contains(compat.CheckKinds, a[0]) {
		return fail.Usagef("checkpoint-check: unknown kind %q; use one of %s", a[0], strings.Join(compat.CheckKinds, ", "))
	}
	doc, name, err := e.checkpointDoc(o.from)
	if err != nil {
		return err
	}
	if at := o.at; at != "" {
		raw, ok, err := checkpoint.Get(doc, at)
		if err != nil {
			return err
		}
		if !ok {
			return fail.Usagef("%s has no value at %s", name, at)
		}
		doc = []byte(raw)
	}
	errs, warns, err := compat.Check(a[0], doc, time.Now(), compat.FileStat(e.Cwd))
	if err != nil {
		return err
	}
	if o.json {
		e.printf("%s\n", compat.CheckJSON(errs, warns))
	} else {
		e.printf("%s", compat.CheckText(errs, warns))
	}
	if len(errs) > 0 {
		return fail.Refusedf("checkpoint-check %s: %d error(s) in %s", a[0], len(errs), name)
	}
	return nil
}
