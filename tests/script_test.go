// Package tests runs flowstate the way Claude Code does: every bash block
// a separate process. Each tests/script/*.txtar is a testscript whose
// `exec bash -c` lines are the blocks; `flowstate` on their PATH is this
// test binary acting as the real command.
package tests

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flowstate-dev/flowstate/lib/app"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flowstate": func() { os.Exit(app.Main(os.Args, app.OS())) },
	})
}

func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	root := testenv.RepoRoot()
	testscript.Run(t, testscript.Params{
		Dir:                 "script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// A project with no session: each script sets what it needs.
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("REPO", root)
			env.Setenv("FLOWSTATE_LOCK_WAIT", "10s")
			return os.MkdirAll(env.WorkDir+"/home", 0o700)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
		},
	})
}

// exitcode N cmd args...: runs cmd and requires exit status N, since
// testscript's `!` only says "non-zero". Output goes to stdout/stderr
// for the following assertions.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want := args[0]
	code, err := testenv.ExitCode(ts.Exec(args[1], args[2:]...))
	if err != nil {
		ts.Fatalf("exec %s: %v", args[1], err)
	}
	if got := strconv.Itoa(code); got != want {
		ts.Fatalf("%s exited %d, want %s", args[1], code, want)
	}
}
