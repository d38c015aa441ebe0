package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// authorCommands are for people writing their own commands and agents:
// new writes a working one (lib/scaffold), lint checks them against the
// command protocol (lib/lint).
func (e *env) authorCommands() []*cli.Command {
	return []*cli.Command{
		e.newCommand(),
		{
			Name:      "lint",
			Usage:     "check command and agent files against the command protocol; print FILE:LINE: MESSAGE for each problem",
			UsageText: "flowstate lint [FILE|DIR...]   (default: the project's .claude/commands, .claude/agents and .claude/flows)",
			Description: "Checks each markdown file the way docs/command-protocol.md says a command or agent is written:\n" +
				"every task block passes run_in_background: false and uses only ${KEY}s a bash block before it\n" +
				"prints (${KEY_i} and ${i} in a for_each); every NEXT= a block can print names a ## section (or done);\n" +
				"no bash block sources a file or reads a variable an earlier block set (each runs as its own\n" +
				"process); $ARGUMENTS stands alone on a line of a quoted heredoc; bash blocks parse; the\n" +
				"frontmatter has a description (an agent's also name and tools). A command is checked whole: the\n" +
				"definition it starts (--machine) is there and one flowstate runs (a problem at the line of its key),\n" +
				"each agent the definition names has a file whose name: is that name, each agent's name: is its\n" +
				"file's name, and a command on sm-init launches only the agents its workflow declares (--agents).\n" +
				"A DIR stands for the .md files under its commands/ and agents/ directories and the .json files in\n" +
				"its flows/; a file under agents/ is an agent. Problems go to stdout, one FILE:LINE: MESSAGE line\n" +
				"each, the count to stderr: exit 4 when there is one, 2 when a FILE is missing or there is nothing\n" +
				"to check.",
			// No candidates: the shells then complete file names, which
			// is what lint takes (urfave would offer its help command).
			BashComplete: func(*cli.Context) {},
			Action:       e.lint,
		},
	}
}

func (e *env) lint(c *cli.Context) error {
	files, err := e.lintFiles(c.Args().Slice())
	if err != nil {
		return err
	}
	set, err := e.newLintSet(files)
	if err != nil {
		return err
	}
	all, err := set.findings()
	if err != nil {
		return err
	}
	problems, failing := 0, 0
	for _, f := range set.files {
		for _, x := range all[f] {
			e.printf("%s\n", x)
		}
		if len(all[f]) > 0 {
			problems += len(all[f])
			failing++
		}
	}
	if problems > 0 {
		return fail.Invalidf("lint: %s in %d of %s; fix each at the FILE:LINE printed",
			count(problems, "problem"), failing, count(len(set.files), "file"))
	}
	e.tell("lint: no problems in %s", count(len(set.files), "file"))
	return nil
}

// lintFiles are the files to check: each FILE named, the command, agent
// and definition files under each DIR, or, with no argument, the
// project's .claude/commands, .claude/agents and .claude/flows (said on
// stderr). Paths print as given, or relative to the working directory.
func (e *env) lintFiles(args []string) ([]string, error) {
	if len(args) == 0 {
		p, err := e.Project()
		if err != nil {
			return nil, err
		}
		var files, found []string
		for _, kind := range []string{"commands", "agents", "flows"} {
			dir := filepath.Join(p.Dir, ".claude", kind)
			if rel, err := filepath.Rel(e.Cwd, dir); err == nil && !strings.HasPrefix(rel, "..") {
				dir = rel
			}
			in, err := commandFiles(dir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("lint: %w", err)
			}
			if len(in) > 0 {
				noun := map[string]string{"commands": "command", "agents": "agent", "flows": "definition"}[kind]
				found = append(found, fmt.Sprintf("%s in %s", count(len(in), noun), dir))
			}
			files = append(files, in...)
		}
		if len(files) == 0 {
			return nil, fail.Usagef("lint: no .md files in %s/.claude/commands or .claude/agents; name the files to check: flowstate lint FILE|DIR...", p.Dir)
		}
		e.tell("lint: checking %s", and(found))
		return files, nil
	}
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, fail.Usagef("lint: %s: no such file or directory", a)
		case err != nil:
			return nil, fmt.Errorf("lint: %w", err)
		case !st.IsDir():
			files = append(files, a)
			continue
		}
		in, err := commandFiles(a)
		if err != nil {
			return nil, fmt.Errorf("lint: %w", err)
		}
		if len(in) == 0 {
			return nil, fail.Usagef("lint: %s holds no .md file under a commands/ or agents/ directory (nor a .json one in flows/); name the files to check", a)
		}
		files = append(files, in...)
	}
	return files, nil
}

// commandFiles lists the regular files under dir (links followed to
// files) that make commands, in lexical order: .md files that sit in a
// directory named commands or agents, dir itself or one below it, and
// .json files in one named flows. Hidden directories other than .claude
// are skipped.
func commandFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") && d.Name() != ".claude" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		dirs := append(strings.Split(rel, string(filepath.Separator)), filepath.Base(dir))
		definition := filepath.Ext(path) == ".json" && filepath.Base(filepath.Dir(path)) == "flows"
		if !definition && (filepath.Ext(path) != ".md" || !slices.ContainsFunc(dirs, isProtocolDir)) {
			return nil
		}
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

func isProtocolDir(name string) bool { return name == "commands" || name == "agents" }

// and joins parts as a list is said: "a", "a and b", "a, b and c".
func and(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// count is "1 file", "2 files".
func count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
