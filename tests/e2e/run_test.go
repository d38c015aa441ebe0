//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// runTimeout bounds one CLI run; a stuck run fails instead of hanging CI.
const runTimeout = 3 * time.Minute

// result is what one CLI run left behind.
type result struct {
	Prompt  string
	Session string // the run's Claude Code session id (--session-id)
	// Stdout is the model's final answer: the "result" of the CLI's JSON
	// output (all of stdout when that is not JSON, e.g. a killed run).
	Stdout, Stderr string
	ExitCode       int
	Wall           time.Duration
	Mode           permissionMode
	// Denials are the tool calls Claude Code refused for want of a
	// person's approval (the JSON output's permission_denials).
	Denials []denial
}

// denial is one tool call Claude Code refused.
type denial struct {
	Tool  string          `json:"tool_name"`
	Input json.RawMessage `json:"tool_input"`
}

// String is the tool and its input, cut to a line's worth: a refused
// Write carries the whole file, which would flood the test log.
func (d denial) String() string {
	in := string(d.Input)
	if len(in) > 200 {
		in = in[:200] + fmt.Sprintf("... (%d bytes)", len(in))
	}
	return d.Tool + " " + in
}

// permissionMode is how a scenario's runs are permitted their tools.
type permissionMode string

const (
	// waived: every tool the plugin uses is allowed (--allowedTools), as
	// --dangerously-skip-permissions would, which root may not use.
	waived permissionMode = ""
	// asPeopleRun: Claude Code's default permission mode, no rule
	// given: what needs approval is refused and listed as a denial.
	asPeopleRun permissionMode = "default"
	// acceptEdits: the default mode with file edits accepted
	// (--permission-mode acceptEdits), for the scenarios whose
	// implementers edit the person's source.
	acceptEdits permissionMode = "acceptEdits"
)

// flags are the CLI flags of mode, with allowed, the person's own allow
// rules, given to any mode but waived.
func (m permissionMode) flags(allowed []string) []string {
	var out []string
	switch m {
	case waived:
		// As root --dangerously-skip-permissions is refused; allow the tools instead.
		return []string{"--allowedTools", "Bash Read Write Edit Agent"}
	case asPeopleRun:
	default:
		out = []string{"--permission-mode", string(m)}
	}
	if len(allowed) > 0 {
		out = append(append(out, "--allowedTools"), allowed...)
	}
	return out
}

// flowstates reports a refused call that is flowstate's own: a Bash
// command running flowstate, a write of a file in .flowstate/ (an
// artifact, a classification), a read of an agent file.
func (d denial) flowstates() bool {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(d.Input, &in)
	switch d.Tool {
	case "Bash":
		return strings.Contains(in.Command, "flowstate")
	case "Read":
		return filepath.Base(filepath.Dir(in.FilePath)) == "agents"
	}
	return strings.Contains(in.FilePath, "/.flowstate/")
}

// process is a running `claude -p`.
type process struct {
	s               *scenario
	prompt, session string
	mode            permissionMode
	cmd             *exec.Cmd
	stdout, stderr  bytes.Buffer
	started         time.Time
	cancel          context.CancelFunc
	done            chan struct{} // closed when the CLI has exited
	res             result        // set once done is closed
}

// start launches `claude -p prompt` in the project with the scratch plugin,
// pointed at the stand-in.
func (s *scenario) start(prompt string) *process {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	p := &process{s: s, prompt: prompt, session: newSessionID(), cancel: cancel, done: make(chan struct{})}
	args := []string{"-p", prompt, "--session-id", p.session, "--output-format", "json"}
	if s.Plugin != "" {
		args = append(args, "--plugin-dir", s.Plugin)
	}
	p.mode = s.Permissions
	p.cmd = exec.CommandContext(ctx, claudeBin, append(args, p.mode.flags(s.AllowedTools)...)...)
	p.cmd.Dir = s.Project
	p.cmd.Env = s.env()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	// Its own process group, so that a timeout or kill also ends the shells it started.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	p.cmd.WaitDelay = 10 * time.Second
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		cancel()
		s.t.Fatal(err)
	}
	go p.reap()
	// A test that stops early must not leave its CLI running.
	s.t.Cleanup(func() {
		p.kill()
		p.wait()
	})
	return p
}

func (p *process) reap() {
	err := p.cmd.Wait()
	p.cancel()
	r := result{Prompt: p.prompt, Session: p.session, Stdout: p.stdout.String(), Stderr: p.stderr.String(), Wall: time.Since(p.started), Mode: p.mode}
	if r.ExitCode, err = testenv.ExitCode(err); err != nil {
		r.ExitCode = -1 // it could not be waited for
	}
	var out struct {
		Result  *string  `json:"result"`
		Denials []denial `json:"permission_denials"`
	}
	if json.Unmarshal(p.stdout.Bytes(), &out) == nil && out.Result != nil {
		r.Stdout, r.Denials = *out.Result, out.Denials
	}
	p.s.recordRun(r)
	p.res = r
	close(p.done)
}

// wait lets the run finish.
func (p *process) wait() result {
	<-p.done
	return p.res
}

// exited reports whether the CLI has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitUntil polls cond until it holds, while the runs in procs go on. If
// one of them ends first, or cond does not hold within timeout, it kills
// them all and fails the test.
func (s *scenario) waitUntil(what string, timeout time.Duration, cond func() bool, procs ...*process) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		problem := ""
		for _, p := range procs {
			if p.exited() {
				problem = fmt.Sprintf("claude -p %q exited %d", p.prompt, p.res.ExitCode)
			}
		}
		if problem == "" && time.Now().After(deadline) {
			problem = "timed out after " + timeout.String()
		}
		if problem != "" {
			for _, p := range procs {
				p.kill()
				p.wait()
			}
			s.t.Fatalf("%s while waiting until %s", problem, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the CLI and every process it started (SIGKILL to its process
// group: no SessionEnd, no cleanup), as a crash or a closed terminal would.
// Killing a run that has ended does nothing.
func (p *process) kill() {
	if !p.exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// newSessionID is a random UUID (version 4), as --session-id requires.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// claude runs the CLI to the end and logs what a scenario reports: wall time
// and how many times the stand-in called the plugin's tool.
func (s *scenario) claude(prompt, tool string) result {
	s.t.Helper()
	r := s.start(prompt).wait()
	title, _, _ := strings.Cut(prompt, "\n")
	s.t.Logf("%q: exit %d, wall %s, %d %s calls, permissions %s: %d denials %v", title, r.ExitCode, r.Wall.Round(time.Millisecond),
		s.Model.CountBashCalls(tool), tool, r.Mode.name(), len(r.Denials), r.Denials)
	return r
}

// env is the CLI's environment for a scenario: a clean one (nothing of an
// outer Claude Code session or a real API account), pointed at the
// stand-in.
func (s *scenario) env() []string {
	return testenv.Env(s.Home, append([]string{
		"ANTHROPIC_BASE_URL=" + s.Model.URL,
		"ANTHROPIC_API_KEY=sk-fake",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, s.Env...)...)
}

// name is how the logs name mode.
func (m permissionMode) name() string {
	if m == waived {
		return "waived"
	}
	return string(m)
}
