package worktree

import (
	"fmt"
	"slices"
	"testing"
)

func TestMainPath(t *testing.T) {
	const p = "/work/app"
	for _, tc := range []struct{ path, worktree, main string }{
		{"/work/app/.claude/worktrees/agent-a1/src/x.go", "/work/app/.claude/worktrees/agent-a1", "/work/app/src/x.go"},
		{"/work/app/.claude/worktrees/agent-a1", "/work/app/.claude/worktrees/agent-a1", "/work/app"},
		{"/work/app/.claude/worktrees/wf_1-2/.flowstate/specs/w/s.md", "/work/app/.claude/worktrees/wf_1-2", "/work/app/.flowstate/specs/w/s.md"},
		{"/work/app/.claude/worktrees/agent-a1/../agent-b2/x", "/work/app/.claude/worktrees/agent-b2", "/work/app/x"},
		{"/work/app/.claude/worktrees", "", "/work/app/.claude/worktrees"},
		{"/work/app/src/x.go", "", "/work/app/src/x.go"},
		{"/work/other/.claude/worktrees/agent-a1/x", "", "/work/other/.claude/worktrees/agent-a1/x"},
		{"src/x.go", "", "src/x.go"},
	} {
		if got := Of(p, tc.path); got != tc.worktree {
			t.Errorf("Of(%s) = %q, want %q", tc.path, got, tc.worktree)
		}
		if got := MainPath(p, tc.path); got != tc.main {
			t.Errorf("MainPath(%s) = %q, want %q", tc.path, got, tc.main)
		}
	}
	if got := BranchOf("/work/app/.claude/worktrees/agent-a1"); got != "worktree-agent-a1" {
		t.Errorf("BranchOf = %q", got)
	}
}

func TestParseStatus(t *testing.T) {
	out := " M routes.txt\x00R  new.txt\x00old.txt\x00?? notes/\x00?? .claude/\x00A  .flowstate/specs/w/x.md\x00 D gone.txt\x00"
	got := ParseStatus(out)
	want := []Change{{" M", "routes.txt"}, {"R ", "new.txt"}, {"??", "notes/"}, {"??", ".claude/"}, {"A ", ".flowstate/specs/w/x.md"}, {" D", "gone.txt"}}
	if !slices.Equal(got, want) {
		t.Errorf("ParseStatus = %v, want %v", got, want)
	}
	if got, want := Outside(got), []Change{{" M", "routes.txt"}, {"R ", "new.txt"}, {"??", "notes/"}, {" D", "gone.txt"}}; !slices.Equal(got, want) {
		t.Errorf("Outside = %v, want %v", got, want)
	}
	if got := fmt.Sprint(Outside([]Change{{"??", ".flowstate"}, {"??", ".claudefile"}})); got != "[.claudefile (untracked)]" {
		t.Errorf("Outside of the directories' own entries = %s", got)
	}
}

func TestParseWorktrees(t *testing.T) {
	out := "worktree /work/app\nHEAD 1111\nbranch refs/heads/main\n\n" +
		"worktree /work/app/.claude/worktrees/agent-a1\nHEAD 2222\nbranch refs/heads/worktree-agent-a1\n\n" +
		"worktree /work/app/.claude/worktrees/agent-d4\nHEAD 3333\ndetached\n\n"
	got := ParseWorktrees(out)
	want := []Tree{{"/work/app", "1111", "main"}, {"/work/app/.claude/worktrees/agent-a1", "2222", "worktree-agent-a1"}, {"/work/app/.claude/worktrees/agent-d4", "3333", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("ParseWorktrees = %v, want %v", got, want)
	}
	if tr, ok := Find(got, "/work/app/.claude/worktrees/agent-a1/"); !ok || tr.Branch != "worktree-agent-a1" {
		t.Errorf("Find = %v, %v", tr, ok)
	}
	if _, ok := Find(got, "/work/app/.claude/worktrees/agent-zz"); ok {
		t.Errorf("Find found a worktree git does not have")
	}
}

func TestTouched(t *testing.T) {
	merged := []Merge{
		{Worker: "phase_1", Status: Merged, Files: []string{"a.go"}},
		{Worker: "phase_2", Status: Merged, Files: []string{"routes.txt", "b.go"}},
		{Worker: "phase_3", Status: Empty},
		{Worker: "phase_4", Status: Conflict, Files: []string{"routes.txt"}},
	}
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{[]string{"routes.txt"}, []string{"phase_2"}},
		{[]string{"a.go", "b.go"}, []string{"phase_1", "phase_2"}},
		{[]string{"c.go"}, nil},
	} {
		if got := Touched(merged, tc.files); !slices.Equal(got, tc.want) {
			t.Errorf("Touched(%v) = %v, want %v", tc.files, got, tc.want)
		}
	}
}

func TestUnmade(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"Failed to create worktree: Preparing worktree (new branch 'worktree-agent-aab5ebda187926969')\nfatal: failed to read x/commondir: Success", "/p/.claude/worktrees/agent-aab5ebda187926969"},
		{"Failed to create worktree: fatal: failed to read commondir: Success", ""},
		{"(new branch 'worktree-agent-../../x')", ""},
		{"(new branch 'worktree-agent-')", ""},
	} {
		if got := Unmade("/p", c.err); got != c.want {
			t.Errorf("Unmade(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
