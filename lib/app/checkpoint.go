package app

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/compat"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// checkpointCommands read and write a workflow's JSON checkpoint
// (lib/checkpoint, written through lib/store; docs/checkpoint-schema.md).
func (e *env) checkpointCommands() []*cli.Command {
	var (
		save saveOptions
		get  getOptions
		set  setOptions
	)
	return []*cli.Command{
		{
			Name:      "checkpoint-save",
			Usage:     "replace the workflow's checkpoint with a whole document from FILE or stdin",
			UsageText: "flowstate checkpoint-save [FILE|-]\n   flowstate checkpoint-save --workflow-type TYPE --project-name NAME [FILE|-]   (prints the checkpoint's path)",
			Description: "The document is validated against schema 2.1 (older versions 1.0-2.0 are migrated\n" +
				"first). Its workflow_id must be the workflow's. Nothing is written if it is invalid.\n" +
				"With --workflow-type, FILE is the state JSON of checkpoint-utils.sh's save_checkpoint\n" +
				"instead: it is kept as workflow_state, its 1.x fields (tests_passing, replanning_count,\n" +
				"...) go to the top level, and workflow_type, project_name and plan_modification_time\n" +
				"are set; state_machine, status and the other fields flowstate owns are left alone.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "workflow-type", Usage: "merge a checkpoint-utils.sh state of this workflow type", Destination: &save.workflowType},
				&cli.StringFlag{Name: "project-name", Usage: "the project name that state is saved under (with --workflow-type)", Destination: &save.projectName},
				&cli.BoolFlag{Name: "if-unchanged", Usage: "refuse (exit 3) if the checkpoint was written since the document was loaded (metadata.revision)", Destination: &save.ifUnchanged},
				e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.checkpointSave(c, save) },
		},
		{
			Name:      "checkpoint-load",
			Usage:     "print the workflow's checkpoint JSON",
			UsageText: "flowstate checkpoint-load",
			Flags:     []cli.Flag{e.workflowFlag()},
			Action:    e.onWorkflow(e.checkpointLoad),
		},
		{
			Name:      "checkpoint-get",
			Usage:     "print the value at PATH: strings raw, numbers as 160, objects and arrays as JSON",
			UsageText: "flowstate checkpoint-get PATH [--default VALUE]   (PATH like state_machine.current_state or phase_data.research.reports.0)",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "default", Usage: "print this when PATH is missing instead of failing", Action: given(&get.def)}, fromFlag(&get.from), e.workflowFlag()},
			Action:    func(c *cli.Context) error { return e.checkpointGet(c, get) },
		},
		{
			Name:      "checkpoint-set",
			Usage:     "set the value at PATH to JSON-VALUE, atomically; --increment adds, --append appends",
			UsageText: "flowstate checkpoint-set PATH JSON-VALUE\n   flowstate checkpoint-set PATH [DELTA] --increment   (prints the new number)\n   flowstate checkpoint-set PATH JSON-VALUE --append",
			Description: "JSON-VALUE is JSON: a string needs its quotes ('\"done\"'). The document is validated\n" +
				"after the change; an invalid result is refused and nothing is written.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "increment", Usage: "add DELTA (default 1) to the number at PATH", Destination: &set.increment},
				&cli.BoolFlag{Name: "append", Usage: "append JSON-VALUE to the array at PATH", Destination: &set.append},
				e.workflowFlag(),
			},
			Action: func(c *cli.Context) error { return e.checkpointSet(c, set) },
		},
	}
}

// fromFlag lets a read-only checkpoint command read any JSON document,
// such as a checkpoint file of the bash libraries, instead of the
// workflow's checkpoint.
func fromFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "from", Usage: "read this JSON FILE (- for stdin) instead of the workflow's checkpoint", Destination: dst}
}

// checkpointDoc returns the document from (--from) names, else the
// workflow's checkpoint, and a name for it in messages.
func (e *env) checkpointDoc(from string) ([]byte, string, error) {
	if from != "" {
		doc, err := e.readNamed("--from", from)
		if err == nil {
			err = checkpoint.CheckJSON(doc, "--from "+from)
		}
		return doc, from, err
	}
	w, err := e.workflow()
	if err != nil {
		return nil, "", err
	}
	doc, err := w.ReadCheckpoint()
	return doc, "checkpoint of workflow " + w.ID, err
}

// saveOptions are checkpoint-save's flags.
type saveOptions struct {
	workflowType, projectName string
	ifUnchanged               bool
}

func (e *env) checkpointSave(c *cli.Context, o saveOptions) error {
	typ, project := o.workflowType, o.projectName
	if (typ == "") != (project == "") {
		return fail.Usagef("checkpoint-save: --workflow-type and --project-name go together")
	}
	data, err := e.readInput(c, "checkpoint")
	if err != nil {
		return err
	}
	source := "the document on stdin"
	if name := c.Args().First(); name != "" && name != "-" {
		source = "the document in " + name
	}
	w, err := e.workflow()
	if err != nil {
		return err
	}
	if typ != "" {
		if err := compat.SaveLegacy(w, data, typ, project, compat.FileStat(e.Cwd)); err != nil {
			return err
		}
		e.printf("%s\n", w.CheckpointPath())
		return nil
	}
	return w.Replace(data, source, o.ifUnchanged)
}

func (e *env) checkpointLoad(w *store.Workflow, _ []string) error {
	doc, err := w.ReadCheckpoint()
	if err != nil {
		return err
	}
	_, err = e.Stdout.Write(doc)
	return err
}

// getOptions are checkpoint-get's flags.
type getOptions struct {
	def  *string // nil: not given
	from string
}

func (e *env) checkpointGet(c *cli.Context, o getOptions) error {
	a, err := args(c, "PATH")
	if err != nil {
		return err
	}
	doc, name, err := e.checkpointDoc(o.from)
	if err != nil {
		return err
	}
	raw, ok, err := checkpoint.Get(doc, a[0])
	if err != nil {
		return err
	}
	switch {
	case ok:
		e.printf("%s\n", checkpoint.Display(raw))
	case o.def != nil:
		e.printf("%s\n", *o.def)
	default:
		return fail.Usagef("%s has no value at %s; pass --default to accept that", name, a[0])
	}
	return nil
}

// setOptions are checkpoint-set's flags.
type setOptions struct{ increment, append bool }

func (e *env) checkpointSet(c *cli.Context, o setOptions) error {
	inc, app := o.increment, o.append
	if inc && app {
		return fail.Usagef("checkpoint-set: --increment and --append exclude each other")
	}
	var path, value string
	switch {
	case inc && c.NArg() == 1:
		path, value = c.Args().Get(0), "1"
	default:
		a, err := args(c, "PATH", "JSON-VALUE")
		if err != nil {
			return err
		}
		path, value = a[0], a[1]
	}
	var delta int64
	if inc {
		d, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fail.Invalidf("checkpoint-set --increment: delta %q is not an integer", value)
		}
		delta = d
	}
	w, err := e.workflow()
	if err != nil {
		return err
	}
	switch {
	case inc:
		n, err := w.IncrementCheckpoint(path, delta)
		if err == nil {
			e.printf("%d\n", n)
		}
		return err
	case app:
		return w.AppendCheckpoint(path, []byte(value))
	}
	return w.SetCheckpoint(path, []byte(value))
}
