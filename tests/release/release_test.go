// Package releasetest checks the release configuration: .goreleaser.yaml
// builds with scripts/build's flags, for the targets scripts/npm-pack
// packs; where goreleaser is installed, it accepts the file and a
// snapshot release makes an archive per target with its checksum.
package releasetest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

func read(t *testing.T, rel string) string {
	t.Helper()
	return string(readFile(t, filepath.Join(testenv.RepoRoot(), rel)))
}

// match returns the first submatch of re in s, failing the test without one.
func match(t *testing.T, what, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s: no match for %s", what, re)
	}
	return m[1]
}

// TestReleaseBuildsWhatScriptsBuildBuilds: the release binaries are built
// as scripts/build builds every other one (one definition of the flags,
// kept in two syntaxes), for the platforms of the npm packages.
func TestReleaseBuildsWhatScriptsBuildBuilds(t *testing.T) {
	build, cfg, npm := read(t, "scripts/build"), read(t, ".goreleaser.yaml"), read(t, "scripts/npm-pack")

	if !strings.Contains(build, `build -trimpath -tags urfave_cli_no_docs \`) {
		t.Fatalf("scripts/build's go build line changed; update .goreleaser.yaml and this test with it")
	}
	pkg := match(t, "scripts/build", build, `(?m)^pkg=(\S+)$`)
	ldflags := match(t, "scripts/build", build, `-ldflags "(-s -w -X [^"]*)"`)
	ldflags = strings.NewReplacer("$pkg", pkg, "$version", "{{ .Version }}", "$commit", "{{ .ShortCommit }}").Replace(ldflags)
	for _, want := range []string{"\n      - -trimpath\n", "\n      - urfave_cli_no_docs\n", "\n      - " + ldflags + "\n", "\n      - CGO_ENABLED=0\n", "main: ./cmd/flowstate\n", "version: 2\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf(".goreleaser.yaml lacks %q (scripts/build's flags)", strings.TrimSpace(want))
		}
	}
	if !strings.Contains(npm, "CGO_ENABLED=0 sh \"$root/scripts/build\"") {
		t.Errorf("scripts/npm-pack does not build with CGO_ENABLED=0 as the release does")
	}

	var targets []string
	for _, goos := range strings.Split(match(t, ".goreleaser.yaml", cfg, `goos: \[([^]]*)\]`), ", ") {
		for _, goarch := range strings.Split(match(t, ".goreleaser.yaml", cfg, `goarch: \[([^]]*)\]`), ", ") {
			targets = append(targets, goos+"/"+goarch)
		}
	}
	packed := strings.Fields(match(t, "scripts/npm-pack", npm, `(?m)^targets="([^"]*)"$`))
	slices.Sort(targets)
	slices.Sort(packed)
	if !slices.Equal(targets, packed) {
		t.Errorf("release targets %v differ from the npm packages' %v", targets, packed)
	}
}

// TestGoreleaserSnapshot runs goreleaser where it is installed (it is not
// part of the toolchain test.sh sets up): `goreleaser check`, then a
// snapshot release of a committed copy of the source, whose archives must
// match checksums.txt and whose binary for this machine must run; a
// release tag other than the plugin's version is refused.
func TestGoreleaserSnapshot(t *testing.T) {
	goreleaser, err := exec.LookPath("goreleaser")
	if err != nil {
		t.Skip("goreleaser is not installed (https://goreleaser.com/install/)")
	}
	if testing.Short() {
		t.Skip("builds four binaries")
	}
	try := func(dir string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		out, err := try(dir, name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	run(testenv.RepoRoot(), goreleaser, "check")

	src := t.TempDir()
	if err := testenv.SourceTree(src); err != nil {
		t.Fatal(err)
	}
	run(src, "git", "init", "-q")
	run(src, "git", "add", "-A")
	run(src, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "snapshot")
	run(src, goreleaser, "release", "--snapshot", "--clean")

	dist := filepath.Join(src, "dist")
	sums := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dist, "checksums.txt")))), "\n")
	if len(sums) != 4 {
		t.Fatalf("checksums.txt has %d lines, want one per target:\n%s", len(sums), strings.Join(sums, "\n"))
	}
	mine := ""
	for _, line := range sums {
		sum, name, _ := strings.Cut(line, "  ")
		got := sha256.Sum256(readFile(t, filepath.Join(dist, name)))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: checksum differs from checksums.txt", name)
		}
		if strings.HasSuffix(name, "_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz") {
			mine = name
		}
	}
	if mine == "" {
		t.Fatalf("no archive for %s/%s in %v", runtime.GOOS, runtime.GOARCH, sums)
	}
	run(dist, "tar", "-xzf", mine, "flowstate", "LICENSE", "README.md")
	if v := run(dist, filepath.Join(dist, "flowstate"), "version"); !strings.HasPrefix(v, "flowstate ") || !strings.Contains(v, "-snapshot (commit ") {
		t.Errorf("the released binary says %q", v)
	}

	run(src, "git", "remote", "add", "origin", "https://github.com/flowstate-dev/flowstate.git")
	run(src, "git", "tag", "v9.9.9")
	if out, err := try(src, goreleaser, "build", "--clean", "--single-target"); err == nil || !strings.Contains(out, "tag v9.9.9 is not the version") {
		t.Errorf("a release tagged v9.9.9, not the plugin's version: %v\n%s", err, out)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
