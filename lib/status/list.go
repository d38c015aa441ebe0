package status

import (
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/store"
	"github.com/flowstate-dev/flowstate/lib/term"
)

// Row is one workflow of the table: its summary, and how long its run
// took, what it spent and (with prices) cost, so that two runs of one
// command can be compared; "" where not known.
type Row struct {
	store.Summary
	Took, Tokens, Cost string
}

// List is the table `flowstate list` prints of the project's workflows,
// one row each. STATUS tells a finished workflow from one still running
// its terminal state's phase: both show that state. COST is there when a
// row has one. Fitted to width (0: not at all), rows are never broken:
// the time loses its seconds and year, COMMAND (the ID starts with it)
// goes, then UPDATED, then SCOPE, then the wider of STATE and STATUS is
// shortened, one column at a time; the ID stays whole for people to
// copy, and what the runs took and spent stays for comparing them.
func List(all []Row, width int) string {
	head := []string{"ID", "COMMAND", "SCOPE", "STATE", "STATUS", "TOOK", "TOKENS", "COST", "UPDATED"}
	rows := [][]string{head}
	for _, s := range all {
		status := s.Status
		if status == "" {
			status = "-" // a checkpoint from before status was recorded
		}
		// From a checkpoint, which a cloned repository can carry: no
		// field may move the cursor or reach the terminal as an escape.
		rows = append(rows, []string{s.ID, oneLine(s.Command), oneLine(s.Scope), oneLine(s.CurrentState), oneLine(status),
			s.Took, s.Tokens, s.Cost, oneLine(s.UpdatedAt)})
	}
	t := table{rows: rows}
	if !slices.ContainsFunc(all, func(r Row) bool { return r.Cost != "" }) {
		t.drop("COST")
	}
	if !t.fits(width) {
		for _, r := range t.rows[1:] {
			r[len(r)-1] = shortTime(r[len(r)-1])
		}
	}
	for _, col := range []string{"COMMAND", "UPDATED", "SCOPE"} {
		if !t.fits(width) {
			t.drop(col)
		}
	}
	widths := columns(t.rows)
	// STATE, STATUS: never narrower than their heading's first letters.
	for width > 0 && sum(widths)+2*(len(widths)-1) > width {
		state, status := slices.Index(t.rows[0], "STATE"), slices.Index(t.rows[0], "STATUS")
		widest := state
		if widths[status] > widths[state] {
			widest = status
		}
		if widths[widest] <= 5 {
			break
		}
		widths[widest]--
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for c, cell := range r {
			cell = term.Shorten(cell, widths[c])
			pad := strings.Repeat(" ", widths[c]-term.Len(cell))
			if numeric(t.rows[0][c]) {
				cell, pad = pad+cell, ""
			}
			line.WriteString(cell + pad)
			if c < len(r)-1 {
				line.WriteString("  ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// numeric reports whether the column headed h holds numbers, aligned
// right under their heading.
func numeric(h string) bool { return h == "TOOK" || h == "TOKENS" || h == "COST" }

// table is the cells of List, its heading first.
type table struct{ rows [][]string }

func (t *table) fits(width int) bool {
	return width <= 0 || sum(columns(t.rows))+2*(len(t.rows[0])-1) <= width
}

// drop takes the column named col out.
func (t *table) drop(col string) {
	c := slices.Index(t.rows[0], col)
	if c < 0 {
		return
	}
	for i := range t.rows {
		t.rows[i] = slices.Delete(t.rows[i], c, c+1)
	}
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
