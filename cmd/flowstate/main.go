// Command flowstate keeps workflow state for Claude Code commands.
package main

import (
	"os"

	"github.com/flowstate-dev/flowstate/lib/app"
)

func main() {
	os.Exit(app.Main(os.Args, app.OS()))
}
