package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete sources `flowstate completion bash` in a fresh bash, runs the
// completion function for the words as typed (the last one being
// completed) and returns the candidates, one per line.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	return completeIn(t, t.TempDir(), script, words...)
}

// completeIn is complete in project.
func completeIn(t *testing.T, project, script string, words ...string) []string {
	t.Helper()
	prog := `source <(flowstate completion bash) || exit 1
` + script + `
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_flowstate_complete
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", append([]string{"-c", prog, "bash"}, words...)...)
	cmd.Env = []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_PROJECT_DIR=" + project}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// A workflow's states, its id and every flag are offered where they go;
// a command is never run to answer a TAB.
func TestBashCompletionStatesWorkflowsFlags(t *testing.T) {
	project := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "flowstate"), args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_PROJECT_DIR=" + project}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("flowstate %v: %v\n%s", args, err, out)
		}
	}
	run("sm-init", "--workflow", "wf-a", "--description", "d", "--command", "coordinate", "--scope", "full-implementation")
	run("--workflow", "wf-a", "sm-transition", "research")
	run("--workflow", "wf-a", "sm-transition", "plan")
	run("sm-init", "--workflow", "wf-b", "--description", "d", "--command", "coordinate", "--scope", "research-only")
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"flowstate", "--workflow", "wf-a", "sm-transition", ""}, "implement complete debug"},
		{[]string{"flowstate", "sm-transition", "--workflow", "wf-a", "i"}, "implement"},
		{[]string{"flowstate", "rewind", "--workflow=wf-a", ""}, "initialize research plan"},
		{[]string{"flowstate", "--workflow", ""}, "wf-b wf-a"},
		{[]string{"flowstate", "status", "--workflow", "wf-"}, "wf-b wf-a"},
		{[]string{"flowstate", "sm-init", "--scope", "research-"}, "research-and-plan research-and-revise research-only"},
		{[]string{"flowstate", "sm-init", "--"}, "--description --command --scope --complexity --topics --classification --min-confidence --machine --gate --agents --budget --workflow --help"},
		{[]string{"flowstate", "status", "-"}, "--json --timeline --workflow --help -h"},
		{[]string{"flowstate", "sm-transition", "--", "--"}, ""},
	} {
		if got := strings.Join(completeIn(t, project, "", c.words...), " "); got != c.want {
			t.Errorf("%q<TAB> offered %q, want %q", c.words, got, c.want)
		}
	}
	// sm-init -- <TAB> once ran sm-init (urfave/cli runs a command when a
	// "--" precedes its completion flag).
	completeIn(t, project, "", "flowstate", "sm-init", "--", "")
	completeIn(t, project, "", "flowstate", "cancel", "--reason", "x", "--", "")
	if entries, _ := os.ReadDir(filepath.Join(project, ".claude", "state", "workflows")); len(entries) != 2 {
		t.Errorf("completing created or removed workflows: %d of them", len(entries))
	}
}

func TestBashCompletionRegistered(t *testing.T) {
	out := complete(t, `complete -p flowstate; exit 0`)
	if got := strings.Join(out, " "); got != "complete -o default -F _flowstate_complete flowstate" {
		t.Fatalf("complete -p flowstate: %q", got)
	}
}

func TestBashCompletionCommands(t *testing.T) {
	got := complete(t, "", "flowstate", "sm-")
	var want []string
	names := commandNames(t)
	for _, name := range names {
		if strings.HasPrefix(name, "sm-") {
			want = append(want, name)
		}
	}
	if !slices.Contains(want, "sm-init") {
		t.Fatalf("flowstate help lists no sm-init: %v", names)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("flowstate sm-<TAB> offered %v, want %v", got, want)
	}
	if got := complete(t, "", "flowstate", "compl"); strings.Join(got, " ") != "completion" {
		t.Fatalf("flowstate compl<TAB> offered %v", got)
	}
	if got := complete(t, "", "flowstate", "--wo"); strings.Join(got, " ") != "--workflow" {
		t.Fatalf("flowstate --wo<TAB> offered %v", got)
	}
}

// flowstate lint completes as a command, and its FILE|DIR arguments are
// left to bash's file names (-o default): flowstate offers none.
func TestBashCompletionLint(t *testing.T) {
	if got := complete(t, "", "flowstate", "lin"); strings.Join(got, " ") != "lint" {
		t.Fatalf("flowstate lin<TAB> offered %v", got)
	}
	if got := complete(t, "", "flowstate", "lint", ""); len(got) != 0 {
		t.Fatalf("flowstate lint <TAB> offered %v, want nothing so that bash completes file names", got)
	}
}

// Completing a command's own flags needs the command's arguments passed
// through to urfave/cli unchanged: lib/app's argument permutation must
// leave a trailing --generate-bash-completion in place.
func TestBashCompletionCommandFlags(t *testing.T) {
	if got := complete(t, "", "flowstate", "sm-init", "--desc"); strings.Join(got, " ") != "--description" {
		t.Fatalf("flowstate sm-init --desc<TAB> offered %v", got)
	}
	if got := complete(t, "", "flowstate", "completion", ""); strings.Join(got, " ") != "bash zsh" {
		t.Fatalf("flowstate completion <TAB> offered %v", got)
	}
}

// The zsh script, run with zsh's completion builtins stubbed (_describe
// prints what it would offer), offers commands with their usage, flags,
// and files where flowstate has nothing to offer.
func TestZshCompletion(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed, so the zsh completion script goes untested here; CI (test.sh) does not install zsh either")
	}
	prog := `compdef() { :; }
_describe() { print -l -- "${(@P)${@[-1]}}"; }
_files() { print FILES; }
source <(flowstate completion zsh) || exit 1
words=("$@"); CURRENT=$#
_flowstate`
	run := func(words ...string) string {
		cmd := exec.Command(zsh, append([]string{"-f", "-c", prog, "zsh"}, words...)...)
		cmd.Env = []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run("flowstate", "sm-"); !strings.Contains(out, "sm-init:create a workflow") {
		t.Errorf("flowstate sm-<TAB> in zsh:\n%s", out)
	}
	if out := run("flowstate", "--wo"); out != "--workflow\n" {
		t.Errorf("flowstate --wo<TAB> in zsh: %q", out)
	}
	if out := run("flowstate", "rewind", ""); out != "initialize\nresearch\nplan\nimplement\ntest\ndocument\ncomplete\ndebug\n" {
		t.Errorf("flowstate rewind <TAB> in zsh, without a workflow: %q", out)
	}
	if out := run("flowstate", "graph", "--machine", ""); out != "FILES\n" {
		t.Errorf("flowstate graph --machine <TAB> in zsh: %q", out)
	}
}
