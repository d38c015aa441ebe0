// Package terminaltest runs flowstate where a person reads it: an
// interactive bash in an 80-column tmux pane (test.sh installs tmux), with
// the completion script loaded. What the pane shows is checked: no line
// wider than the pane (tmux joins what the terminal wrapped, -J), help
// and tables fitted without a word or a row broken, a finished workflow
// shown without naming it, and TAB offering states and workflow ids.
package terminaltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

var bin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &bin) }

// pane is a tmux session of its own (its own server socket) running an
// interactive bash of width columns.
type pane struct {
	t      *testing.T
	socket string
	env    []string
	n      int // commands sent, for their end markers
}

func newPane(t *testing.T, width int, env ...string) *pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("FLOWSTATE_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed (apt-get install tmux; test.sh does)")
		}
		t.Skip("tmux is not installed; test.sh installs it (apt-get install tmux)")
	}
	home := t.TempDir()
	p := &pane{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"),
		env: testenv.Env(home, append([]string{"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
			"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin"}, env...)...)}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", "200", "bash --norc --noprofile")
	t.Cleanup(func() { _ = p.cmd("kill-server").Run() })
	p.run("source <(flowstate completion bash)")
	return p
}

func (p *pane) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...)
	c.Env = p.env
	return c
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := p.cmd(args...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the pane's history and screen, the lines the terminal wrapped
// joined back (-J): each line as the program wrote it.
func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-J", "-S", "-") }

// run types line and Enter, waits until it has finished, and returns
// what it printed, as the pane shows it: the lines between the one typed
// and the end marker it echoes.
func (p *pane) run(line string) string {
	p.t.Helper()
	p.n++
	typed := fmt.Sprintf("%s; echo END-''%d", line, p.n)
	p.tmux("send-keys", "-l", typed)
	p.tmux("send-keys", "Enter")
	screen := p.wait(fmt.Sprintf("\nEND-%d\n", p.n))
	_, out, _ := strings.Cut(screen, typed+"\n")
	out, _, _ = strings.Cut(out, fmt.Sprintf("END-%d\n", p.n))
	return out
}

// wait polls the pane until it shows text.
func (p *pane) wait(text string) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane never showed %q:\n%s", text, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fits fails for a line wider than width columns.
func fits(t *testing.T, what, out string, width int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("%s: a line of %d columns in a %d-column pane: %q", what, n, width, l)
		}
	}
}

func TestEightyColumns(t *testing.T) {
	project := t.TempDir()
	p := newPane(t, 80, "CLAUDE_PROJECT_DIR="+project)
	p.run("flowstate sm-init --workflow coordinate-20251107-143022-a1b2c3 --description 'Add login with sessions' --command coordinate --scope full-implementation >/dev/null")
	p.run("flowstate sm-transition research && flowstate sm-transition plan")
	p.run("flowstate sm-init --workflow orchestrate-20251106-090000-ffffff --description 'Study auth' --command orchestrate --scope research-only >/dev/null")
	p.run("flowstate --workflow orchestrate-20251106-090000-ffffff sm-transition research && flowstate --workflow orchestrate-20251106-090000-ffffff sm-finish")

	help := p.run("flowstate help")
	fits(t, "flowstate help", help, 80)
	if !strings.Contains(help, "     sm-init            create a workflow, print its id, and make it the\n                        session's current workflow") {
		t.Errorf("help does not wrap a command's usage under its column:\n%s", help)
	}
	for _, c := range []string{"status", "sm-init", "phase-verify", "report", "history"} {
		out := p.run("flowstate " + c + " --help")
		fits(t, c+" --help", out, 80)
		// Every word of the unwrapped help is there, whole.
		whole, err := exec.Command(bin, c, "--help").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Fields(out), strings.Fields(string(whole)); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s --help at 80 columns is not the same words:\n%s", c, out)
		}
	}

	list := p.run("flowstate list")
	fits(t, "flowstate list", list, 80)
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 3 || !strings.Contains(list, "\ncoordinate-20251107-143022-a1b2c3 ") || !strings.Contains(list, "\norchestrate-20251106-090000-ffffff ") {
		t.Errorf("list at 80 columns is not one row per workflow with the id whole:\n%s", list)
	}

	// The active workflow is the only one: status shows it. Once it is
	// finished too, the most recent, named.
	// Its first line is 81 columns: wrapped, not cut.
	out := p.run("flowstate status")
	fits(t, "status", out, 80)
	if !strings.HasPrefix(out, "coordinate-20251107-143022-a1b2c3 coordinate · full-implementation ·\n  in_progress\n") {
		t.Errorf("status:\n%s", out)
	}
	p.run("flowstate sm-finish --status abandoned")
	out = p.run("flowstate status")
	fits(t, "status", out, 80)
	if !strings.Contains(out, "flowstate: the most recent workflow: coordinate-20251107-143022-a1b2c3\n") {
		t.Errorf("status of a finished workflow outside a session does not name the one it shows:\n%s", out)
	}
	out = p.run("flowstate history")
	fits(t, "history", out, 80)
	if !strings.Contains(out, "the most recent workflow") || !strings.Contains(out, "research → plan") {
		t.Errorf("history outside a session:\n%s", out)
	}
	fits(t, "status --timeline", p.run("flowstate status --timeline"), 80)
	fits(t, "help exit-codes", p.run("flowstate help exit-codes"), 80)

	// TAB, twice: bash lists what completion offers. The pane and its
	// history are cleared first, so that what is compared is only what
	// the TABs brought up, not the earlier output, which names the same
	// states and workflows.
	complete := func(typed string) string {
		t.Helper()
		p.run(`printf '\033[H\033[2J\033[3J\n'`) // the newline before its end marker, which run waits for
		p.tmux("clear-history")
		if s := p.screen(); strings.Contains(s, "coordinate-20251107-143022-a1b2c3") || strings.Contains(s, "research") {
			t.Fatalf("the pane still shows earlier output after clearing it:\n%s", s)
		}
		p.tmux("send-keys", "-l", typed)
		p.tmux("send-keys", "Tab", "Tab")
		// bash lists the candidates, then shows the line typed again.
		deadline := time.Now().Add(20 * time.Second)
		shown := p.screen()
		for strings.Count(shown, typed) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("%q<TAB><TAB> listed nothing: the pane shows\n%s", typed, shown)
			}
			time.Sleep(50 * time.Millisecond)
			shown = p.screen()
		}
		p.tmux("send-keys", "C-u")
		return shown
	}
	if got := complete("flowstate --workflow coordinate-20251107-143022-a1b2c3 rewind "); !strings.Contains(got, "initialize") || !strings.Contains(got, "research") || !strings.Contains(got, "plan") {
		t.Errorf("rewind <TAB><TAB> offered:\n%s", got)
	}
	if got := complete("flowstate status --workflow "); !strings.Contains(got, "coordinate-20251107-143022-a1b2c3") || !strings.Contains(got, "orchestrate-20251106-090000-ffffff") {
		t.Errorf("--workflow <TAB><TAB> offered:\n%s", got)
	}
	if got := complete("flowstate sm-init --"); !strings.Contains(got, "--description") || !strings.Contains(got, "--gate") || strings.Contains(got, "help h") {
		t.Errorf("sm-init --<TAB><TAB> offered:\n%s", got)
	}
}

// TestEightyColumnsOfARun: a finished run as a person reads it at 80
// columns: its artifacts relative to the project, one worker said in the
// singular, money in one precision down a column and a model without a
// price named; history names the worker of each agent's start (four
// research-specialists started, in another order than launched); the
// --timeline legend keeps each phrase on one line.
func TestEightyColumnsOfARun(t *testing.T) {
	project := t.TempDir()
	id := "coordinate-20251107-143022-a1b2c3"
	p := newPane(t, 80, "CLAUDE_PROJECT_DIR="+project)
	p.run("flowstate sm-init --workflow " + id + " --description 'Add login' --command coordinate --scope research-only >/dev/null")
	p.run("flowstate sm-transition research")
	spec := filepath.Join(project, ".flowstate", "specs", id, "reports")
	var workers []string
	for i := 1; i <= 4; i++ {
		status := map[bool]string{true: "completed", false: "failed"}[i != 3]
		workers = append(workers, fmt.Sprintf(`{"worker_id":"research_%d","status":%q,"output_path":"%s/00%d_topic.md"}`, i, status, spec, i))
	}
	p.run(fmt.Sprintf(`flowstate checkpoint-set supervisor_state.research_supervisor '{"workers":[%s]}'`, strings.Join(workers, ",")))
	p.run(`flowstate checkpoint-set phase_data.research.partial_failures '["research_3"]'`)
	p.run("flowstate sm-finish")
	events := filepath.Join(project, ".claude", "state", "workflows", id, "events.jsonl")
	var lines []string
	at := func(s float64) string {
		return time.Date(2025, 11, 7, 14, 30, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second))).Format(time.RFC3339Nano)
	}
	add := func(s float64, rest string) { lines = append(lines, fmt.Sprintf(`{"ts":%q,%s}`, at(s), rest)) }
	add(0, `"event":"init"`)
	add(0.5, `"event":"agent_usage","agent_id":"c1","agent_type":"workflow-classifier","model":"claude-haiku-5-5","usage":{"input_tokens":900},"requests":1,"tool_uses":1,"duration_ms":400`)
	add(1, `"event":"transition","from":"initialize","to":"research"`)
	for i := 1; i <= 4; i++ {
		add(2+0.01*float64(i), fmt.Sprintf(`"event":"agent_launch","session":"s","agent_type":"research-specialist","worker_id":"research_%d"`, i))
	}
	for _, i := range []int{4, 2, 1, 3} {
		add(3+float64(i)/10, fmt.Sprintf(`"event":"agent_start","session":"s","agent_id":"a%d","agent_type":"research-specialist"`, i))
	}
	for i := 1; i <= 4; i++ {
		add(20+float64(i), fmt.Sprintf(`"event":"agent_stop","session":"s","agent_id":"a%d","agent_type":"research-specialist","worker_id":"research_%d"`, i, i))
		add(20.1+float64(i), fmt.Sprintf(`"event":"agent_usage","session":"s","agent_id":"a%d","agent_type":"research-specialist","worker_id":"research_%d","model":"claude-opus-5-5","usage":{"input_tokens":%d,"output_tokens":20},"requests":1,"tool_uses":2,"duration_ms":18000`, i, i, 100*i))
	}
	add(30, `"event":"finish","state":"research","status":"complete"`)
	if err := os.WriteFile(events, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".claude", "flowstate.json"), []byte(`{"prices": {"currency": "USD", "per_million_tokens": {"claude-opus-5-5": {"input": 15, "output": 75}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	out := p.run("flowstate status")
	fits(t, "status", out, 80)
	for _, want := range []string{"1 worker failed and the workflow went on without it: research_3", "next: run it again with /flowstate:workflow-resume --retry-failed",
		"no price for claude-haiku-5-5 (", "  research_supervisor  4 workers: 3 completed, 1 failed",
		"  artifacts in .flowstate/specs/" + id + "/reports/\n", "    ✓ research_1  completed  001_topic.md\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, project) {
		t.Errorf("status shows a path with the project's directory:\n%s", out)
	}
	out = p.run("flowstate history")
	fits(t, "history", out, 80)
	for i := 1; i <= 4; i++ {
		if want := fmt.Sprintf("research-specialist research_%d started", i); !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if words := strings.Join(strings.Fields(out), " "); !strings.Contains(words, "in 1 request, 2 tool calls") || strings.Contains(words, "1 requests") {
		t.Errorf("history counts not in the singular for one:\n%s", out)
	}
	out = p.run("flowstate status --timeline")
	fits(t, "status --timeline", out, 80)
	for _, phrase := range []string{"? never seen stopping", "▒ waiting for a person", "✗ error ↻ retry ↺ rewind"} {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return strings.Contains(l, phrase) }) {
			t.Errorf("the legend breaks %q:\n%s", phrase, out)
		}
	}
	out = p.run("flowstate list")
	fits(t, "list", out, 80)
	if !regexp.MustCompile(`(?m)^`+id+` .* 30\.0s +1\.1k +0\.0\d{3} USD$`).MatchString(out) && !strings.Contains(out, "≥") {
		t.Errorf("list does not show what the run took, spent and cost:\n%s", out)
	}
}
