package app

import (
	"bytes"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpCompletesTheAppsCommands: `flowstate help <TAB>` offers the
// visible commands of the app that answers, read from it. Before, it built
// the whole command tree a second time (Commands()) and offered that.
func TestHelpCompletesTheAppsCommands(t *testing.T) {
	var out bytes.Buffer
	e := &env{IO: IO{Stdout: &out, Getenv: func(string) string { return "" }}}
	app := &cli.App{Commands: []*cli.Command{{Name: "help"}, {Name: "alpha"}, {Name: "hidden", Hidden: true}}}
	e.complete(app, []string{"help", ""})
	if got, want := out.String(), "help\nalpha\n"; got != want {
		t.Errorf("help <TAB> offers %q, want %q (the app's visible commands)", got, want)
	}
}
