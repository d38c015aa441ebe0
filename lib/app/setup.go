package app

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	flowstate "github.com/flowstate-dev/flowstate"
	"github.com/flowstate-dev/flowstate/lib/engine"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/hook"
	"github.com/flowstate-dev/flowstate/lib/install"
	"github.com/flowstate-dev/flowstate/lib/statefile"
	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/term"
	"github.com/flowstate-dev/flowstate/lib/version"
)

// setupCommands put flowstate into a project and Claude Code
// (lib/install, lib/hook), into the shell, and say which build it is and
// how to use it.
func (e *env) setupCommands() []*cli.Command {
	var (
		inst               installOptions
		pluginDir, atLeast string
	)
	return []*cli.Command{
		{
			Name:      "install",
			Usage:     "install the commands, agents, this binary and the hooks into PROJECT_DIR/.claude",
			UsageText: "flowstate install [--force] [--from PLUGIN_DIR] [PROJECT_DIR]   (default: the project the current directory is in)",
			Description: "Commands go to .claude/commands (as /coordinate, not /flowstate:coordinate), agents\n" +
				"to .claude/agents, flowstate's hooks into .claude/settings.json (merged), and a manifest with\n" +
				"each file's hash (.claude/flowstate-manifest.json) lets `flowstate uninstall` remove exactly\n" +
				"that: what a team commits. This machine's own, the binary (.claude/bin/flowstate) and the\n" +
				"original settings.json (kept once as .claude/bin/settings.json.flowstate-backup), stay out of\n" +
				"git through .claude/bin/.gitignore; workflow state in .claude/state/ through its own. Files you\n" +
				"changed, and your own of flowstate's names, are kept unless --force, which keeps them beside as\n" +
				"FILE.flowstate-backup for uninstall to put back. Running it again changes nothing unless\n" +
				"flowstate changed.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "also replace installed files you changed and your own of flowstate's names (kept as FILE.flowstate-backup)", Destination: &inst.force},
				&cli.StringFlag{Name: "from", Usage: "install commands and agents from this plugin checkout instead of the ones built into the binary", Destination: &inst.from},
			},
			Action: func(c *cli.Context) error { return e.install(c, inst) },
		},
		{
			Name:        "uninstall",
			Usage:       "remove what `flowstate install` put into PROJECT_DIR/.claude",
			UsageText:   "flowstate uninstall [PROJECT_DIR]   (default: the project the current directory is in)",
			Description: "Files changed since the install are kept (and named). settings.json is restored\nbyte for byte when nothing else changed it; otherwise only flowstate's hooks are taken\nout. Workflow state in .claude/state/ is kept.",
			Action:      e.uninstall,
		},
		{
			Name:      "doctor",
			Usage:     "say what is wrong with the installation in PROJECT_DIR (and a plugin checkout) and how to fix it",
			UsageText: "flowstate doctor [--plugin-dir DIR] [PROJECT_DIR]   (exit 2 when something is wrong; WARN lines do not fail)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "plugin-dir", Usage: "also check this plugin checkout (default: $CLAUDE_PLUGIN_ROOT)", Destination: &pluginDir},
			},
			Action: func(c *cli.Context) error { return e.doctor(c, pluginDir) },
		},
		{
			Name:      "hook",
			Usage:     "Claude Code hook handler (" + strings.Join(hook.Events(), ", ") + "); always exits 0",
			UsageText: "flowstate hook EVENT < hook-payload.json",
			Description: "session-start appends to $CLAUDE_ENV_FILE the exports later bash blocks need\n" +
				"(PATH with this binary's directory, CLAUDE_PROJECT_DIR, FLOWSTATE_BIN), clears stale\n" +
				"session pointers and stray temp files, and after a compaction tells the model where its\n" +
				"command stands. session-end removes the session's pointer when its workflow is finished.\n" +
				"pre-tool-use makes flowstate's agents run in the foreground and records each launch;\n" +
				"subagent-start and subagent-stop record each agent's start and end in its workflow;\n" +
				"stop sends a model that ends its turn before its command is done back to it (at most\n" +
				"3 times in a row). Answers go to stdout as Claude Code's hook JSON. Problems go to\n" +
				".claude/state/hooks.log (or ~/.claude/flowstate-hooks.log), never to the exit code: a\n" +
				"hook must not break a Claude Code session.",
			// Anything on the command line is the hook's business, reported
			// in the log rather than as a usage error with a non-zero exit.
			SkipFlagParsing: true,
			Action:          e.hook,
		},
		{
			Name:      "completion",
			Usage:     "print the shell completion script for bash or zsh",
			UsageText: "flowstate completion bash|zsh",
			Description: "bash: add `source <(flowstate completion bash)` to ~/.bashrc.\n" +
				"zsh:  add `source <(flowstate completion zsh)` to ~/.zshrc (after compinit), or save the\n" +
				"      output as _flowstate in a directory of $fpath.",
			Action: e.completion,
		},
		{
			Name:      "version",
			Usage:     "print the version and commit; --at-least X fails (exit 2) when older than X",
			UsageText: "flowstate version [--at-least X.Y.Z]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "at-least", Usage: "minimum version required", Destination: &atLeast}},
			Action:    func(c *cli.Context) error { return e.version(c, atLeast) },
		},
		{
			Name:      "help",
			Usage:     "show help for a command, `flowstate help exit-codes`, or `flowstate help reserved-names` (the keys no state may set)",
			UsageText: "flowstate help [COMMAND|exit-codes|reserved-names]",
			Action:    e.help,
		},
	}
}

// installOptions are install's flags.
type installOptions struct {
	force bool
	from  string
}

func (e *env) install(c *cli.Context, o installOptions) error {
	dir, err := e.projectArg(c)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary to install it: %w", err)
	}
	var assets fs.FS = flowstate.Plugin
	if o.from != "" {
		assets = os.DirFS(e.path(o.from))
	}
	return install.Install(dir, install.Options{Assets: assets, Binary: exe, Version: version.Version, Force: o.force, Log: e.Stderr})
}

func (e *env) uninstall(c *cli.Context) error {
	dir, err := e.projectArg(c)
	if err != nil {
		return err
	}
	return install.Uninstall(dir, e.Stderr)
}

func (e *env) doctor(c *cli.Context, plugin string) error {
	dir, err := e.projectArg(c)
	if err != nil {
		return err
	}
	if plugin == "" {
		plugin = e.Getenv("CLAUDE_PLUGIN_ROOT")
	}
	findings, err := install.Doctor(dir, install.DoctorOptions{Version: version.Line(), PluginDir: plugin, ClaudeConfig: engine.ClaudeConfigDir(e.Getenv), Now: time.Now()})
	if err != nil {
		return err
	}
	report, problems := install.Report(findings)
	e.printf("%s", report)
	if problems > 0 {
		return fail.Usagef("doctor found %d problem(s) in %s", problems, dir)
	}
	return nil
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

func (e *env) hook(c *cli.Context) error {
	a := c.Args().Slice()
	if len(a) > 0 && a[0] == "--" { // urfave keeps it with SkipFlagParsing
		a = a[1:]
	}
	event := ""
	if len(a) > 0 {
		event = a[0]
	}
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	hook.Run(event, hook.Env{Stdin: e.Stdin, Stdout: e.Stdout, Getenv: e.Getenv, Exe: exe, Now: time.Now()})
	return nil
}

func (e *env) completion(c *cli.Context) error {
	a, err := args(c, "SHELL")
	if err != nil {
		return err
	}
	script, ok := completionScripts[a[0]]
	if !ok {
		return fail.Usagef("completion: unknown shell %q; use one of: %s", a[0], strings.Join(shellNames(), ", "))
	}
	e.printf("%s", script)
	return nil
}

func (e *env) version(c *cli.Context, min string) error {
	if _, err := args(c); err != nil {
		return err
	}
	if min != "" {
		ok, err := version.AtLeast(version.Version, min)
		if err != nil {
			return err
		}
		if !ok {
			return fail.Usagef("flowstate %s is older than the required %s; rebuild it with ./install.sh", version.Version, min)
		}
	}
	e.printf("%s\n", version.Line())
	return nil
}

// reservedNames prints the classes of names no state may set
// (statefile.Classes): each class, what its names do, and its names and
// patterns.
// Wrapped at 100 columns when stdout is no terminal: the list is long,
// and docs/architecture.md shows it.
func (e *env) reservedNames() {
	indent, width := "    ", e.width()
	if width <= 0 {
		width = 100
	}
	for _, c := range statefile.Classes() {
		e.printf("%s\n", term.Indent(c.Name+": "+c.Why, width, "  "))
		var names []string
		names = append(names, c.Names...)
		for _, p := range c.Prefixes {
			names = append(names, p+"*")
		}
		for _, p := range c.Suffixes {
			names = append(names, "*"+p)
		}
		for _, p := range c.Infixes {
			names = append(names, "*"+p+"*")
		}
		e.printf("%s%s\n", indent, term.Indent(strings.Join(names, " "), width, indent))
	}
	e.printf("%s\n", term.Indent("never reserved: "+statefile.SafePrefix+"*, flowstate's prefix for workflow keys, which no program reads", width, "  "))
}

func (e *env) help(c *cli.Context) error {
	topic := c.Args().First()
	switch topic {
	case "":
		return cli.ShowAppHelp(c)
	case "exit-codes":
		// CODE is narrower than its heading: MEANING starts at column 6.
		e.printf("CODE  MEANING\n")
		for _, row := range fail.Table {
			e.printf("%-4d  %s\n", row.Code, term.Indent(row.Meaning, e.width(), "      "))
		}
		return nil
	case "reserved-names":
		e.reservedNames()
		return nil
	}
	if c.App.Command(topic) == nil {
		hint := ""
		if s := closest(topic, append(commandNames(c.App.Commands), "exit-codes", "reserved-names")); s != "" {
			hint = "; did you mean `flowstate help " + s + "`?"
		}
		return fail.Usagef("no help topic %q%s (run `flowstate help` for the commands)", topic, hint)
	}
	// The app's context, not help's own, knows the commands.
	return cli.ShowCommandHelp(c.Lineage()[1], topic)
}
