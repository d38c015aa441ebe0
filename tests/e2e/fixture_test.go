//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

func fixtureScenario(t *testing.T, knobs standin.Knobs) *scenario {
	return newScenario(t, filepath.Join("testdata", "fixture-plugin"),
		map[string]string{"fixture-tool": fixtureBin}, knobs)
}

// TestFixturePlugin proves the stand-in and the harness with the real CLI:
// bash blocks in order, a NEXT jump, NEXT=done, for_each fan-out, a supervisor
// fanning out again, hook exports reaching the blocks, and SessionEnd.
func TestFixturePlugin(t *testing.T) {
	s := fixtureScenario(t, standin.Knobs{})
	r := s.claude("/fixture:run", "fixture-tool")
	if r.ExitCode != 0 {
		t.Fatalf("claude exited %d", r.ExitCode)
	}
	if got := strings.TrimSpace(s.read("out/mark.txt")); got != "1" {
		t.Errorf("SessionStart export FIXTURE_MARK in a bash block = %q, want 1", got)
	}
	for _, f := range []string{"out/reports/001_alpha.md", "out/reports/002_beta.md", "out/nested/001_gamma.md", "out/nested/002_delta.md"} {
		if body := s.read(f); !strings.HasPrefix(body, "# ") || !strings.Contains(body, "## Executive Summary") {
			t.Errorf("%s is not in the report format:\n%s", f, body)
		}
	}
	if !strings.Contains(s.read("out/nested/001_gamma.md"), "Gamma") {
		t.Errorf("nested report does not name its topic")
	}
	for _, f := range []string{"out/skipped.txt", "out/never.txt"} {
		if s.exists(f) {
			t.Errorf("%s exists: a NEXT jump was not followed", f)
		}
	}
	if !s.exists("out/session-ended") {
		t.Errorf("SessionEnd hook did not run")
	}
	if !strings.Contains(r.Stdout, "FOUND=2") {
		t.Errorf("final answer %q does not quote the last block's output", r.Stdout)
	}
	if got := answers(s.Model, "supervisor"); len(got) != 1 || got[0] != `SUPERVISOR_COMPLETE: {"reports": 2}` {
		t.Errorf("supervisor answered %q, want the signal its bash block printed", got)
	}
	if got := answers(s.Model, "writer"); len(got) != 4 || !strings.HasPrefix(got[0], "REPORT_CREATED: out/") {
		t.Errorf("writers answered %q, want 4 REPORT_CREATED lines", got)
	}
	if n := s.Model.CountBashCalls("fixture-tool"); n != 4 {
		t.Errorf("fixture-tool called %d times, want 4", n)
	}
}

// TestFixtureMissingWorker: a worker that returns without its file makes the
// next check fail, and the command stops there, quoting the error.
func TestFixtureMissingWorker(t *testing.T) {
	s := fixtureScenario(t, standin.Knobs{MissingWorker: "Beta notes"})
	r := s.claude("/fixture:run", "fixture-tool")
	if r.ExitCode != 0 {
		t.Fatalf("claude exited %d", r.ExitCode)
	}
	if !s.exists("out/reports/001_alpha.md") || s.exists("out/reports/002_beta.md") {
		t.Errorf("want only the first worker's report")
	}
	if !strings.Contains(r.Stdout, "expected 2 reports in out/reports, found 1") {
		t.Errorf("stdout does not quote the failed block:\n%s", r.Stdout)
	}
	if s.exists("out/nested") {
		t.Errorf("the command went on after a failed block")
	}
}

// answers are the final texts the stand-in gave as the named persona.
func answers(m *standin.Server, persona string) []string {
	var out []string
	for _, e := range m.Exchanges() {
		if e.Subagent && e.Agent == persona && len(e.Tools) == 0 {
			out = append(out, e.Text)
		}
	}
	return out
}

// TestFixtureKilled: the CLI killed while an agent is working (SlowAgent)
// stops at once, keeps what was written before, and leaves no stuck server.
func TestFixtureKilled(t *testing.T) {
	s := fixtureScenario(t, standin.Knobs{SlowAgent: "supervisor", SlowDelay: time.Minute})
	p := s.start("/fixture:run")
	s.waitUntil("the supervisor has started", time.Minute, func() bool { return s.Model.Served("supervisor") > 0 }, p)
	p.kill()
	r := p.wait()
	t.Logf("killed after %s", r.Wall.Round(time.Millisecond))
	if r.ExitCode == 0 {
		t.Errorf("killed CLI exited 0")
	}
	if !s.exists("out/reports/002_beta.md") || s.exists("out/nested") {
		t.Errorf("want the first fan-out's reports and nothing of the supervisor's")
	}
	if s.exists("out/session-ended") {
		t.Errorf("SessionEnd ran although the CLI was killed")
	}
}
