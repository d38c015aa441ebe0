package robust

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The project-level directories flowstate keeps beside workflows/
// (sessions/, runs/, prompts/) and the state directory itself can be
// links in a cloned repository too. The hooks reach them without any
// workflow command in between, so they are attacked here through the
// hooks: a link there must never make a hook delete or write anything
// outside the project.

// planted is a directory outside the project holding files a sweep
// would take for its own stale ones: names that are valid session ids,
// a name shaped like a writer's temp file, all a week old.
func planted(t *testing.T, p *project) string {
	t.Helper()
	dir := outside(t, p, "victim-dir/x", "")
	dir = filepath.Dir(dir)
	old := time.Now().Add(-7 * 24 * time.Hour)
	for _, name := range []string{"notes", "s1", ".gtkrc-2.0", ".profile1"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("the user's "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hook(p *project, event, payload string) result {
	return p.runWithin(call{Args: []string{"hook", event}, Stdin: strings.NewReader(payload), Env: []string{"CLAUDE_ENV_FILE="}})
}

// hookEvents are every hook flowstate installs.
var hookEvents = []string{"session-start", "user-prompt-submit", "pre-tool-use", "subagent-start", "subagent-stop", "stop", "session-end"}

// runHooks runs every hook on session s1's payload, one that gives each
// something to act on (a prompt, an Agent call of flowstate's
// classifier), and fails the test unless each exits 0 at once, answering
// on stdout in JSON if at all.
func runHooks(t *testing.T, p *project) {
	t.Helper()
	payload := `{"session_id":"s1","cwd":"` + p.Dir + `","prompt":"/flowstate:workflow-approve","tool_name":"Agent","tool_input":{"subagent_type":"flowstate:workflow-classifier","prompt":"p"},"agent_type":"flowstate:workflow-classifier"}`
	for _, event := range hookEvents {
		if r := hook(p, event, payload); r.Code != 0 || r.Stdout != "" && !strings.HasPrefix(r.Stdout, "{") {
			t.Errorf("hook %s: %s", event, r)
		}
	}
}

// TestSweepNeverFollowsLinkedDirs: session start sweeps sessions/,
// runs/ and prompts/ for stale files; when one of them is a link to a
// directory outside the project, nothing there is removed.
func TestSweepNeverFollowsLinkedDirs(t *testing.T) {
	for _, dir := range []string{"sessions", "runs", "prompts"} {
		t.Run(dir, func(t *testing.T) {
			p, _ := victim(t)
			target := planted(t, p)
			plant(t, filepath.Join(p.stateDir(), dir), target)
			before := snapshot(t, filepath.Join(p.Root, "outside"))
			runHooks(t, p)
			sameTree(t, "outside the project", before, snapshot(t, filepath.Join(p.Root, "outside")))
		})
	}
}

// TestHooksNeverWriteThroughLinkedStateDir: a state directory that is a
// link (or whose runs/ or prompts/ is) takes no record from any hook.
func TestHooksNeverWriteThroughLinkedStateDir(t *testing.T) {
	for _, link := range []string{".claude/state", ".claude/state/prompts", ".claude/state/runs"} {
		t.Run(link, func(t *testing.T) {
			p, _ := victim(t)
			target := filepath.Dir(outside(t, p, "elsewhere/x", ""))
			if link == ".claude/state" {
				if err := os.RemoveAll(p.stateDir()); err != nil {
					t.Fatal(err)
				}
			}
			plant(t, filepath.Join(p.Dir, link), target)
			before := snapshot(t, filepath.Join(p.Root, "outside"))
			runHooks(t, p)
			sameTree(t, "outside the project", before, snapshot(t, filepath.Join(p.Root, "outside")))
		})
	}
}

// TestNoCommandMisbehavesOnProjectEntries: whatever sits where flowstate
// keeps a project-level directory or file (the state directory,
// workflows/, sessions/, runs/, prompts/, the project lock, hooks.log,
// .gitignore) -- a link to a directory outside, a FIFO, a device, a
// file where a directory belongs -- every command and hook ends at once,
// a command succeeds or refuses in one line with a documented code, and
// nothing outside the project changes.
func TestNoCommandMisbehavesOnProjectEntries(t *testing.T) {
	cmds := [][]string{
		{"state-load"}, {"state-append", "K", "v"}, {"sm-status"}, {"sm-transition", "plan"},
		{"checkpoint-set", "phase_data.x.n", "1"}, {"status"}, {"history"}, {"list"}, {"list", "--json"},
		{"phase-plan"}, {"resume"},
		{"sm-init", "--workflow", "new", "--description", "d", "--command", "c", "--scope", "research-only"},
	}
	for _, entry := range []string{"", "workflows", "sessions", "runs", "prompts", "lock", "hooks.log", ".gitignore", "sessions/s1", "runs/s1", "prompts/s1", "workflows/.creating", "workflows/victim/logs"} {
		for _, kind := range []string{"link", "fifo", "/dev/zero", "file"} {
			if kind == "file" && strings.Contains(entry, "/") {
				continue // a file is what belongs there
			}
			t.Run(entry+"/"+kind, func(t *testing.T) {
				t.Parallel()
				p, _ := victim(t)
				p.setenv("CLAUDE_CODE_SESSION_ID=s1")
				target := planted(t, p)
				path := filepath.Join(p.stateDir(), entry)
				if entry == "" {
					// Move the state outside and link to it: the victim's
					// data is what a link would reach.
					if err := os.Rename(path, filepath.Join(target, "state")); err != nil {
						t.Fatal(err)
					}
					target = filepath.Join(target, "state")
				} else if err := os.RemoveAll(path); err != nil {
					t.Fatal(err)
				} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				var err error
				switch kind {
				case "link":
					err = os.Symlink(target, path)
				case "fifo":
					err = syscall.Mkfifo(path, 0o600)
				case "file":
					err = os.WriteFile(path, []byte("x\n"), 0o600)
				default:
					err = os.Symlink(kind, path)
				}
				if err != nil {
					t.Fatal(err)
				}
				// A hook that cannot log in the project logs to
				// ~/.claude/flowstate-hooks.log, by design.
				before := snapshot(t, p.Root, "project", "home/.claude")
				for _, c := range cmds {
					what := strings.Join(c, " ")
					r := p.runWithin(args(c...))
					switch r.Code {
					case 0:
					case 2, 3, 4, 6:
						wantRefusal(t, what, r, r.Code)
					default:
						t.Errorf("%s: %s", what, r)
					}
				}
				runHooks(t, p)
				sameTree(t, "outside the project", before, snapshot(t, p.Root, "project", "home/.claude"))
			})
		}
	}
}

// TestLinkedClaudeDir: a project whose .claude is a link to a directory
// outside (a cloned repository can carry one) would have its state
// directory outside too: every command that writes state, and every
// hook, leaves the place it points to alone.
func TestLinkedClaudeDir(t *testing.T) {
	p := newProject(t)
	target := filepath.Dir(outside(t, p, "dotclaude/x", ""))
	if err := os.Symlink(target, filepath.Join(p.Dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	p.setenv("CLAUDE_CODE_SESSION_ID=s1")
	before := snapshot(t, filepath.Join(p.Root, "outside"))
	r := p.run(args(initArgs("w1")...))
	wantRefusal(t, "sm-init", r, 2, "symlink")
	for _, c := range [][]string{{"state-load"}, {"list"}, {"resume"}} {
		if r := p.runWithin(args(c...)); r.Code != 2 {
			t.Errorf("%s: %s", c[0], r)
		}
	}
	runHooks(t, p)
	sameTree(t, "where .claude points", before, snapshot(t, filepath.Join(p.Root, "outside")))
}

// TestArtifactsNeverThroughLinks: the spec directory where agents write
// their artifacts can be planted too. With a directory on the way to an
// artifact linked outside the project, phase-verify and phase-plan
// refuse (exit 2) before reading, and never set a bad artifact aside
// (a rename) where the link points.
func TestArtifactsNeverThroughLinks(t *testing.T) {
	for _, link := range []string{".flowstate", ".flowstate/specs/w1", ".flowstate/specs/w1/reports"} {
		t.Run(link, func(t *testing.T) {
			p := newProject(t)
			p.setenv("FLOWSTATE_WORKFLOW=w1")
			p.ok("sm-init", "--workflow", "w1", "--description", "the thing", "--command", "coordinate", "--scope", "research-only")
			p.ok("phase-plan")
			// The same tree outside, holding an artifact that is no report.
			target := filepath.Join(p.Root, "outside", "tree")
			rest, _ := filepath.Rel(link, ".flowstate/specs/w1/reports")
			if err := os.MkdirAll(filepath.Join(target, rest), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(target, rest, "001_the_thing.md"), []byte("the user's file\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(p.Dir, link)); err != nil {
				t.Fatal(err)
			}
			plant(t, filepath.Join(p.Dir, link), target)
			before := snapshot(t, filepath.Join(p.Root, "outside"))
			for _, c := range []string{"phase-verify", "phase-plan"} {
				wantRefusal(t, c, p.runWithin(args(c)), 2, "symlink")
			}
			sameTree(t, "where the link points", before, snapshot(t, filepath.Join(p.Root, "outside")))
		})
	}
}
