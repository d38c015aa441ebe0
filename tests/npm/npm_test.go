// Package npmtest installs flowstate the way a Claude Code user without Go
// would: from the npm packages scripts/npm-pack builds (one per platform,
// plus the wrapper with the `flowstate` command), into a scratch project,
// with no Go on PATH, and runs it.
package npmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

const scope = "@flowstate-dev/"

// platform is this machine as npm's os and cpu fields name it.
func platform() string {
	cpu := runtime.GOARCH
	if cpu == "amd64" {
		cpu = "x64"
	}
	return runtime.GOOS + "-" + cpu
}

// packed runs scripts/npm-pack into a new directory and returns it and
// the package name -> .tgz path of what it left there.
func packed(t *testing.T) (string, map[string]string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("sh", filepath.Join(testenv.RepoRoot(), "scripts", "npm-pack"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/npm-pack: %v\n%s", err, b)
	}
	tgz, err := filepath.Glob(filepath.Join(out, "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]string{}
	for _, f := range tgz {
		b, err := exec.Command("tar", "-xzOf", f, "package/package.json").Output()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var m struct{ Name, Version string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: package.json: %v", f, err)
		}
		st, _ := os.Stat(f)
		t.Logf("%s@%s: %s, %d KB", m.Name, m.Version, filepath.Base(f), st.Size()/1000)
		pkgs[m.Name] = f
	}
	return out, pkgs
}

// noGoPath is a PATH with node and npm and the basic tools, but no Go.
func noGoPath(t *testing.T) string {
	t.Helper()
	var dirs []string
	for _, tool := range []string{"node", "npm"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	path := strings.Join(append(dirs, "/usr/bin", "/bin"), string(os.PathListSeparator))
	for _, d := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			t.Skipf("Go is in %s, next to node or the basic tools: no PATH without Go here", d)
		}
	}
	return path
}

// TestNPMPackages: scripts/npm-pack leaves a package per platform and the
// wrapper; npm installs them from the tarballs with no registry and no Go,
// takes only this platform's binary, and `flowstate` runs: version, a short
// workflow, a project install. Its mistakes say what to do.
func TestNPMPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles four binaries")
	}
	path := noGoPath(t)
	_, pkgs := packed(t)
	want := []string{"flowstate", "flowstate-linux-x64", "flowstate-linux-arm64", "flowstate-darwin-x64", "flowstate-darwin-arm64"}
	if len(pkgs) != len(want) {
		t.Fatalf("scripts/npm-pack made %d packages, want %v", len(pkgs), want)
	}
	for _, name := range want {
		if pkgs[scope+name] == "" {
			t.Fatalf("scripts/npm-pack made no %s%s: %v", scope, name, pkgs)
		}
	}

	// A scratch project that installs the wrapper; overrides stand in for
	// the registry, so npm resolves every platform package to its tarball
	// and itself leaves out the ones whose os and cpu do not match.
	dir := t.TempDir()
	overrides := map[string]string{}
	for name, f := range pkgs {
		overrides[name] = "file:" + f
	}
	manifest, _ := json.Marshal(map[string]any{
		"name": "scratch", "private": true,
		"dependencies": map[string]string{scope + "flowstate": "file:" + pkgs[scope+"flowstate"]},
		"overrides":    overrides,
	})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := testenv.Env(home, "PATH="+path, "npm_config_cache="+filepath.Join(home, ".npm"), "npm_config_update_notifier=false")
	run := func(dir string, name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code, err := testenv.ExitCode(cmd.Run())
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	start := time.Now()
	if out, errs, code := run(dir, "npm", "install", "--offline", "--no-audit", "--no-fund"); code != 0 {
		t.Fatalf("npm install: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("npm install from the tarballs: %v", time.Since(start).Round(time.Millisecond))
	installed, _ := filepath.Glob(filepath.Join(dir, "node_modules", scope+"*"))
	for i, p := range installed {
		installed[i] = filepath.Base(p)
	}
	if got := strings.Join(installed, " "); got != "flowstate flowstate-"+platform() {
		t.Errorf("npm installed %s; want the wrapper and this platform's package only", got)
	}

	flowstate := filepath.Join(dir, "node_modules", ".bin", "flowstate")
	native(t, flowstate)
	version, errs, code := run(dir, flowstate, "version")
	stamp, err := exec.Command("sh", filepath.Join(testenv.RepoRoot(), "scripts", "build"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || strings.Fields(version)[1] != strings.Fields(string(stamp))[1] {
		t.Fatalf("flowstate version: exit %d, %q%s; want the plugin's version, as %q", code, version, errs, stamp)
	}

	// A short workflow in a project, every call a process through the
	// launcher; exit codes and stdin pass through.
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"sm-init", "--workflow", "wf", "--description", "Add login", "--command", "coordinate", "--scope", "research-only"}, 0, "wf\n"},
		{[]string{"sm-transition", "research", "--reason", "topics known"}, 0, ""},
		{[]string{"state-append", "REPORT", "specs/r.md"}, 0, ""},
		{[]string{"state-get", "REPORT"}, 0, "specs/r.md"},
		{[]string{"sm-transition", "initialize"}, 3, ""},
		{[]string{"state-get", "MISSING"}, 2, ""},
		{[]string{"sm-finish"}, 0, ""},
	}
	for _, s := range steps {
		out, errs, code := run(proj, flowstate, s.args...)
		if code != s.code || s.code == 0 && out != s.out {
			t.Errorf("flowstate %s: exit %d, stdout %q, stderr %q; want exit %d, %q", strings.Join(s.args, " "), code, out, errs, s.code, s.out)
		}
	}
	if out, _, _ := run(proj, flowstate, "list"); !strings.Contains(out, "complete") {
		t.Errorf("flowstate list after sm-finish:\n%s", out)
	}

	// A project install from the npm binary: the commands it carries and
	// the native binary itself, which the project's hooks run.
	out, errs, code := run(proj, flowstate, "install")
	if code != 0 || !strings.Contains(errs, "Next:") {
		t.Fatalf("flowstate install: exit %d\n%s%s", code, out, errs)
	}
	if v, _, code := run(proj, filepath.Join(proj, ".claude", "bin", "flowstate"), "version"); code != 0 || v != version {
		t.Errorf("installed .claude/bin/flowstate: exit %d, %q; want %q", code, v, version)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "commands", "coordinate.md")); err != nil {
		t.Errorf("flowstate install from npm installed no commands: %v", err)
	}

	globalInstall(t, run, pkgs, strings.TrimSpace(version))

	// The launcher's mistakes: another platform, and the platform package
	// left out (npm --omit=optional).
	fake := filepath.Join(t.TempDir(), "win32.js")
	if err := os.WriteFile(fake, []byte("Object.defineProperty(process, 'platform', {value: 'win32'});\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(dir, "node_modules", scope+"flowstate", "bin", "flowstate.js")
	callTimes(t, run, dir, flowstate, launcher)
	_, errs, code = run(dir, "node", "-r", fake, launcher, "version")
	if code != 1 || !strings.HasPrefix(errs, fmt.Sprintf("flowstate: no prebuilt binary for win32-%s (there are linux-x64, linux-arm64, darwin-x64, darwin-arm64); build flowstate from source", strings.TrimPrefix(platform(), runtime.GOOS+"-"))) {
		t.Errorf("on another platform: exit %d, %q", code, errs)
	}
	if err := os.RemoveAll(filepath.Join(dir, "node_modules", scope+"flowstate-"+platform())); err != nil {
		t.Fatal(err)
	}
	if v, _, code := run(dir, flowstate, "version"); code != 0 || v != version {
		t.Errorf("the native flowstate command needs its platform package once installed: exit %d, %q", code, v)
	}
	_, errs, code = run(dir, "node", launcher, "version")
	if code != 1 || !strings.Contains(errs, "the package "+scope+"flowstate-"+platform()+", which holds the binary for this machine, is not installed") ||
		!strings.Contains(errs, "npm install -g "+scope+"flowstate@") || strings.Count(errs, "\n") != 1 {
		t.Errorf("without the platform package: exit %d, %q", code, errs)
	}
}

// globalInstall follows the README's route without Go: `npm install -g`
// of the wrapper's and this platform's .tgz, as the README names them,
// into a scratch prefix; `flowstate` is then on PATH. Offline: the test
// has no registry, and needs none.
func globalInstall(t *testing.T, run func(dir, name string, args ...string) (string, string, int), pkgs map[string]string, version string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	v := strings.Fields(version)[1]
	named := map[string]string{scope + "flowstate": "flowstate-dev-flowstate-" + v + ".tgz"}
	if platform() == "linux-x64" { // the README's example
		named[scope+"flowstate-linux-x64"] = "flowstate-dev-flowstate-linux-x64-" + v + ".tgz"
	}
	for pkg, file := range named {
		if filepath.Base(pkgs[pkg]) != file {
			t.Errorf("scripts/npm-pack names %s %s", pkg, filepath.Base(pkgs[pkg]))
		}
		if !strings.Contains(text, "/tmp/flowstate-npm/"+file) {
			t.Errorf("the README's install without Go does not name %s (the package of this version)", file)
		}
	}
	prefix := t.TempDir()
	out, errs, code := run(t.TempDir(), "npm", "install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund",
		pkgs[scope+"flowstate"], pkgs[scope+"flowstate-"+platform()])
	if code != 0 {
		t.Fatalf("npm install -g: exit %d\n%s%s", code, out, errs)
	}
	if got, errs, code := run(t.TempDir(), filepath.Join(prefix, "bin", "flowstate"), "version"); code != 0 || strings.TrimSpace(got) != version {
		t.Errorf("flowstate version after npm install -g: exit %d, %q%s; want %q", code, got, errs, version)
	}
	native(t, filepath.Join(prefix, "bin", "flowstate"))

	// Without install scripts the node launcher stays the command, and works.
	prefix = t.TempDir()
	out, errs, code = run(t.TempDir(), "npm", "install", "-g", "--ignore-scripts", "--prefix", prefix, "--offline", "--no-audit", "--no-fund",
		pkgs[scope+"flowstate"], pkgs[scope+"flowstate-"+platform()])
	if code != 0 {
		t.Fatalf("npm install -g --ignore-scripts: exit %d\n%s%s", code, out, errs)
	}
	cmd := filepath.Join(prefix, "bin", "flowstate")
	if head := magic(t, cmd); head != "#!/u" {
		t.Errorf("--ignore-scripts: the flowstate command starts %q, want the node launcher", head)
	}
	if got, errs, code := run(t.TempDir(), cmd, "version"); code != 0 || strings.TrimSpace(got) != version {
		t.Errorf("the node launcher: exit %d, %q%s; want %q", code, got, errs, version)
	}
}

// magic is the first four bytes of the file the command is, links
// followed.
func magic(t *testing.T, command string) string {
	t.Helper()
	f, err := os.Open(command)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 4)
	if _, err := f.Read(b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// native checks that the flowstate command npm made is the native binary
// (ELF or Mach-O), not the node launcher.
func native(t *testing.T, command string) {
	t.Helper()
	switch m := magic(t, command); m {
	case "\x7fELF", "\xcf\xfa\xed\xfe":
	default:
		real, _ := filepath.EvalSymlinks(command)
		t.Errorf("%s (%s) starts %q: the postinstall did not put the native binary in place of the node launcher", command, real, m)
	}
}

// callTimes logs what a call costs through the native command and
// through the node launcher: the figures behind installing the first.
func callTimes(t *testing.T, run func(dir, name string, args ...string) (string, string, int), dir, command, launcher string) {
	t.Helper()
	const n = 10
	median := func(name string, args ...string) time.Duration {
		var took []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			if _, errs, code := run(dir, name, args...); code != 0 {
				t.Fatalf("%s %v: exit %d: %s", name, args, code, errs)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[n/2]
	}
	t.Logf("flowstate version, median of %d: %v as npm's command (native), %v through the node launcher",
		n, median(command, "version"), median("node", launcher, "version"))
}

// TestOnePlatformAnswer: the launcher and the postinstall take which
// package holds this machine's binary, and where it is, from one module
// (platform.js), so they cannot disagree. Before, each worked it out with
// its own copy of the code.
func TestOnePlatformAnswer(t *testing.T) {
	for file, module := range map[string]string{"install.js": "./platform.js", "bin/flowstate.js": "../platform.js"} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "npm", "flowstate", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.Contains(text, "require('"+module+"')") {
			t.Errorf("npm/flowstate/%s does not require %s", file, module)
		}
		for _, own := range []string{"process.platform", "require.resolve"} {
			if strings.Contains(text, own) {
				t.Errorf("npm/flowstate/%s reads %s itself; platform.js answers that", file, own)
			}
		}
	}
}
