package orchestrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// TestHeldStepsStop: while a person holds the workflow, every phase step
// ends cleanly, the command's with NEXT=stopped and the message, a
// sub-supervisor's without work and with its failure signal; nothing is
// handed out. Once it goes on, the steps do too.
func TestHeldStepsStop(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"})
	ann := sm.Actor{By: "ann", Via: "shell"}
	if err := sm.Pause(w, ann, "budget\nNEXT=done"); err != nil {
		t.Fatal(err)
	}
	for name, step := range map[string]func(*testing.T) (Output, error){
		"phase-plan":   func(*testing.T) (Output, error) { return Plan(w, Options{}) },
		"phase-verify": func(*testing.T) (Output, error) { return Verify(w, Options{}) },
	} {
		out, err := step(t)
		if err != nil || value(t, out, "NEXT") != Stopped || value(t, out, "STATUS") != "paused" ||
			!strings.Contains(value(t, out, "MESSAGE"), "is paused by ann: budget NEXT=done. Continue it with /flowstate:workflow-resume") {
			t.Errorf("%s of a paused workflow: %v\n%s", name, err, out)
		}
		if strings.Count("\n"+out.String(), "\nNEXT=") != 1 {
			t.Errorf("%s: the reason printed a line of its own:\n%s", name, out)
		}
	}
	if out, err := Plan(w, Options{Supervisor: true}); err != nil || out.String() != "WORKER_COUNT=0\nNEXT=verify\n" {
		t.Errorf("phase-plan --supervisor of a paused workflow: %v\n%s", err, out)
	}
	if out, err := Verify(w, Options{Supervisor: true}); err != nil || !strings.HasPrefix(out.Signal, "SUPERVISOR_FAILED: {\"error\":\"Workflow ") {
		t.Errorf("phase-verify --supervisor of a paused workflow: %v\n%s", err, out)
	}
	// The resume lets it go on, recorded as the person's unpause.
	if out, err := Resume(p, ResumeRequest{Actor: ann}, store.Selector{Session: "s1"}, Options{}); err != nil || value(t, out, "NEXT") != "work" {
		t.Fatalf("resume of a paused workflow: %v\n%s", err, out)
	}
	if out, err := Plan(w, Options{}); err != nil || value(t, out, "WORKER_COUNT") != "1" {
		t.Errorf("phase-plan after the resume: %v\n%s", err, out)
	}
	if err := sm.Cancel(w, ann, "wrong repo"); err != nil {
		t.Fatal(err)
	}
	if out, err := Verify(w, Options{}); err != nil || value(t, out, "STATUS") != "cancelled" {
		t.Errorf("phase-verify of a cancelled workflow: %v\n%s", err, out)
	}
	if _, err := Resume(p, ResumeRequest{ID: w.ID, Actor: ann}, store.Selector{Session: "s1"}, Options{}); fail.Code(err) != fail.Refused || !strings.Contains(err.Error(), "was cancelled by ann: wrong repo") {
		t.Errorf("resume of a cancelled workflow: %v", err)
	}
}

// TestRewoundUnderARunningCommand: a person rewinds the workflow while
// its command's workers work; the command's verify finds them taken back
// and plans again instead of failing on files nobody was asked for.
func TestRewoundUnderARunningCommand(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-and-plan", Description: "auth flows", Session: "s1"})
	if err := sm.Rewind(w, "research", sm.Actor{By: "ann"}, "narrower"); err != nil {
		t.Fatal(err)
	}
	// The same verify plans the state again: new outputs beside the old
	// ones, and the brief says what the person wants.
	out, err := Verify(w, Options{})
	if err != nil || value(t, out, "NEXT") != "work" || !strings.HasSuffix(value(t, out, "OUTPUT_1"), ".v2.md") ||
		len(out.Warnings) == 0 || !strings.Contains(out.Warnings[0].Text, "was rewound to research") {
		t.Fatalf("verify after a rewind: %v\n%s%v", err, out, out.Warnings)
	}
	brief, err := os.ReadFile(filepath.Join(value(t, out, "SPEC_DIR"), "briefs", "research-specialist.md"))
	if err != nil || !strings.Contains(string(brief), "narrower") {
		t.Errorf("the brief after a rewind lacks the reason: %v\n%s", err, brief)
	}
	// Planned again: verify checks the new workers as usual (right after
	// the plan, with no hooks on record, it waits for them).
	if again, err := Verify(w, Options{}); err != nil || value(t, again, "NEXT") != "verify" {
		t.Errorf("verify of the new plan: %v\n%s", err, again)
	}
}

func TestInvoked(t *testing.T) {
	for text, want := range map[string]string{
		"/flowstate:workflow-approve looks right": "workflow-approve",
		"  /workflow-reject too vague":            "workflow-reject",
		"/flowstate:workflow-resume":              "workflow-resume",
		"!flowstate unpause":                      "!",
		"please approve it for me":                "",
		"":                                        "",
		"/":                                       "",
		"/flowstate:coordinate\nbuild it":         "coordinate",
	} {
		if got := invoked(text); got != want {
			t.Errorf("invoked(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestSlashFollowsTheInstall: the commands a person is told to type are
// the plugin's (/flowstate:workflow-approve) unless an install put
// flowstate's commands in the project's .claude/commands, where Claude
// Code names them /workflow-approve.
func TestSlashFollowsTheInstall(t *testing.T) {
	p := project(t)
	w := startedWorkflow(t, p, Request{Command: "orchestrate", Scope: "research-only", Description: "auth flows", Session: "s1"})
	if err := sm.Pause(w, sm.Actor{By: "ann"}, "budget"); err != nil {
		t.Fatal(err)
	}
	message := func() string {
		doc, err := w.ReadCheckpoint()
		if err != nil {
			t.Fatal(err)
		}
		return HeldMessage(w, doc)
	}
	if got := message(); !strings.Contains(got, "Continue it with /flowstate:workflow-resume ") {
		t.Errorf("as a plugin: %s", got)
	}
	dir := filepath.Join(p.Dir, ".claude", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ResumeCommand+".md"), "---\ndescription: d\n---\n")
	if got := message(); !strings.Contains(got, "Continue it with /workflow-resume ") {
		t.Errorf("installed in the project: %s", got)
	}
	if got := Slash(p, "workflow-approve"); got != "/flowstate:workflow-approve" {
		t.Errorf("a command the install did not put there: %s", got)
	}
}
