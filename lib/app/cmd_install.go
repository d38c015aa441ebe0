package app

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	flowstate "github.com/flowstate-dev/flowstate"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/install"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/version"
)

func installCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "install",
			Usage:     "install the commands, agents, this binary and the hooks into PROJECT_DIR/.claude",
			UsageText: "flowstate install [--force] [--from PLUGIN_DIR] [PROJECT_DIR]   (default: the project the current directory is in)",
			Description: "Commands go to .claude/commands (as /coordinate, not /flowstate:coordinate), agents\n" +
				"to .claude/agents, the binary to .claude/bin/flowstate, the SessionStart and SessionEnd\n" +
				"hooks into .claude/settings.json (merged; the original is kept once as\n" +
				"settings.json.flowstate-backup), and .claude/state/ into .gitignore. A manifest with\n" +
				"each file's hash (.claude/flowstate-manifest.json) lets `flowstate uninstall` remove\n" +
				"exactly that. Files you changed are kept unless --force. Running it again changes nothing\n" +
				"unless flowstate changed.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "also replace installed files you changed"},
				&cli.StringFlag{Name: "from", Usage: "install commands and agents from this plugin checkout instead of the ones built into the binary"},
			},
			Action: func(c *cli.Context) error {
				dir, err := e.projectArg(c)
				if err != nil {
					return err
				}
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find this binary to install it: %w", err)
				}
				var assets fs.FS = flowstate.Plugin
				if from := c.String("from"); from != "" {
					assets = os.DirFS(e.path(from))
				}
				return install.Install(dir, install.Options{Assets: assets, Binary: exe, Version: version.Version, Force: c.Bool("force"), Log: e.Stderr})
			},
		},
		{
			Name:        "uninstall",
			Usage:       "remove what `flowstate install` put into PROJECT_DIR/.claude",
			UsageText:   "flowstate uninstall [PROJECT_DIR]   (default: the project the current directory is in)",
			Description: "Files changed since the install are kept (and named). settings.json is restored\nbyte for byte when nothing else changed it; otherwise only flowstate's hooks are taken\nout. Workflow state in .claude/state/ is kept.",
			Action: func(c *cli.Context) error {
				dir, err := e.projectArg(c)
				if err != nil {
					return err
				}
				return install.Uninstall(dir, e.Stderr)
			},
		},
		{
			Name:      "doctor",
			Usage:     "say what is wrong with the installation in PROJECT_DIR (and a plugin checkout) and how to fix it",
			UsageText: "flowstate doctor [--plugin-dir DIR] [PROJECT_DIR]   (exit 2 when something is wrong; WARN lines do not fail)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "plugin-dir", Usage: "also check this plugin checkout (default: $CLAUDE_PLUGIN_ROOT)"},
			},
			Action: func(c *cli.Context) error {
				dir, err := e.projectArg(c)
				if err != nil {
					return err
				}
				plugin := c.String("plugin-dir")
				if plugin == "" {
					plugin = e.Getenv("CLAUDE_PLUGIN_ROOT")
				}
				findings, err := install.Doctor(dir, install.DoctorOptions{Version: version.Line(), PluginDir: plugin, ClaudeConfig: install.ClaudeConfigDir(e.Getenv), Now: time.Now()})
				if err != nil {
					return err
				}
				report, problems := install.Report(findings)
				e.printf("%s", report)
				if problems > 0 {
					return fail.Usagef("doctor found %d problem(s) in %s", problems, dir)
				}
				return nil
			},
		},
	}
}

// projectArg is the project a command names: PROJECT_DIR as given, else
// the project every other command finds from here (store.FindProject), so
// that doctor checks where sm-init writes. store decides both, and refuses
// $HOME and ~/.claude alike.
func (e *env) projectArg(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		p, err := e.Project()
		if err != nil {
			return "", err
		}
		return p.Dir, nil
	case 1:
		p, err := store.ProjectAt(e.Getenv, e.path(c.Args().First()))
		if err != nil {
			return "", err
		}
		return p.Dir, nil
	}
	return "", fail.Usagef("%s takes at most one PROJECT_DIR; got %d arguments (see `flowstate %s --help`)", c.Command.Name, c.NArg(), c.Command.Name)
}
