package app

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestPermute(t *testing.T) {
	e := &env{}
	app := &cli.App{Flags: e.globalFlags(), Commands: e.commands()}
	tests := []struct{ in, want string }{
		{"fs sm-transition plan --reason go", "fs sm-transition --reason go -- plan"},
		{"fs --workflow w sm-transition plan", "fs --workflow w sm-transition -- plan"},
		{"fs sm-status --json --workflow w", "fs sm-status --json --workflow w"},
		{"fs checkpoint-set p 1 --increment", "fs checkpoint-set --increment -- p 1"},
		{"fs checkpoint-set --increment p -- -11", "fs checkpoint-set --increment -- p -11"},
		{"fs sm-transition plan --unknown", "fs sm-transition --unknown -- plan"},
		{"fs checkpoint-set --increment p -- --x", "fs checkpoint-set --increment -- p --x"},
		// Values are verbatim for commands that store them; flags before
		// or after them are flags.
		{"fs state-append K --stdin", "fs state-append -- K --stdin"},
		{"fs log-append n --workflow", "fs log-append -- n --workflow"},
		{"fs state-append K v --workflow x", "fs state-append --workflow x -- K v"},
		{"fs state-append --workflow x K -h", "fs state-append --workflow x -- K -h"},
		{"fs state-append K -- --workflow x", "fs state-append --workflow x -- K --"},
		{"fs state-append --stdin", "fs state-append --stdin"},
		{"fs log-append n {} --bogus", "fs log-append --bogus -- n {}"},
		{"fs sm-next --help", "fs sm-next --help"},
		{"fs sm-transition plan -h", "fs sm-transition --help"},
		{"fs", "fs"},
		{"fs nosuch a --b", "fs nosuch a --b"},
	}
	for _, tt := range tests {
		got := strings.Join(permute(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("permute(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
