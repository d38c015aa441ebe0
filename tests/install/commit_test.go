package installtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a team commits: after an install, git sees only what every
// teammate shares (commands, agents, settings.json with the hooks, the
// manifest), the same bytes on every machine; what is one machine's (the
// binary, built for its platform, and the backup of the settings) stays
// out of git's sight in .claude/bin. Uninstall still restores all.

// gitStatus is `git status --porcelain --untracked-files=all` in dir.
func gitStatus(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	var paths []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l != "" {
			paths = append(paths, l[3:])
		}
	}
	slices.Sort(paths)
	return paths
}

// repo is a git repository with the user's settings.json committed.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := project(t, "permissions-model.json")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func teamFiles(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		ok := p == ".claude/settings.json" || p == ".claude/flowstate-manifest.json" ||
			strings.HasPrefix(p, ".claude/commands/") || strings.HasPrefix(p, ".claude/agents/") || strings.HasPrefix(p, ".claude/workflows/")
		if !ok {
			t.Errorf("git sees %s after the install: not a file a team commits", p)
		}
	}
	if !slices.Contains(paths, ".claude/settings.json") || !slices.Contains(paths, ".claude/commands/coordinate.md") {
		t.Errorf("git status %v lacks the files a team commits", paths)
	}
}

func TestGitSeesOnlyWhatATeamCommits(t *testing.T) {
	dir := repo(t)
	before := snapshot(t, dir)
	mustRun(t, dir, "install")
	teamFiles(t, gitStatus(t, dir))
	if _, err := os.Stat(filepath.Join(dir, ".claude", "bin", "settings.json.flowstate-backup")); err != nil {
		t.Errorf("no backup of the user's settings: %v", err)
	}
	manifest := readFile(t, filepath.Join(dir, ".claude", "flowstate-manifest.json"))

	// Another machine: another binary (another platform, another build).
	other := filepath.Join(t.TempDir(), "flowstate")
	writeFile(t, other, append(readFile(t, bin), "another build"...))
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(other, "install")
	cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install from another build: %v\n%s", err, out)
	}
	if got := readFile(t, filepath.Join(dir, ".claude", "flowstate-manifest.json")); !bytes.Equal(got, manifest) {
		t.Errorf("the committed manifest changed with the machine's binary:\n%s\nwas\n%s", got, manifest)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, ".claude", "bin", "flowstate")), readFile(t, other)) {
		t.Errorf("the reinstall did not put this machine's binary in place")
	}
	teamFiles(t, gitStatus(t, dir))

	mustRun(t, dir, "uninstall")
	sameSnapshot(t, "uninstall", before, snapshot(t, dir))
	if st := gitStatus(t, dir); len(st) != 0 {
		t.Errorf("git sees %v after the uninstall", st)
	}
}

// An install of an older version left the backup beside settings.json,
// where git saw it: the next install moves it into .claude/bin, and
// uninstall restores the user's settings from it.
func TestOlderBackupMovedOutOfGitsSight(t *testing.T) {
	dir := repo(t)
	before := snapshot(t, dir)
	mustRun(t, dir, "install")
	backup := filepath.Join(dir, ".claude", "bin", "settings.json.flowstate-backup")
	legacy := filepath.Join(dir, ".claude", "settings.json.flowstate-backup")
	if err := os.Rename(backup, legacy); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "install")
	if _, err := os.Stat(legacy); err == nil {
		t.Errorf("the older backup is still beside settings.json")
	}
	teamFiles(t, gitStatus(t, dir))
	mustRun(t, dir, "uninstall")
	sameSnapshot(t, "uninstall", before, snapshot(t, dir))

	// Uninstall of such an install, not installed again since, still finds it.
	mustRun(t, dir, "install")
	if err := os.Rename(backup, legacy); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "uninstall")
	sameSnapshot(t, "uninstall of an older install", before, snapshot(t, dir))
}
