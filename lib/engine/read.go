package engine

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fsx"
)

// What a step reads to tell whether Claude Code offers the Workflow tool.
// Claude Code 2.1.328 (verified) turns it off with
// CLAUDE_CODE_DISABLE_WORKFLOWS=1 or CLAUDE_CODE_WORKFLOWS=0, which reach
// a bash block's environment, and with "disableWorkflows": true or
// "enableWorkflows": false in any settings file it reads, which do not.
// Its main transcript records, before the first request, the tools it
// offers the main thread (an "api-request-shape" line): where that can be
// read it is the exact answer, org policy and plan included. The
// transcript's format is Claude Code's own and may change with its
// version: without it the environment and the settings files decide,
// and a command whose Workflow call Claude Code refuses as unavailable
// goes on with the steps engine (docs/command-protocol.md).

// maxSettings bounds the read of one settings file.
const maxSettings = 1 << 20

// Transcript reading bounds: the request shape comes before the first
// answer, within the first lines, though one line holds the whole system
// prompt and tool list.
const (
	maxShapeLine  = 8 << 20
	maxShapeLines = 64
)

// Read gathers what Choose reads from the environment (getenv), the
// project at dir and the Claude Code session's files: everything but the
// definition, the hooks and the saved workflow, which the caller knows.
func Read(getenv func(string) string, dir string) Inputs {
	session := getenv("CLAUDE_CODE_SESSION_ID")
	in := Inputs{
		Override: getenv(Override),
		InClaude: session != "",
		Disable:  getenv("CLAUDE_CODE_DISABLE_WORKFLOWS"),
		Enable:   getenv("CLAUDE_CODE_WORKFLOWS"),
	}
	for _, path := range settingsFiles(getenv, dir) {
		if b, err := fsx.ReadRegular(path, maxSettings); err == nil {
			in.Settings = append(in.Settings, b)
		}
	}
	if inline := cmdlineSettings(getenv("CLAUDE_PID")); inline != nil {
		in.Settings = append(in.Settings, inline)
	}
	if session != "" {
		in.Tools, in.ToolsKnown = transcriptTools(getenv, session)
	}
	return in
}

// ClaudeConfigDir is Claude Code's user configuration directory:
// CLAUDE_CONFIG_DIR, else ~/.claude; "" when there is no HOME to find it by.
func ClaudeConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".claude")
	}
	return ""
}

// settingsFiles are the settings files a session in project dir reads:
// the user's, the project's shared and local ones, and the managed one.
func settingsFiles(getenv func(string) string, dir string) []string {
	var out []string
	if c := ClaudeConfigDir(getenv); c != "" {
		out = append(out, filepath.Join(c, "settings.json"))
	}
	if dir != "" {
		out = append(out, filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json"))
	}
	managed := "/etc/claude-code/managed-settings.json"
	if runtime.GOOS == "darwin" {
		managed = "/Library/Application Support/ClaudeCode/managed-settings.json"
	}
	return append(out, managed)
}

// cmdlineSettings is what the Claude Code process (CLAUDE_PID, the bash
// block's parent) was given with --settings: inline JSON, or the
// contents of the file it names; nil when none, or unreadable (no /proc).
func cmdlineSettings(pid string) []byte {
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
		return nil
	}
	raw, err := fsx.ReadRegular(filepath.Join("/proc", pid, "cmdline"), 1<<20)
	if err != nil {
		return nil
	}
	return settingsArg(strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), func(path string) []byte {
		b, err := fsx.ReadRegular(path, maxSettings)
		if err != nil {
			return nil
		}
		return b
	})
}

// settingsArg is the value of the --settings flag among args (inline
// JSON as it is, else the file it names, through read); nil without one.
func settingsArg(args []string, read func(path string) []byte) []byte {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--settings=")
		switch {
		case ok:
		case a == "--settings" && i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			return []byte(v)
		}
		return read(v)
	}
	return nil
}

// transcriptTools reads the tools Claude Code offered the session's main
// thread from its transcript, <config>/projects/<project>/<session>.jsonl.
func transcriptTools(getenv func(string) string, session string) ([]string, bool) {
	config := ClaudeConfigDir(getenv)
	if config == "" || strings.ContainsAny(session, `/\*?[`) {
		return nil, false
	}
	paths, _ := filepath.Glob(filepath.Join(config, "projects", "*", session+".jsonl"))
	for _, path := range paths {
		f, err := fsx.OpenRegular(path)
		if err != nil {
			continue
		}
		tools, ok := RequestTools(f)
		f.Close()
		if ok {
			return tools, true
		}
	}
	return nil, false
}

// RequestTools finds, in a Claude Code transcript read from r, the first
// request shape it records and returns the names of the tools it
// offered; ok is false when none is within the first lines.
func RequestTools(r io.Reader) (tools []string, ok bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 0; n < maxShapeLines; n++ {
		line, err := readLine(br, maxShapeLine)
		if bytes.Contains(line, []byte(`"api-request-shape"`)) && gjson.GetBytes(line, "type").String() == "api-request-shape" {
			for _, t := range gjson.GetBytes(line, "shape.tools.#.name").Array() {
				tools = append(tools, t.String())
			}
			return tools, true
		}
		if err != nil {
			return nil, false
		}
	}
	return nil, false
}

// readLine reads one line of at most max bytes; a longer one is skipped
// and read as empty.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) <= max {
			line = append(line, part...)
		} else {
			line = line[:0:0]
			max = -1 // too long: drop the rest of it too
		}
		if err != bufio.ErrBufferFull {
			if max < 0 {
				return nil, err
			}
			return line, err
		}
	}
}

// PluginRootEnv is what flowstate's SessionStart hook exports to bash
// blocks when it runs as a plugin's: the plugin's root, where its saved
// workflows are (the Bash tool has no CLAUDE_PLUGIN_ROOT).
const PluginRootEnv = "FLOWSTATE_PLUGIN_ROOT"

// Saved is where a command's saved workflow is and the name the Workflow
// tool launches it by; ok is false when it is not installed. A project's
// .claude/workflows/NAME.js is launched as NAME; a plugin's
// workflows/NAME.js as PLUGIN:NAME.
type Saved struct {
	Name string
	Path string
}

// FlowName is the meta.name of command's saved workflow: not the
// command's own name, since Claude Code gives every saved workflow a
// slash command of its name.
func FlowName(command string) string { return command + "-flow" }

// FindSaved finds command's saved workflow: the project's (dir's
// .claude/workflows) first, else the plugin's at pluginRoot, named
// after that plugin ("" when the command is not a plugin's, or the
// root is not known: then ok only for the project's).
func FindSaved(dir, pluginRoot, command string) (Saved, bool) {
	file := FlowName(command) + ".js"
	if path := filepath.Join(dir, ".claude", "workflows", file); regular(path) {
		return Saved{Name: FlowName(command), Path: path}, true
	}
	if pluginRoot == "" {
		return Saved{}, false
	}
	path := filepath.Join(pluginRoot, "workflows", file)
	plugin := PluginName(pluginRoot)
	if plugin == "" || !regular(path) {
		return Saved{}, false
	}
	return Saved{Name: plugin + ":" + FlowName(command), Path: path}, true
}

// PluginName is the name the plugin at root declares in its
// .claude-plugin/plugin.json, "" when it cannot be read.
func PluginName(root string) string {
	b, err := fsx.ReadRegular(filepath.Join(root, ".claude-plugin", "plugin.json"), 64<<10)
	if err != nil {
		return ""
	}
	return gjson.GetBytes(b, "name").String()
}

func regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
