package status

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/flowstate-dev/flowstate/lib/term"
	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// Timeline draws a run for `flowstate status --timeline`: one time axis
// as wide as the terminal (width; 0 is 100 columns), the states on one
// row by their letters, the waits for a person and the failures below,
// and the agents on as many rows as were at work at once: agents side by
// side ran in parallel, one after another in a row ran in turn. A legend
// names the letters with each state's time and tokens.
func Timeline(t timeline.Timeline, width int, color bool) string {
	if width <= 0 {
		width = 100
	}
	const label = 9
	c := newCanvas(t.Start, t.End, max(width-label-1, 10), label, painter(color))
	head := fmt.Sprintf("%s  %s · %s", t.ID, oneLine(t.Status), Duration(c.span))
	if total := t.Total(); !total.Zero() {
		head += " · " + usage.Tokens(total.Total()) + " tokens"
	}
	fmt.Fprintf(&c.out, "%s\n", c.p.paint(bold, term.Shorten(head, width)))
	c.out.WriteString(strings.Repeat(" ", label+1) + axis(c.cols, c.span) + "\n")

	keys := stateKeys(t.States)
	for _, s := range t.States {
		end := s.End.Add(-time.Nanosecond)
		if !s.End.After(s.Start) {
			end = s.Start // the state a run ended in: a point
		}
		c.fill(s.Start, end, keys[s.Name], stateColor(s))
	}
	c.draw("states")
	if len(t.Waits) > 0 {
		for _, w := range t.Waits {
			c.fill(w.Start, endOr(w.End, t.End), '▒', yellow)
		}
		c.draw("waiting")
	}
	if len(t.Marks) > 0 {
		for _, m := range t.Marks {
			c.fill(m.At, m.At, markGlyph(m.Kind), red)
		}
		c.draw("failures")
	}
	lanes := make([][]timeline.Agent, t.Lanes)
	for _, a := range t.Agents {
		lanes[a.Lane] = append(lanes[a.Lane], a)
	}
	for n, lane := range lanes {
		for k, a := range lane {
			ch, col := agentGlyph(a, k)
			c.fill(a.Start, endOr(a.End, t.End).Add(-time.Nanosecond), ch, col)
		}
		name := ""
		if n == 0 {
			name = "agents"
		}
		c.draw(name)
	}
	c.out.WriteString(legend(t, keys, width))
	return c.out.String()
}

// canvas draws rows of glyphs on a time axis cols wide, each row after a
// label.
type canvas struct {
	out    strings.Builder
	p      painter
	start  time.Time
	span   time.Duration
	cols   int
	label  int
	row    []rune
	colors []string
}

func newCanvas(start, end time.Time, cols, label int, p painter) *canvas {
	span := end.Sub(start)
	if span <= 0 {
		span = time.Second
	}
	c := &canvas{p: p, start: start, span: span, cols: cols, label: label, row: make([]rune, cols), colors: make([]string, cols)}
	c.clear()
	return c
}

// col is the column of a time, within the axis.
func (c *canvas) col(at time.Time) int {
	col := int(float64(at.Sub(c.start)) / float64(c.span) * float64(c.cols))
	return min(max(col, 0), c.cols-1)
}

// fill draws ch from the column of from to that of to, both included.
func (c *canvas) fill(from, to time.Time, ch rune, color string) {
	for i := c.col(from); i <= c.col(to); i++ {
		c.row[i], c.colors[i] = ch, color
	}
}

// draw writes the row after its label and clears it for the next.
func (c *canvas) draw(label string) {
	var line strings.Builder
	for i, r := range c.row {
		if c.colors[i] == "" {
			line.WriteRune(r)
		} else {
			line.WriteString(c.p.paint(c.colors[i], string(r)))
		}
	}
	fmt.Fprintf(&c.out, "%-*s %s\n", c.label, label, strings.TrimRight(line.String(), " "))
	c.clear()
}

func (c *canvas) clear() {
	for i := range c.row {
		c.row[i], c.colors[i] = ' ', ""
	}
}

// endOr is end, or the run's end while it lasts (end is zero).
func endOr(end, runEnd time.Time) time.Time {
	if end.IsZero() {
		return runEnd
	}
	return end
}

// stateColor is how a stay is drawn: red if it failed, yellow while the
// workflow is in it, dim when a rewind took it back.
func stateColor(s timeline.State) string {
	switch {
	case s.Failed:
		return red
	case s.Current:
		return yellow
	case s.Rewound:
		return dim
	}
	return ""
}

// axis is the ruler: a tick ┊ with its time about every 16 columns.
func axis(cols int, span time.Duration) string {
	line := []rune(strings.Repeat(" ", cols))
	for c := 0; c < cols; c += 16 {
		text := []rune("┊" + Duration(time.Duration(float64(span)*float64(c)/float64(cols))))
		if c+len(text) > cols {
			break // a label cut short would read as another time
		}
		copy(line[c:], text)
	}
	return strings.TrimRight(string(line), " ")
}

// stateKeys gives each state one letter: its first, else its first in
// upper case, else another of its letters, else a digit.
func stateKeys(states []timeline.State) map[string]rune {
	keys, used := map[string]rune{}, map[rune]bool{}
	for _, s := range states {
		if _, ok := keys[s.Name]; ok {
			continue
		}
		var cands []rune
		for _, r := range s.Name {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				cands = append(cands, unicode.ToLower(r), unicode.ToUpper(r))
			}
		}
		cands = append(cands, []rune("0123456789")...)
		keys[s.Name] = '?'
		for _, r := range cands {
			if !used[r] {
				keys[s.Name], used[r] = r, true
				break
			}
		}
	}
	return keys
}

// agentGlyph is how an agent's bar is drawn: by its status, and for done
// agents alternating, so that two in a row are told apart.
func agentGlyph(a timeline.Agent, k int) (rune, string) {
	switch {
	case a.Rewound:
		return '░', dim
	case a.Status == timeline.Failed:
		return 'x', red
	case a.Status == timeline.Stuck:
		return '!', red
	case a.Status == timeline.Running:
		return '>', yellow
	case a.Status == timeline.Lost:
		return '?', dim
	case k%2 == 1:
		return '▓', green
	}
	return '█', green
}

func markGlyph(kind string) rune {
	switch kind {
	case "retry":
		return '↻'
	case "rewind":
		return '↺'
	}
	return '✗'
}

// legend names the state letters with their time and tokens, and the
// glyphs, wrapped to width between its phrases, never inside one.
func legend(t timeline.Timeline, keys map[string]rune, width int) string {
	took := map[string]time.Duration{}
	for _, s := range t.States {
		took[s.Name] += s.End.Sub(s.Start)
	}
	var parts []string
	for _, s := range t.Spent() {
		part := fmt.Sprintf("%c %s %s", keys[s.State], oneLine(s.State), Duration(took[s.State]))
		if !s.Usage.Zero() {
			part += " " + usage.Tokens(s.Usage.Total()) + " tokens"
		}
		parts = append(parts, part)
	}
	glyphs := []string{"█▓ done", "> running", "x failed", "! stuck", "? never seen stopping", "░ rewound", "▒ waiting for a person", "✗ error ↻ retry ↺ rewind"}
	return "\n" + term.Join(parts, " · ", width) + "\n" + term.Join(glyphs, " · ", width) + "\n"
}
