package status

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/flowstate-dev/flowstate/lib/store"
)

// List is the table `flowstate list` prints of the project's workflows.
// STATUS tells a finished workflow from one still running its terminal
// state's phase: both show that state.
func List(all []store.Summary) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCOMMAND\tSCOPE\tSTATE\tSTATUS\tUPDATED")
	for _, s := range all {
		status := s.Status
		if status == "" {
			status = "-" // a checkpoint from before status was recorded
		}
		// From a checkpoint, which a cloned repository can carry: no
		// field may move the cursor or reach the terminal as an escape.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, oneLine(s.Command), oneLine(s.Scope), oneLine(s.CurrentState), oneLine(status), oneLine(s.UpdatedAt))
	}
	tw.Flush()
	return b.String()
}
