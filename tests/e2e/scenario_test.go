//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

// scenario is one test's world: a scratch HOME, a scratch git project, a
// scratch copy of a plugin and a running stand-in model.
type scenario struct {
	t       *testing.T
	Home    string
	Project string
	Plugin  string // the scratch plugin, "" for none (a project install)
	Model   *standin.Server
	// Permissions is how the runs started from now on are permitted their
	// tools (waived unless the scenario says otherwise), and AllowedTools
	// the person's own allow rules given with it (--allowedTools).
	Permissions  permissionMode
	AllowedTools []string
	// denyRules are the person's deny rules the scenario set (denyInProject).
	denyRules []string
	LogDir    string // the stand-in's request log, kept after the test for debugging

	// Env is added to the CLI's environment (and so the bash blocks').
	Env []string
	// removed are the plugin's hook events taken out of its hooks.json.
	removed []string
	// payloads is where logPayloads keeps the hook payloads it logs.
	payloads string
	// mode is the engine the scenario's commands run on and the model's
	// drift (flowstateScenario).
	mode mode

	mu      sync.Mutex
	runs    []result // every finished CLI run, printed when the test fails
	models  []*standin.Server
	logDirs []string
}

// pluginParts are the plugin's own files; everything else in the source
// directory (Go code, tests, docs) is not part of the plugin.
var pluginParts = []string{".claude-plugin", "commands", "agents", "workflows", "hooks", "skills", "scripts"}

// newScenario makes a scratch copy of the plugin at pluginSrc with bins
// (name → built binary) in its bin/, a scratch HOME and git project, and
// starts the stand-in.
func newScenario(t *testing.T, pluginSrc string, bins map[string]string, knobs standin.Knobs) *scenario {
	t.Helper()
	s := &scenario{t: t, Home: t.TempDir(), Project: t.TempDir(), Plugin: preparePlugin(t, pluginSrc, bins)}
	s.git("init", "-q", "-b", "main")
	s.git("config", "user.email", "e2e@flowstate.invalid")
	s.git("config", "user.name", "flowstate e2e")
	if err := os.WriteFile(filepath.Join(s.Project, "README.md"), []byte("# scratch project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git("add", "README.md")
	s.git("commit", "-q", "-m", "initial")

	t.Cleanup(s.explainFailure)
	s.startModel(knobs, strings.ReplaceAll(t.Name(), "/", "_"))
	return s
}

// startModel starts a stand-in with knobs, logging to .cache/runs/<name>,
// and makes it the one later runs talk to.
func (s *scenario) startModel(knobs standin.Knobs, name string) {
	s.t.Helper()
	s.LogDir = filepath.Join(cacheDir, "runs", name)
	// A model that launches agents as general-purpose names their files.
	knobs.PluginDir = s.Plugin
	if err := os.RemoveAll(s.LogDir); err != nil {
		s.t.Fatal(err)
	}
	model, err := standin.Start(knobs, s.LogDir)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(model.Close)
	s.Model = model
	s.mu.Lock()
	s.models = append(s.models, model)
	s.logDirs = append(s.logDirs, s.LogDir)
	s.mu.Unlock()
	s.t.Logf("stand-in log: %s", s.LogDir)
}

// restartModel replaces the stand-in with a fresh one: new knobs, counters
// and log directory (.cache/runs/<test>-<name>), e.g. a resume that must not
// be slowed down, or counts of what one run asked for.
func (s *scenario) restartModel(knobs standin.Knobs, name string) {
	s.t.Helper()
	knobs.Drift = s.Model.Drift()
	s.startModel(knobs, strings.ReplaceAll(s.t.Name(), "/", "_")+"-"+name)
}

// bashCalls counts the invocations of program in the Bash commands every
// stand-in of the scenario ran.
func (s *scenario) bashCalls(program string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.models {
		n += m.CountBashCalls(program)
	}
	return n
}

// explainFailure prints, for a failed test, what every CLI run printed and
// where the stand-in's request log is.
func (s *scenario) explainFailure() {
	if !s.t.Failed() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		s.t.Logf("claude -p %q (session %s, permissions %s): exit %d after %s, denials %v\n--- stdout:\n%s\n--- stderr:\n%s",
			r.Prompt, r.Session, r.Mode.name(), r.ExitCode, r.Wall.Round(time.Millisecond), r.Denials, r.Stdout, r.Stderr)
	}
	s.t.Logf("stand-in requests and answers: %s", strings.Join(s.logDirs, " "))
}

func (s *scenario) recordRun(r result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, r)
}

// preparePlugin copies the plugin's parts from src into a scratch directory
// and puts bins into its bin/, so that the repository is never modified.
func preparePlugin(t *testing.T, src string, bins map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugin")
	for _, part := range pluginParts {
		from := filepath.Join(src, part)
		if _, err := os.Stat(from); err == nil {
			if err := os.CopyFS(filepath.Join(dir, part), os.DirFS(from)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func (s *scenario) git(args ...string) {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.Project
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// removeHook takes the plugin's hooks for event out of the scratch
// copy's hooks/hooks.json, to see what flowstate does without them.
func (s *scenario) removeHook(event string) {
	s.t.Helper()
	path := filepath.Join(s.Plugin, "hooks", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	if b, err = sjson.DeleteBytes(b, "hooks."+event); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.removed = append(s.removed, event)
}

// logPayloads adds a hook to the scratch plugin that keeps the payload
// of every PreToolUse of the tools matcher matches, one file each in
// the returned directory: what Claude Code really sends, for a test to
// check what flowstate relies on.
func (s *scenario) logPayloads(matcher string) string {
	s.t.Helper()
	dir := filepath.Join(s.Home, "payloads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(s.Plugin, "hooks", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	logger := map[string]any{"matcher": matcher, "hooks": []map[string]any{{"type": "command",
		"command": "cat > \"$(mktemp -p '" + dir + "')\""}}}
	if b, err = sjson.SetBytes(b, "hooks.PreToolUse.-1", logger); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return dir
}

// path is a project file's absolute path (rel may already be absolute).
func (s *scenario) path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(s.Project, rel)
}

func (s *scenario) read(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(s.path(rel))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *scenario) exists(rel string) bool {
	_, err := os.Stat(s.path(rel))
	return err == nil
}

// permissionFigures says how the scenario's runs were permitted their
// tools and how many calls Claude Code refused in its commands, e.g.
// "default: 0 denials" (and apart, in prompts that typed no command).
func (s *scenario) permissionFigures() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	modes, n, typed := []string{}, 0, 0
	for _, r := range s.runs {
		if !slices.Contains(modes, r.Mode.name()) {
			modes = append(modes, r.Mode.name())
		}
		if strings.HasPrefix(r.Prompt, "/") {
			n += len(r.Denials)
		} else {
			typed += len(r.Denials)
		}
	}
	out := fmt.Sprintf("%s: %d denials", strings.Join(modes, "+"), n)
	if typed > 0 {
		out += fmt.Sprintf(" (and %d of a block the prompt typed, no command)", typed)
	}
	return out
}

// denials are the calls Claude Code refused in the runs of slash
// commands (a prompt that types no command grants nothing, so its
// refusals are the point of those runs).
func (s *scenario) denials() []denial {
	return s.denialsWhere(func(r result) bool { return true })
}

// denialsWhere is denials, of the runs keep accepts.
func (s *scenario) denialsWhere(keep func(r result) bool) []denial {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []denial
	for _, r := range s.runs {
		if strings.HasPrefix(r.Prompt, "/") && keep(r) {
			out = append(out, r.Denials...)
		}
	}
	return out
}

// expectNoDenials checks that Claude Code refused nothing in the
// scenario's commands: run the way people run it, nobody would have been
// asked.
func (s *scenario) expectNoDenials() {
	s.t.Helper()
	if d := s.denials(); len(d) > 0 {
		s.t.Errorf("Claude Code refused %d calls, which would have asked a person: %v", len(d), d)
	}
}

// expectNoFlowstateDenials checks that none of the calls Claude Code
// refused in the scenario's commands run as people run them was
// flowstate's own (unless the person's own rules deny some). With every
// tool allowed, a refusal is a hook's, which a scenario checks itself
// (the write guard's, under the self-write drift).
func (s *scenario) expectNoFlowstateDenials() {
	s.t.Helper()
	if len(s.denyRules) > 0 {
		return
	}
	for _, d := range s.denialsWhere(func(r result) bool { return r.Mode != waived }) {
		if d.flowstates() {
			s.t.Errorf("Claude Code refused flowstate's own call, which would have asked a person: %v", d)
		}
	}
}

// denyInProject gives the project the person's own deny rules
// (.claude/settings.local.json), none to take them away.
func (s *scenario) denyInProject(rules ...string) {
	s.t.Helper()
	path := filepath.Join(s.Project, ".claude", "settings.local.json")
	if len(rules) == 0 {
		if err := os.Remove(path); err != nil {
			s.t.Fatal(err)
		}
		return
	}
	b, err := json.Marshal(map[string]any{"permissions": map[string]any{"deny": rules}})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.denyRules = append(s.denyRules, rules...)
}

// expectSources checks that the implementers' edits of the person's
// source (Knobs.EditSource) left n files in src/.
func (s *scenario) expectSources(n int) {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Project, "src", "*.go"))
	if len(files) != n {
		s.t.Errorf("the implementers left %d source files %v, want %d", len(files), files, n)
	}
}

// denialSummary collects the scenarios' permission figures; TestMain
// prints them.
type denialSummary struct {
	mu   sync.Mutex
	rows []string
}

var suiteDenials denialSummary

func (x *denialSummary) add(name, figures string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.rows = append(x.rows, fmt.Sprintf("  %-60s %s", name, figures))
}

// print writes the summary, if any scenario ran.
func (x *denialSummary) print(w io.Writer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rows) > 0 {
		fmt.Fprintf(w, "\npermissions and denials per scenario:\n%s\n", strings.Join(x.rows, "\n"))
	}
}
