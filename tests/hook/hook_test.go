// Package hooktest runs `flowstate hook` the way Claude Code does: the
// real binary, the captured stdin payloads of reference 5.3, and the
// bare environment of a hook process.
package hooktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	flowhook "github.com/flowstate-dev/flowstate/lib/hook"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

var bin string

func TestMain(m *testing.M) { testenv.RunWithBinary(m, &bin) }

// Payloads as Claude Code 2.1.328 sends them (reference 5.3).
func startPayload(session, cwd string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/u/.claude/projects/-p/%s.jsonl","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, session, session, cwd)
}

func endPayload(session, cwd string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/home/u/.claude/projects/-p/%s.jsonl","cwd":%q,"prompt_id":"697105e2-1","hook_event_name":"SessionEnd","reason":"other"}`, session, session, cwd)
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
	dir            string // the working directory it ran in
}

// exe runs program with exactly env (nothing inherited) and stdin, in a
// new empty directory.
func exe(t *testing.T, env []string, stdin string, program string, args ...string) result {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Env = append([]string{}, env...) // never nil: nil would inherit ours
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start), dir: cmd.Dir}
	if r.code, err = testenv.ExitCode(err); err != nil {
		t.Fatal(err)
	}
	return r
}

// hook runs `<project>/.claude/bin/flowstate hook EVENT` as settings.json
// does, from a bare environment.
func hook(t *testing.T, project, envFile, event, stdin string, extra ...string) result {
	t.Helper()
	env := append([]string{"CLAUDE_PROJECT_DIR=" + project, "CLAUDE_ENV_FILE=" + envFile, "PATH=/usr/bin:/bin"}, extra...)
	return exe(t, env, stdin, filepath.Join(project, ".claude", "bin", "flowstate"), "hook", event)
}

// newProject makes a project with the binary at .claude/bin/flowstate,
// as `flowstate install` leaves it.
func newProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, bin, filepath.Join(dir, ".claude", "bin", "flowstate"), 0o755)
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// flowstate runs an ordinary command in project as session.
func flowstate(t *testing.T, project, session string, args ...string) string {
	t.Helper()
	r := exe(t, []string{"CLAUDE_PROJECT_DIR=" + project, "CLAUDE_CODE_SESSION_ID=" + session, "PATH=/usr/bin:/bin"}, "", bin, args...)
	if r.code != 0 {
		t.Fatalf("flowstate %v: exit %d: %s", args, r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// workflow starts a research-only workflow for session; a finished one
// is moved to its terminal state and finished there.
func workflow(t *testing.T, project, session string, finished bool) string {
	t.Helper()
	id := flowstate(t, project, session, "sm-init", "--description", "d", "--command", "coordinate", "--scope", "research-only")
	if finished {
		flowstate(t, project, session, "sm-transition", "research")
		flowstate(t, project, session, "sm-finish")
	}
	return id
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestSessionStartExportsForBashBlocks(t *testing.T) {
	// A directory name that would run code or split words if quoted wrong.
	project := newProject(t, `my proj $(touch PWNED) 'q' "dq" `+"`x`")
	envFile := filepath.Join(t.TempDir(), "sessionstart-hook-0.sh")
	// Where an injected command would have run: the processes' working
	// directories, and the project and its parent in case one changes there.
	ranIn := []string{project, filepath.Dir(project)}
	for i := 0; i < 2; i++ { // SessionStart may fire again (resume, clear, compact)
		r := hook(t, project, envFile, "session-start", startPayload("5213a96b-aa", project))
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("session-start: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		ranIn = append(ranIn, r.dir)
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "export CLAUDE_PROJECT_DIR="); n != 1 {
		t.Errorf("env file has %d CLAUDE_PROJECT_DIR exports, want 1:\n%s", n, b)
	}
	// The Bash tool sources the env file, maybe before every command.
	script := `. "$1"; . "$1"; command -v flowstate; printf '%s\n' "$CLAUDE_PROJECT_DIR" "$FLOWSTATE_BIN" "$PATH"; flowstate version`
	r := exe(t, []string{"PATH=/usr/bin:/bin"}, "", "/bin/bash", "-c", script, "bash", envFile)
	ranIn = append(ranIn, r.dir)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	binDir := filepath.Join(project, ".claude", "bin")
	if r.code != 0 || len(lines) != 5 {
		t.Fatalf("sourcing the env file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := []string{filepath.Join(binDir, "flowstate"), project, filepath.Join(binDir, "flowstate"), binDir + ":/usr/bin:/bin"}
	if !slices.Equal(lines[:4], want) {
		t.Errorf("after sourcing twice:\n got %q\nwant %q", lines[:4], want)
	}
	if !strings.HasPrefix(lines[4], "flowstate ") {
		t.Errorf("flowstate did not run from PATH: %q", lines[4])
	}
	for _, dir := range ranIn {
		if exists(filepath.Join(dir, "PWNED")) {
			t.Errorf("a value in the env file was executed: %s", filepath.Join(dir, "PWNED"))
		}
	}
}

func TestSessionStartKeepsUserEnvFile(t *testing.T) {
	project := newProject(t, "p")
	envFile := filepath.Join(t.TempDir(), "env.sh")
	if err := os.WriteFile(envFile, []byte("export MINE=1"), 0o600); err != nil { // no final newline
		t.Fatal(err)
	}
	if r := hook(t, project, envFile, "session-start", startPayload("s1", project)); r.code != 0 || r.stdout != "" {
		t.Fatalf("session-start: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "export MINE=1\n# flowstate") {
		t.Errorf("the user's line was damaged:\n%s", b)
	}
}

// TestHooksAlwaysExitZero: whatever the input and environment, every
// hook exits 0, prints nothing on stdout, and logs the problem.
func TestHooksAlwaysExitZero(t *testing.T) {
	project := newProject(t, "p")
	hb := filepath.Join(project, ".claude", "bin", "flowstate")
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cases := []struct {
		name  string
		env   []string
		stdin string
		args  []string
	}{
		{"garbage stdin", []string{"CLAUDE_PROJECT_DIR=" + project, "PATH=/usr/bin:/bin"}, "\x00\xff{{not json", nil},
		{"empty stdin", []string{"CLAUDE_PROJECT_DIR=" + project}, "", nil},
		{"json array", []string{"CLAUDE_PROJECT_DIR=" + project}, `[1,2]`, nil},
		{"wrong types", []string{"CLAUDE_PROJECT_DIR=" + project}, `{"session_id":42,"cwd":["x"]}`, nil},
		{"hostile session id", []string{"CLAUDE_PROJECT_DIR=" + project}, `{"session_id":"../../etc/passwd"}`, nil},
		{"no env at all", nil, startPayload("s", project), nil},
		{"env file in a missing dir", []string{"CLAUDE_PROJECT_DIR=" + project, "CLAUDE_ENV_FILE=/nonexistent/dir/env"}, startPayload("s", project), nil},
		{"project is a file", []string{"CLAUDE_PROJECT_DIR=" + notADir, "HOME=" + home}, startPayload("s", notADir), nil},
		{"unknown event", []string{"CLAUDE_PROJECT_DIR=" + project}, "{}", []string{"on-bananas"}},
		{"no event", []string{"CLAUDE_PROJECT_DIR=" + project}, "{}", []string{}},
		{"flags", []string{"CLAUDE_PROJECT_DIR=" + project}, "{}", []string{"--bogus", "session-start", "-x"}},
	}
	for _, c := range cases {
		var argLists [][]string
		for _, ev := range flowhook.Events() {
			argLists = append(argLists, []string{ev})
		}
		if c.args != nil {
			argLists = [][]string{c.args}
		}
		for _, args := range argLists {
			r := exe(t, c.env, c.stdin, hb, append([]string{"hook"}, args...)...)
			if r.code != 0 || r.stdout != "" {
				t.Errorf("%s, hook %v: exit %d, stdout %q, stderr %q", c.name, args, r.code, r.stdout, r.stderr)
			}
		}
	}
	logged, err := os.ReadFile(filepath.Join(project, ".claude", "state", "hooks.log"))
	if err != nil || !strings.Contains(string(logged), "hook payload is not the expected JSON") || !strings.Contains(string(logged), `unknown hook event "on-bananas"`) {
		t.Errorf("problems not logged to .claude/state/hooks.log: %v\n%s", err, logged)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".claude", "flowstate-hooks.log")); err != nil || !strings.Contains(string(b), "session-start: ") {
		t.Errorf("an unusable project must log to ~/.claude/flowstate-hooks.log: %v %s", err, b)
	}
}

func TestSessionEndDropsOnlyFinishedEphemera(t *testing.T) {
	project := newProject(t, "p")
	done := workflow(t, project, "sess-done", true)
	open := workflow(t, project, "sess-open", false)
	wdir := func(id string) string { return filepath.Join(project, ".claude", "state", "workflows", id) }
	pointer := func(s string) string { return filepath.Join(project, ".claude", "state", "sessions", s) }
	for _, id := range []string{done, open} {
		if err := os.WriteFile(filepath.Join(wdir(id), ".checkpoint.json8675309"), []byte("{torn"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"sess-done", "sess-open"} {
		if r := hook(t, project, "", "session-end", endPayload(s, project)); r.code != 0 || r.stdout != "" {
			t.Fatalf("session-end: %+v", r)
		}
	}
	if exists(pointer("sess-done")) || exists(filepath.Join(wdir(done), ".checkpoint.json8675309")) {
		t.Errorf("finished workflow: session pointer or stray temp file left")
	}
	for _, f := range []string{"checkpoint.json", "state", "events.jsonl"} {
		if !exists(filepath.Join(wdir(done), f)) || !exists(filepath.Join(wdir(open), f)) {
			t.Errorf("%s removed: resume and status need it", f)
		}
	}
	if !exists(pointer("sess-open")) || !exists(filepath.Join(wdir(open), ".checkpoint.json8675309")) {
		t.Errorf("unfinished workflow: session-end must keep everything")
	}
	// The next block of the unfinished session still finds its workflow.
	if got := flowstate(t, project, "sess-open", "state-get", "WORKFLOW_ID"); got != open {
		t.Errorf("after session-end the open session resolves %q, want %q", got, open)
	}
}

func TestSessionStartSweepsStaleEphemera(t *testing.T) {
	project := newProject(t, "p")
	state := filepath.Join(project, ".claude", "state")
	pointer := func(s string) string { return filepath.Join(state, "sessions", s) }
	finishedOld := workflow(t, project, "finished-old", true)
	workflow(t, project, "finished-new", true)
	activeOld := workflow(t, project, "active-old", false)
	if err := os.WriteFile(pointer("dangling-old"), []byte("no-such-workflow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"finished-old", "active-old", "dangling-old"} {
		age(t, pointer(s), 48*time.Hour)
	}
	// The per-session records of orchestrate's steps and the prompt hook.
	record := func(dir, session, json string, old bool) string {
		path := filepath.Join(state, dir, session)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(json), 0o600); err != nil {
			t.Fatal(err)
		}
		if old {
			age(t, path, 48*time.Hour)
		}
		return path
	}
	records := map[string]bool{ // path: kept
		record("runs", "finished-old", `{"command":"coordinate","workflow":"`+finishedOld+`"}`, true): false,
		record("runs", "active-old", `{"command":"coordinate","workflow":"`+activeOld+`"}`, true):     true,
		record("runs", "quiet-new", `{"command":"coordinate","workflow":"`+finishedOld+`"}`, false):   true,
		record("prompts", "finished-old", `{"command":"coordinate"}`, true):                           false,
		record("prompts", "quiet-old", `{"command":""}`, true):                                        false,
		record("prompts", "active-old", `{"command":"coordinate"}`, true):                             true,
		record("prompts", "quiet-new", `{"command":""}`, false):                                       true,
	}
	wdir := filepath.Join(state, "workflows", finishedOld)
	oldTemp, newTemp := filepath.Join(wdir, ".state123"), filepath.Join(wdir, ".checkpoint.json456")
	for _, f := range []string{oldTemp, newTemp} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	age(t, oldTemp, 5*time.Minute)
	// What a workflow creation killed halfway leaves, with a link planted
	// in it: the directory goes, the link's target stays.
	halfBuilt := filepath.Join(state, "workflows", ".creating")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(halfBuilt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(halfBuilt, "state")); err != nil {
		t.Fatal(err)
	}

	envFile := filepath.Join(t.TempDir(), "env")
	if r := hook(t, project, envFile, "session-start", startPayload("new-session", project)); r.code != 0 {
		t.Fatalf("session-start: %+v", r)
	}
	for s, want := range map[string]bool{"finished-old": false, "dangling-old": false, "finished-new": true, "active-old": true} {
		if exists(pointer(s)) != want {
			t.Errorf("session pointer %s: exists=%v, want %v", s, !want, want)
		}
	}
	for path, kept := range records {
		if exists(path) != kept {
			t.Errorf("session record %s: exists=%v, want %v", path, !kept, kept)
		}
	}
	if exists(oldTemp) || !exists(newTemp) {
		t.Errorf("temp files: the old one must go (exists=%v), the fresh one (a live writer's) stay (exists=%v)", exists(oldTemp), exists(newTemp))
	}
	if !exists(filepath.Join(wdir, "checkpoint.json")) || !exists(filepath.Join(wdir, "lock")) {
		t.Errorf("sweep removed workflow files")
	}
	if exists(halfBuilt) || !exists(outside) {
		t.Errorf("half-built workflow: want it gone (exists=%v) and the link's target kept (exists=%v)", exists(halfBuilt), exists(outside))
	}
}

// TestSessionEndTiming: SessionEnd hooks share Claude Code's 1.5 s budget;
// the hook must take a small part of it even in a project with many
// workflows. It takes about 3 ms on an idle machine; the limit is a guard
// against gross regressions only, loose enough for a loaded 2-core CI
// runner where the other test packages run alongside.
func TestSessionEndTiming(t *testing.T) {
	project := newProject(t, "p")
	const n = 30
	ids := make([]string, n)
	for i := range ids {
		ids[i] = workflow(t, project, fmt.Sprintf("s%02d", i), i%2 == 0)
	}
	var took []time.Duration
	for i := range ids {
		r := hook(t, project, "", "session-end", endPayload(fmt.Sprintf("s%02d", i), project))
		if r.code != 0 {
			t.Fatalf("session-end: %+v", r)
		}
		took = append(took, r.took)
	}
	slices.Sort(took)
	median, worst := took[len(took)/2], took[len(took)-1]
	t.Logf("session-end with %d workflows: median %v, max %v (process start included)", n, median, worst)
	if median > 500*time.Millisecond {
		t.Errorf("session-end median %v; it must stay far below the 1.5 s SessionEnd budget", median)
	}
}

// TestRunHookScript covers the plugin's hook entry point: binary from
// bin/, from CLAUDE_PLUGIN_DATA, built with Go, or a clear message.
func TestRunHookScript(t *testing.T) {
	root := testenv.RepoRoot()
	plugin := t.TempDir()
	copyFile(t, filepath.Join(root, "hooks", "run-hook"), filepath.Join(plugin, "hooks", "run-hook"), 0o755)
	project := t.TempDir()
	envFile := filepath.Join(t.TempDir(), "env")
	data := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "CLAUDE_PROJECT_DIR=" + project, "CLAUDE_ENV_FILE=" + envFile,
		"CLAUDE_PLUGIN_ROOT=" + plugin, "CLAUDE_PLUGIN_DATA=" + data}
	script := filepath.Join(plugin, "hooks", "run-hook")

	// No binary and nothing to build from: one clear line for the user
	// saying how to install one without Go, and for the model the same
	// with what not to do, exit 0.
	r := exe(t, env, startPayload("s", project), script, "session-start")
	var msg struct {
		SystemMessage      string
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &msg) != nil || !strings.Contains(msg.SystemMessage, "install Go 1.25+ to build flowstate, or put flowstate") ||
		strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("no binary: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if ctx := msg.HookSpecificOutput; ctx.HookEventName != "SessionStart" || !strings.Contains(ctx.AdditionalContext, "do not look for, build, install or imitate flowstate") ||
		!strings.Contains(ctx.AdditionalContext, "the npm packages, see the README of the plugin") {
		t.Errorf("no binary: the model is not told: %+v", ctx)
	}
	if r := exe(t, env, endPayload("s", project), script, "session-end"); r.code != 0 || r.stdout != "" {
		t.Errorf("session-end without binary: %+v", r)
	}

	// A binary in the plugin's bin/ (./install.sh --plugin).
	copyFile(t, bin, filepath.Join(plugin, "bin", "flowstate"), 0o755)
	if r := exe(t, env, startPayload("s", project), script, "session-start"); r.code != 0 || r.stdout != "" {
		t.Fatalf("with bin/flowstate: %+v", r)
	}
	if b, _ := os.ReadFile(envFile); !strings.Contains(string(b), "export PATH="+filepath.Join(plugin, "bin")+`:"$PATH"`) {
		t.Errorf("env file does not put the plugin's bin on PATH:\n%s", b)
	}

	if testing.Short() {
		return
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no Go: cannot test the build into CLAUDE_PLUGIN_DATA")
	}
	// A marketplace install: the source (the working tree under test,
	// uncommitted changes included) without bin/ or .git; the hook builds
	// into CLAUDE_PLUGIN_DATA with the Go it finds.
	src := t.TempDir()
	if err := testenv.SourceTree(src); err != nil {
		t.Fatalf("copying the source: %v", err)
	}
	gocache, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE").Output()
	caches := strings.Fields(string(gocache))
	if err != nil || len(caches) != 2 {
		t.Fatalf("go env GOCACHE GOMODCACHE: %v %q", err, gocache)
	}
	envFile = filepath.Join(t.TempDir(), "env")
	env = []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "CLAUDE_PROJECT_DIR=" + project,
		"CLAUDE_ENV_FILE=" + envFile, "CLAUDE_PLUGIN_ROOT=" + src, "CLAUDE_PLUGIN_DATA=" + data,
		"GOCACHE=" + caches[0], "GOMODCACHE=" + caches[1], "GOTOOLCHAIN=local"}
	r = exe(t, env, startPayload("s", project), filepath.Join(src, "hooks", "run-hook"), "session-start")
	if r.code != 0 || r.stdout != "" || !exists(filepath.Join(data, "bin", "flowstate")) {
		build, _ := os.ReadFile(filepath.Join(data, "bin", "build.log"))
		t.Fatalf("build into CLAUDE_PLUGIN_DATA: %+v\n%s", r, build)
	}
	if b, _ := os.ReadFile(envFile); !strings.Contains(string(b), filepath.Join(data, "bin")) {
		t.Errorf("env file does not use the built binary:\n%s", b)
	}
}
