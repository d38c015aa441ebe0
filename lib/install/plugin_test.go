package install

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The plugin's own files, from the repository this package is in.
var (
	runHookSrc = filepath.Join("..", "..", "hooks", "run-hook")
	buildSrc   = filepath.Join("..", "..", "scripts", "build")
)

// fakeFlowstate is a flowstate that prints version and logs each hook
// run (its path and event) to $FAKE_LOG.
func fakeFlowstate(version string) string {
	return "#!/bin/sh\ncase $1 in\nversion) echo '" + version + "' ;;\nhook) echo \"$0 $2\" >>\"$FAKE_LOG\" ;;\nesac\n"
}

// fakeGo is a go command that logs its calls to $FAKE_LOG, fails when
// FAKE_GO_FAIL is set and otherwise "builds" -o as a fakeFlowstate of
// the version and commit its -ldflags stamp.
const fakeGo = `#!/bin/sh
echo "go $1" >>"$FAKE_LOG"
[ -z "${FAKE_GO_FAIL:-}" ] || { echo "no compiler here" >&2; exit 1; }
out= ldflags=
while [ $# -gt 0 ]; do
	case $1 in -o) out=$2; shift ;; -ldflags) ldflags=$2; shift ;; esac
	shift
done
v=$(printf '%s\n' "$ldflags" | sed -n 's/.*\.Version=\([^ ]*\).*/\1/p')
c=$(printf '%s\n' "$ldflags" | sed -n 's/.*\.Commit=\([^ ]*\).*/\1/p')
cat >"$out" <<EOS
#!/bin/sh
case \$1 in
version) echo 'flowstate $v (commit $c)' ;;
hook) echo "\$0 \$2" >>"\$FAKE_LOG" ;;
esac
EOS
chmod +x "$out"
`

func put(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func copyTo(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	put(t, to, string(b), mode)
}

// pluginCheckout is a plugin source tree at version 9.9.9: run-hook,
// scripts/build, plugin.json and go.mod (the fake go builds nothing).
func pluginCheckout(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "plugin")
	copyTo(t, runHookSrc, filepath.Join(dir, "hooks", "run-hook"), 0o755)
	put(t, filepath.Join(dir, "hooks", "hooks.json"), "{}\n", 0o644)
	copyTo(t, buildSrc, filepath.Join(dir, "scripts", "build"), 0o755)
	put(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), "{\n  \"name\": \"flowstate\",\n  \"version\": \"9.9.9\"\n}\n", 0o644)
	put(t, filepath.Join(dir, "go.mod"), "module example.com/fake\n", 0o644)
	return dir
}

type hookRun struct {
	plugin, data, log string
	env               []string
}

func newHookRun(t *testing.T, plugin, data string) *hookRun {
	tools := t.TempDir()
	put(t, filepath.Join(tools, "go"), fakeGo, 0o755)
	h := &hookRun{plugin: plugin, data: data, log: filepath.Join(t.TempDir(), "log")}
	h.env = []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "FAKE_LOG=" + h.log,
		"CLAUDE_PLUGIN_ROOT=" + plugin, "GIT_CONFIG_NOSYSTEM=1"}
	if data != "" {
		h.env = append(h.env, "CLAUDE_PLUGIN_DATA="+data)
	}
	return h
}

// run runs the hook for event and returns its stdout and what it logged
// (go calls and hook runs), clearing the log.
func (h *hookRun) run(t *testing.T, event string, env ...string) (stdout, log string) {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(h.plugin, "hooks", "run-hook"), event)
	cmd.Env = append(append([]string{}, h.env...), env...)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("run-hook %s: %v (it must always exit 0)\nstderr: %s", event, err, errs.String())
	}
	b, _ := os.ReadFile(h.log)
	_ = os.Remove(h.log)
	return out.String(), string(b)
}

func versionLine(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestRunHookRebuildsStalePluginBinary: after the checkout moved on (a
// new version, or with git a new commit), session start rebuilds the
// plugin's bin/flowstate with scripts/build and runs the new one; a
// current binary is run as it is; a failed rebuild runs the old binary
// and says so; session end never builds.
func TestRunHookRebuildsStalePluginBinary(t *testing.T) {
	plugin := pluginCheckout(t)
	bin := filepath.Join(plugin, "bin", "flowstate")
	h := newHookRun(t, plugin, "")

	// Current: outside git the checkout names no commit, so the version counts.
	put(t, bin, fakeFlowstate("flowstate 9.9.9 (commit 1234567)"), 0o755)
	if out, log := h.run(t, "session-start"); out != "" || log != bin+" session-start\n" {
		t.Errorf("current binary: stdout %q, log %q; want it run, nothing built", out, log)
	}

	put(t, bin, fakeFlowstate("flowstate 0.0.1 (commit 1234567)"), 0o755)
	if out, log := h.run(t, "session-end"); out != "" || log != bin+" session-end\n" {
		t.Errorf("session-end: stdout %q, log %q; want the binary run as it is", out, log)
	}

	// No Go that works: the old binary still runs, and the user is told.
	out, log := h.run(t, "session-start", "FAKE_GO_FAIL=1")
	var msg struct{ SystemMessage string }
	if json.Unmarshal([]byte(out), &msg) != nil || !strings.Contains(msg.SystemMessage, `is flowstate 0.0.1 (commit 1234567) but the plugin is at flowstate 9.9.9 (commit unknown), and it could not be rebuilt`) ||
		!strings.Contains(msg.SystemMessage, "./install.sh --plugin") || log != "go build\n"+bin+" session-start\n" {
		t.Errorf("failed rebuild: stdout %q, log %q", out, log)
	}

	// Rebuilt, and the new binary runs the hook.
	if out, log := h.run(t, "session-start"); out != "" || log != "go build\n"+bin+" session-start\n" {
		t.Errorf("rebuild: stdout %q, log %q", out, log)
	}
	if v := versionLine(t, bin); v != "flowstate 9.9.9 (commit unknown)" {
		t.Errorf("rebuilt binary is %q", v)
	}
	if _, log := h.run(t, "session-start"); log != bin+" session-start\n" {
		t.Errorf("after the rebuild: log %q; want no second build", log)
	}

	// A git checkout: the commit counts too, so a pull means a rebuild.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git(t, plugin, "init", "-q")
	git(t, plugin, "add", "hooks", "scripts", ".claude-plugin", "go.mod")
	git(t, plugin, "commit", "-q", "-m", "one")
	for i := range 2 {
		if _, log := h.run(t, "session-start"); log != "go build\n"+bin+" session-start\n" {
			t.Errorf("commit %d: log %q; want a rebuild", i+1, log)
		}
		head, _ := exec.Command("git", "-C", plugin, "rev-parse", "--short", "HEAD").Output()
		if v, want := versionLine(t, bin), "flowstate 9.9.9 (commit "+strings.TrimSpace(string(head))+")"; v != want {
			t.Errorf("commit %d: rebuilt binary is %q, want %q", i+1, v, want)
		}
		if _, log := h.run(t, "session-start"); log != bin+" session-start\n" {
			t.Errorf("commit %d, again: log %q; want no build", i+1, log)
		}
		git(t, plugin, "commit", "-q", "--allow-empty", "-m", "pulled")
	}
}

// TestRunHookWithoutSource: a plugin copy without its source (no go.mod)
// cannot be rebuilt, so its binary runs whatever it reports.
func TestRunHookWithoutSource(t *testing.T) {
	plugin := pluginCheckout(t)
	if err := os.Remove(filepath.Join(plugin, "go.mod")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(plugin, "bin", "flowstate")
	put(t, bin, fakeFlowstate("flowstate 0.0.1 (commit 1234567)"), 0o755)
	if out, log := newHookRun(t, plugin, "").run(t, "session-start"); out != "" || log != bin+" session-start\n" {
		t.Errorf("stdout %q, log %q; want the binary run, nothing built", out, log)
	}
}

// TestRunHookRebuildsStaleDataBinary: the binary built into
// CLAUDE_PLUGIN_DATA is rebuilt when the plugin root moved on in place,
// not only when the root changed.
func TestRunHookRebuildsStaleDataBinary(t *testing.T) {
	plugin := pluginCheckout(t)
	data := t.TempDir()
	bin := filepath.Join(data, "bin", "flowstate")
	h := newHookRun(t, plugin, data)
	if _, log := h.run(t, "session-start"); log != "go build\n"+bin+" session-start\n" {
		t.Errorf("no binary: log %q; want a build", log)
	}
	if _, log := h.run(t, "session-start"); log != bin+" session-start\n" {
		t.Errorf("built: log %q; want no build", log)
	}
	put(t, bin, fakeFlowstate("flowstate 0.0.1 (commit unknown)"), 0o755) // same root, older build
	out, log := h.run(t, "session-start", "FAKE_GO_FAIL=1")
	if !strings.Contains(out, "could not be rebuilt") || log != "go build\n"+bin+" session-start\n" {
		t.Errorf("failed rebuild: stdout %q, log %q; want the old binary run and a message", out, log)
	}
	if out, log := h.run(t, "session-start"); out != "" || log != "go build\n"+bin+" session-start\n" {
		t.Errorf("stale: stdout %q, log %q; want a rebuild", out, log)
	}
	if v := versionLine(t, bin); v != "flowstate 9.9.9 (commit unknown)" {
		t.Errorf("rebuilt binary is %q", v)
	}
}

// TestRunHookUsesFlowstateOnPath: a plugin without a binary of its own
// runs a flowstate of its version from PATH (npm's) instead of building
// one, ignores one of another version, and without either says in one
// line how to install one with npm.
func TestRunHookUsesFlowstateOnPath(t *testing.T) {
	plugin := pluginCheckout(t)
	data := t.TempDir()
	h := newHookRun(t, plugin, data)
	npmBin := t.TempDir()
	onPath := filepath.Join(npmBin, "flowstate")
	path := "PATH=" + npmBin + ":" + strings.TrimPrefix(h.env[0], "PATH=")

	put(t, onPath, fakeFlowstate("flowstate 9.9.9 (commit 7654321)"), 0o755)
	for _, event := range []string{"session-start", "session-end"} {
		if out, log := h.run(t, event, path); out != "" || log != onPath+" "+event+"\n" {
			t.Errorf("%s with flowstate 9.9.9 on PATH: stdout %q, log %q; want it run, nothing built", event, out, log)
		}
	}

	put(t, onPath, fakeFlowstate("flowstate 0.0.1 (commit 7654321)"), 0o755)
	bin := filepath.Join(data, "bin", "flowstate")
	out, log := h.run(t, "session-start", path, "FAKE_GO_FAIL=1")
	var msg struct{ SystemMessage string }
	if json.Unmarshal([]byte(out), &msg) != nil || log != "go build\n" ||
		!strings.Contains(msg.SystemMessage, "no flowstate binary of the plugin's version on PATH, and it could not be built (see "+filepath.Join(data, "bin", "build.log")+")") ||
		!strings.Contains(msg.SystemMessage, "or put flowstate 9.9.9 on PATH (without Go: the npm packages") {
		t.Errorf("another version on PATH, no Go that works: stdout %q, log %q", out, log)
	}
	if out, log := h.run(t, "session-start", path); out != "" || log != "go build\n"+bin+" session-start\n" {
		t.Errorf("another version on PATH, with Go: stdout %q, log %q; want a build", out, log)
	}
}

// TestDoctorPlugin: doctor --plugin-dir runs the plugin's binary and
// compares it with what the checkout builds now (scripts/build
// --version), or, without scripts/build, with the running flowstate.
func TestDoctorPlugin(t *testing.T) {
	const running = "flowstate 1.0.0 (commit aaaaaaa)"
	plugin := pluginCheckout(t)
	bin := filepath.Join(plugin, "bin", "flowstate")
	finding := func() Finding {
		t.Helper()
		fs, err := Doctor(t.TempDir(), DoctorOptions{Version: running, PluginDir: plugin, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if strings.Contains(f.What, "plugin "+plugin) {
				return f
			}
		}
		t.Fatalf("no finding about the plugin: %+v", fs)
		return Finding{}
	}
	for _, c := range []struct {
		name, script string
		ok           bool
		what, fix    string
	}{
		{"current", fakeFlowstate("flowstate 9.9.9 (commit 1234567)"), true, "bin/flowstate: flowstate 9.9.9 (commit 1234567)", ""},
		{"older", fakeFlowstate("flowstate 0.0.1 (commit 1234567)"), false,
			`bin/flowstate is "flowstate 0.0.1 (commit 1234567)", but the checkout builds flowstate 9.9.9 (commit unknown)`, "run ./install.sh --plugin in " + plugin},
		{"broken", "#!/bin/sh\nexit 1\n", false, "bin/flowstate does not run", "run ./install.sh --plugin in " + plugin},
	} {
		put(t, bin, c.script, 0o755)
		f := finding()
		if f.OK != c.ok || !strings.Contains(f.What, c.what) || !strings.Contains(f.Fix, c.fix) {
			t.Errorf("%s: %+v; want ok=%v, %q, fix %q", c.name, f, c.ok, c.what, c.fix)
		}
	}

	if err := os.Remove(filepath.Join(plugin, "scripts", "build")); err != nil {
		t.Fatal(err)
	}
	put(t, bin, fakeFlowstate("flowstate 9.9.9 (commit 1234567)"), 0o755)
	if f := finding(); f.OK || !strings.Contains(f.What, `bin/flowstate is "flowstate 9.9.9 (commit 1234567)", but this is `+running) {
		t.Errorf("without scripts/build: %+v; want it compared with the running flowstate", f)
	}
	put(t, bin, fakeFlowstate(running), 0o755)
	if f := finding(); !f.OK {
		t.Errorf("without scripts/build, same as the running flowstate: %+v", f)
	}
}

func TestSameBuild(t *testing.T) {
	for _, c := range []struct {
		have, want string
		same       bool
	}{
		{"flowstate 1.0 (commit abc)", "flowstate 1.0 (commit abc)", true},
		{"flowstate 1.0 (commit abc)", "flowstate 1.0 (commit def)", false},
		{"flowstate 1.0 (commit abc)", "flowstate 1.0 (commit unknown)", true},
		{"flowstate 1.0 (commit unknown)", "flowstate 1.0 (commit unknown)", true},
		{"flowstate 1.0.1 (commit abc)", "flowstate 1.0 (commit unknown)", false},
		{"flowstate 1.0 (commit unknown)", "flowstate 1.0 (commit abc)", false},
		{"", "flowstate 1.0 (commit unknown)", false},
	} {
		if got := sameBuild(c.have, c.want); got != c.same {
			t.Errorf("sameBuild(%q, %q) = %v", c.have, c.want, got)
		}
	}
}
