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
	cols := max(width-label-1, 10)
	p := painter(color)
	span := t.End.Sub(t.Start)
	if span <= 0 {
		span = time.Second
	}
	col := func(at time.Time) int {
		c := int(float64(at.Sub(t.Start)) / float64(span) * float64(cols))
		return min(max(c, 0), cols-1)
	}
	var b strings.Builder
	head := fmt.Sprintf("%s  %s · %s", t.ID, oneLine(t.Status), Duration(span))
	if total := t.Total(); !total.Zero() {
		head += " · " + usage.Tokens(total.Total()) + " tokens"
	}
	fmt.Fprintf(&b, "%s\n", p.paint(bold, term.Shorten(head, width)))
	b.WriteString(strings.Repeat(" ", label+1) + axis(cols, span) + "\n")

	keys := stateKeys(t.States)
	row := make([]rune, cols)
	colors := make([]string, cols)
	fill := func(ch rune, c string) {
		for i := range row {
			row[i], colors[i] = ch, c
		}
	}
	draw := func(name string) {
		var out strings.Builder
		for i, r := range row {
			if colors[i] == "" {
				out.WriteRune(r)
			} else {
				out.WriteString(p.paint(colors[i], string(r)))
			}
		}
		fmt.Fprintf(&b, "%-*s %s\n", label, name, strings.TrimRight(out.String(), " "))
	}
	fill(' ', "")
	for _, s := range t.States {
		c := ""
		switch {
		case s.Failed:
			c = red
		case s.Current:
			c = yellow
		case s.Rewound:
			c = dim
		}
		for i := col(s.Start); i <= col(s.End.Add(-time.Nanosecond)) && i < cols; i++ {
			row[i], colors[i] = keys[s.Name], c
		}
	}
	draw("states")
	if len(t.Waits) > 0 {
		fill(' ', "")
		for _, w := range t.Waits {
			end := w.End
			if end.IsZero() {
				end = t.End
			}
			for i := col(w.Start); i <= col(end); i++ {
				row[i], colors[i] = '▒', yellow
			}
		}
		draw("waiting")
	}
	if len(t.Marks) > 0 {
		fill(' ', "")
		for _, m := range t.Marks {
			row[col(m.At)], colors[col(m.At)] = markGlyph(m.Kind), red
		}
		draw("failures")
	}
	lanes := make([][]timeline.Agent, t.Lanes)
	for _, a := range t.Agents {
		lanes[a.Lane] = append(lanes[a.Lane], a)
	}
	for n, lane := range lanes {
		fill(' ', "")
		for k, a := range lane {
			end := a.End
			if end.IsZero() {
				end = t.End
			}
			ch, c := agentGlyph(a, k)
			for i := col(a.Start); i <= col(end.Add(-time.Nanosecond)) && i < cols; i++ {
				row[i], colors[i] = ch, c
			}
		}
		name := ""
		if n == 0 {
			name = "agents"
		}
		draw(name)
	}
	b.WriteString(legend(t, keys, width))
	return b.String()
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
// glyphs, wrapped to width.
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
	glyphs := "█▓ done · > running · x failed · ! stuck · ? never seen stopping · ░ rewound · ▒ waiting for a person · ✗ error ↻ retry ↺ rewind"
	return "\n" + term.Indent(strings.Join(parts, " · "), width, "") + "\n" + term.Indent(glyphs, width, "") + "\n"
}
