package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/scaffold"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// newCommand is `flowstate new`: a working command of the user's own,
// written by lib/scaffold.
func (e *env) newCommand() *cli.Command {
	var plugin string
	return &cli.Command{
		Name:      "new",
		Usage:     "write a working command of your own: its workflow definition, its command file, its saved workflow and its agents",
		UsageText: "flowstate new command NAME [--plugin PLUGIN_DIR] [PROJECT_DIR]\n   flowstate new workflow NAME [--plugin PLUGIN_DIR] [PROJECT_DIR]",
		Description: "Into a project (default: the one the current directory is in) it writes\n" +
			".claude/flows/NAME.json (the definition: three reviewers in parallel, one per lens, then a\n" +
			"writer who summarises their reviews), .claude/commands/NAME.md (/NAME, the phase loop every\n" +
			"flowstate command runs) and .claude/agents/NAME-reviewer.md, NAME-writer.md and\n" +
			"sub-supervisor.md, and .claude/workflows/NAME-flow.js with .claude/agents/flowstate-step.md, which\n" +
			"run /NAME as a Claude Code workflow where the Workflow tool is on. `new workflow NAME` writes\n" +
			"only these two, for a command of yours written by hand. With --plugin it writes flows/,\n" +
			"commands/, workflows/ and agents/ of that plugin, its agents named PLUGIN:AGENT. It never\n" +
			"replaces a file: one already there is exit 2 and nothing is written (a sub-supervisor.md or\n" +
			"flowstate-step.md already there is kept and used). Edit the definition to change the states,\n" +
			"lenses and artifacts (docs/writing-an-orchestrator.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plugin", Usage: "the plugin directory (with .claude-plugin/plugin.json) to write into", Destination: &plugin},
		},
		Action: func(c *cli.Context) error { return e.writeCommand(c, plugin) },
	}
}

func (e *env) writeCommand(c *cli.Context, pluginDir string) error {
	a := c.Args().Slice()
	if len(a) < 2 || a[0] != "command" && a[0] != "workflow" || len(a) > 3 {
		return fail.Usagef("give what to write: flowstate new command NAME, or new workflow NAME [--plugin PLUGIN_DIR] [PROJECT_DIR]")
	}
	root, plugin, err := e.newRoot(a, pluginDir)
	if err != nil {
		return err
	}
	var files []scaffold.File
	if a[0] == "workflow" {
		files, err = scaffold.NewWorkflow(a[1], plugin, "flowstate new workflow "+a[1])
	} else {
		files, err = scaffold.NewCommand(a[1], plugin)
	}
	if err != nil {
		return err
	}
	written, err := writeNew(root, files)
	if err != nil {
		return err
	}
	for _, f := range written {
		e.printf("%s\n", f)
	}
	if a[0] == "workflow" {
		e.tell("wrote the saved workflow of /%s: it runs where its command's start passes --launch and the command has the sections ## launch, ## launched and ## steps (docs/writing-an-orchestrator.md)", a[1])
		return nil
	}
	run, command := "/"+a[1], ""
	if plugin != "" {
		run = "/" + plugin + ":" + a[1]
	}
	for _, f := range files {
		if path.Base(path.Dir(f.Path)) == "commands" {
			command = statefile.Quote(e.shown(filepath.Join(root, filepath.FromSlash(f.Path))))
		}
	}
	e.tell("wrote /%s; in Claude Code run `%s WHAT TO REVIEW`; check the command, its definition and its agents with: flowstate lint %s", a[1], run, command)
	return nil
}

// newRoot is where new writes (args a, its --plugin pluginDir): the
// plugin's root and name, or the project's directory.
func (e *env) newRoot(a []string, pluginDir string) (root, plugin string, err error) {
	switch dir := pluginDir; {
	case dir != "" && len(a) == 3:
		return "", "", fail.Usagef("new command: give --plugin PLUGIN_DIR or PROJECT_DIR, not both")
	case dir != "":
		root = e.path(dir)
		manifest := filepath.Join(root, ".claude-plugin", "plugin.json")
		b, err := fsx.ReadFile(manifest, limit.Max)
		if err != nil {
			return "", "", fail.Usagef("--plugin %s: %v; give the plugin's root directory, which holds .claude-plugin/plugin.json", dir, err)
		}
		if plugin = gjson.GetBytes(b, "name").String(); plugin != "" {
			return root, plugin, nil
		}
		return "", "", fail.Invalidf("%s: no \"name\"; a plugin's agents are named by it", manifest)
	case len(a) == 3:
		p, err := store.ProjectAt(e.Getenv, e.path(a[2]))
		if err != nil {
			return "", "", err
		}
		return p.Dir, "", nil
	default:
		p, err := e.Project()
		if err != nil {
			return "", "", err
		}
		return p.Dir, "", nil
	}
}

// writeNew writes files under root, each replaced atomically, none over a
// file already there: a file of the user's is never replaced, so one in
// the way stops it before anything is written (a shared one is kept).
// A linked directory on the way (.claude/agents a symlink, say) is
// refused, as install refuses one: writing through it would put the
// files outside the project. Failing part way, it removes the files it
// wrote (none of them was there before), so that a retry is not refused
// by them. It returns the paths written.
func writeNew(root string, files []scaffold.File) ([]string, error) {
	var todo []scaffold.File
	var taken []string
	for _, f := range files {
		if err := refuseLinkedDirs(root, f.Path); err != nil {
			return nil, err
		}
		switch _, err := os.Lstat(filepath.Join(root, f.Path)); {
		case err == nil && f.Shared:
		case err == nil:
			taken = append(taken, f.Path)
		case errors.Is(err, fs.ErrNotExist):
			todo = append(todo, f)
		default:
			return nil, err
		}
	}
	if len(taken) > 0 {
		return nil, fail.Usagef("%s already has %s; nothing was written: choose another NAME, or move those away", root, strings.Join(taken, ", "))
	}
	var written []string
	for _, f := range todo {
		p := filepath.Join(root, f.Path)
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = renameio.WriteFile(p, f.Data, 0o644)
		}
		if err != nil {
			return nil, unwrite(err, written)
		}
		written = append(written, p)
	}
	return written, nil
}

// refuseLinkedDirs fails (exit 2) when a directory on the way from root
// to the file rel (slash-separated) is a link or not a directory.
func refuseLinkedDirs(root, rel string) error {
	var chain []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		chain = append(chain, filepath.Join(root, filepath.FromSlash(d)))
	}
	slices.Reverse(chain)
	return fsx.RefuseSymlinks(chain...)
}

// unwrite removes the files a failed writeNew wrote and says so with err.
func unwrite(err error, written []string) error {
	var left []string
	for _, p := range written {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			left = append(left, p)
		}
	}
	switch {
	case len(left) > 0:
		return fmt.Errorf("new command: %w; %s could not be removed again: remove them before you retry", err, strings.Join(left, ", "))
	case len(written) > 0:
		return fmt.Errorf("new command: %w; the %d files written before it were removed again, so fix that and retry", err, len(written))
	}
	return fmt.Errorf("new command: %w; nothing was written, so fix that and retry", err)
}
