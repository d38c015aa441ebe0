// Command fsidle is flowstate without its work: the same packages linked
// and initialised, then exit. bench/ times it beside a no-op Go binary to
// show what starting a binary of flowstate's size costs before any
// command runs.
package main

import (
	"os"

	"github.com/flowstate-dev/flowstate/lib/app"
)

func main() {
	// Never true in the bench; it keeps app.Main, and with it every
	// command, linked as in flowstate, which a blank import would not.
	if os.Getenv("FSIDLE_RUN") == "1" {
		os.Exit(app.Main(os.Args, app.OS()))
	}
}
