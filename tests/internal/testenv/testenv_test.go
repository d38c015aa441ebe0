package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	if _, err := os.Stat(filepath.Join(RepoRoot(), "go.mod")); err != nil {
		t.Fatalf("RepoRoot %s has no go.mod: %v", RepoRoot(), err)
	}
}

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		cmd  *exec.Cmd
		code int
		err  bool
	}{
		{exec.Command("sh", "-c", "exit 0"), 0, false},
		{exec.Command("sh", "-c", "exit 3"), 3, false},
		{exec.Command(filepath.Join(t.TempDir(), "missing")), 0, true},
	} {
		code, err := ExitCode(tt.cmd.Run())
		if code != tt.code || (err != nil) != tt.err {
			t.Errorf("%v: ExitCode = %d, %v; want %d, error %v", tt.cmd.Args, code, err, tt.code, tt.err)
		}
	}
}

func TestSnapshotAndCopyTree(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{"a": "1", "d/b": "2", "skip/c": "3"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := CopyTree(dst, src, "skip"); err != nil {
		t.Fatal(err)
	}
	before, after := Snapshot(t, src, "skip"), Snapshot(t, dst)
	delete(before, ".") // the roots' own modes differ
	delete(after, ".")
	if diff := TreeDiff(before, after); diff != nil {
		t.Errorf("copy differs: %v", diff)
	}
	if !strings.HasSuffix(after["link"], " -> a") {
		t.Errorf("link recorded as %q", after["link"])
	}
	if err := os.WriteFile(filepath.Join(dst, "a"), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dst, "d", "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "new"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"added new", "changed a", "removed d/b"}
	after = Snapshot(t, dst)
	delete(after, ".")
	if got := TreeDiff(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("TreeDiff = %v, want %v", got, want)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("CLAUDE_CODE_SESSION_ID", "outer")
	t.Setenv("FLOWSTATE_WORKFLOW", "outer")
	t.Setenv("PATH", "/usr/bin:/bin")
	env := Env("/home/x", "A=1")
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, want := range []string{"\nPATH=/usr/bin:/bin\n", "\nHOME=/home/x\n", "\nA=1\n"} {
		if !strings.Contains(joined, want) {
			t.Errorf("Env lacks %q: %v", strings.TrimSpace(want), env)
		}
	}
	if strings.Contains(joined, "outer") {
		t.Errorf("Env leaks the caller's variables: %v", env)
	}
}

// test.sh installs the CLI the tests expect; the two versions must agree.
func TestTestShInstallsClaudeVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "CLAUDE_CODE_VERSION=" + ClaudeVersion + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("test.sh does not set %q", strings.TrimSpace(want))
	}
}
