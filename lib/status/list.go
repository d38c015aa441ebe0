package status

import (
	"strings"

	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/term"
)

// List is the table `flowstate list` prints of the project's workflows,
// one row each. STATUS tells a finished workflow from one still running
// its terminal state's phase: both show that state. Fitted to width (0:
// not at all), rows are never broken: the time loses its seconds and
// year, COMMAND (the ID starts with it) goes, then the widest of SCOPE,
// STATE and STATUS is shortened, one column at a time; the ID stays whole
// for people to copy.
func List(all []store.Summary, width int) string {
	rows := [][]string{{"ID", "COMMAND", "SCOPE", "STATE", "STATUS", "UPDATED"}}
	for _, s := range all {
		status := s.Status
		if status == "" {
			status = "-" // a checkpoint from before status was recorded
		}
		// From a checkpoint, which a cloned repository can carry: no
		// field may move the cursor or reach the terminal as an escape.
		rows = append(rows, []string{s.ID, oneLine(s.Command), oneLine(s.Scope), oneLine(s.CurrentState), oneLine(status), oneLine(s.UpdatedAt)})
	}
	widths := columns(rows)
	fits := func() bool { return width <= 0 || sum(widths)+2*(len(widths)-1) <= width }
	if !fits() {
		for _, r := range rows[1:] {
			r[5] = shortTime(r[5])
		}
		widths = columns(rows)
	}
	if !fits() {
		for i := range rows {
			rows[i] = append(rows[i][:1], rows[i][2:]...)
		}
		widths = columns(rows)
	}
	// SCOPE, STATE, STATUS: never narrower than their heading's first letters.
	for !fits() {
		widest := 1
		for c := 2; c <= 3; c++ {
			if widths[c] > widths[widest] {
				widest = c
			}
		}
		if widths[widest] <= 5 {
			break
		}
		widths[widest]--
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for c, cell := range r {
			cell = term.Shorten(cell, widths[c])
			line.WriteString(cell)
			if c < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[c]-term.Len(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

func columns(rows [][]string) []int {
	w := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, cell := range r {
			w[c] = max(w[c], term.Len(cell))
		}
	}
	return w
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// shortTime is an RFC 3339 time without its year and seconds:
// 2025-11-07T14:30:22Z is 11-07 14:30.
func shortTime(s string) string {
	if len(s) >= 16 && s[4] == '-' && s[10] == 'T' {
		return s[5:10] + " " + s[11:16]
	}
	return s
}
