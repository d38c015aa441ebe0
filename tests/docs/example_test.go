package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/playback"
)

// reviewAgents are the example's agents, faked: the reviewer asks for
// changes until round approveAt (0: never approves).
func reviewAgents(approveAt int) map[string]agent {
	round := 0
	return map[string]agent{
		"review:gatherer": writeAgent(func(p string) string {
			return "# Notes\n\nThe change touches the login handler.\n"
		}),
		"review:reviewer": writeAgent(func(p string) string {
			round++
			if approveAt > 0 && round >= approveAt {
				return "VERDICT: approved\n\nLooks good.\n"
			}
			return "VERDICT: changes-requested\n\n- handle the empty password\n"
		}),
		"review:reviser": writeAgent(func(p string) string {
			return "# Revision\n\nHandled the empty password.\n"
		}),
	}
}

func reviewRunner(t *testing.T, proj, session, args string, approveAt int) *playback.Runner {
	root := filepath.Join(repoRoot, "examples", "review")
	env := append(baseEnv(proj, session), "CLAUDE_PROJECT_DIR="+proj)
	return newRunner(t, filepath.Join(root, "commands", "review.md"), args, root, proj, env, reviewAgents(approveAt))
}

// flowstate runs the binary in proj for session and returns stdout.
func flowstate(t *testing.T, proj, session string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "flowstate"), args...)
	cmd.Dir = proj
	cmd.Env = baseEnv(proj, session)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flowstate %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func TestReviewExampleRevisedThenApproved(t *testing.T) {
	proj := scratchProject(t)
	r := reviewRunner(t, proj, "s1", "the login handler", 2)
	if r.Run() != nil {
		t.Fatalf("%v\ntrace: %v", r.Err, r.Trace)
	}
	st := flowstate(t, proj, "s1", "sm-status")
	for _, want := range []string{"CURRENT_STATE=approved", "WORKFLOW_SCOPE=full-review", "IS_TERMINAL=true",
		"COMPLETED_STATES=initialize gather review revise approved"} {
		if !strings.Contains(st, want+"\n") {
			t.Errorf("sm-status lacks %q:\n%s", want, st)
		}
	}
	dir := flowstate(t, proj, "s1", "state-get", "SPEC_DIR")
	for _, f := range []string{"notes.md", "review-1.md", "revision-1.md", "review-2.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing artifact: %v", err)
		}
	}
	want := "start/bash gather/task gather/bash review/task review/bash revise/task revise/bash review/task review/bash"
	if got := strings.Join(r.Trace, " "); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
	if got := flowstate(t, proj, "s1", "checkpoint-get", "status"); got != "complete\n" {
		t.Errorf("status %q, want complete", got)
	}
	if !strings.HasPrefix(dir, filepath.Join(proj, ".flowstate", "specs")+"/") {
		t.Errorf("artifacts in %s, want under .flowstate/specs", dir)
	}
}

func TestReviewExampleGatherOnly(t *testing.T) {
	proj := scratchProject(t)
	r := reviewRunner(t, proj, "s1", "--gather-only the login handler", 1)
	if r.Run() != nil {
		t.Fatal(r.Err)
	}
	st := flowstate(t, proj, "s1", "sm-status")
	for _, want := range []string{"CURRENT_STATE=gather", "WORKFLOW_SCOPE=gather-only", "IS_TERMINAL=true"} {
		if !strings.Contains(st, want+"\n") {
			t.Errorf("sm-status lacks %q:\n%s", want, st)
		}
	}
	if got := flowstate(t, proj, "s1", "checkpoint-get", "workflow_description"); got != "the login handler\n" {
		t.Errorf("description %q", got)
	}
	if got := flowstate(t, proj, "s1", "checkpoint-get", "status"); got != "complete\n" {
		t.Errorf("status %q, want complete: the gather-only command must finish its workflow", got)
	}
}

// A reviewer that never approves ends the command after three revisions:
// sm-retry refuses the fourth with exit 3.
func TestReviewExampleRoundsRunOut(t *testing.T) {
	proj := scratchProject(t)
	r := reviewRunner(t, proj, "s1", "the login handler", 0)
	if r.Run() == nil || !strings.Contains(r.Err.Error(), "exit status 3") || !strings.Contains(r.Stderr, "retries exhausted") {
		t.Fatalf("want the review block to stop with exit 3 and retries exhausted, got %v", r.Err)
	}
	if n := strings.Count(strings.Join(r.Trace, " "), "revise/task"); n != 3 {
		t.Errorf("%d revisions, want 3", n)
	}
}

// Two sessions review at once in one project, block by block
// interleaved: each finds its own workflow through its session.
func TestReviewExampleTwoSessions(t *testing.T) {
	proj := scratchProject(t)
	a := reviewRunner(t, proj, "session-a", "change A", 1)
	b := reviewRunner(t, proj, "session-b", "change B", 3)
	for !a.Done || !b.Done {
		a.Step()
		b.Step()
	}
	if a.Err != nil || b.Err != nil {
		t.Fatalf("a: %v\nb: %v", a.Err, b.Err)
	}
	if got := flowstate(t, proj, "session-a", "checkpoint-get", "phase_data.review.round"); got != "1\n" {
		t.Errorf("session a: %s rounds, want 1", got)
	}
	if got := flowstate(t, proj, "session-b", "checkpoint-get", "phase_data.review.round"); got != "3\n" {
		t.Errorf("session b: %s rounds, want 3", got)
	}
	if got := flowstate(t, proj, "session-b", "checkpoint-get", "workflow_description"); got != "change B\n" {
		t.Errorf("session b found %q", got)
	}
}
