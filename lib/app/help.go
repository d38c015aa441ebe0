package app

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowstate-dev/flowstate/lib/term"
)

// Help fits the terminal: urfave/cli wraps the help at word boundaries
// when told a width (its "wrapAt"), and flowstate lays out the flags
// itself, their descriptions wrapped under their column (urfave's own
// wrapping of a flag line drops the tab that aligns it).

// helpWriter is the app's writer, with what help needs to fit its width
// (term.Width; 0: not at all, as for a pipe), measured only when help is
// printed: most calls print none, and for them it would be an ioctl and
// an environment read wasted.
type helpWriter struct {
	io.Writer
	getenv func(string) string
}

func init() {
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		width := 0
		if hw, ok := w.(helpWriter); ok {
			width = term.Width(hw.getenv, hw.Writer)
		}
		funcs := map[string]any{
			"flags":  func(flags []cli.Flag) string { return flagLines(flags, width) },
			"reflow": func(text string) string { return reflow(text, width) },
			"add":    func(a, b int) int { return a + b },
		}
		if width > 0 {
			funcs["wrapAt"] = func() int { return width }
		}
		cli.HelpPrinterCustom(w, templ, data, funcs)
	}
}

// commandHelp is urfave/cli's help of a command with flowstate's flag
// lines.
const commandHelp = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Category}}

CATEGORY:
   {{.Category}}{{end}}{{if .Description}}

DESCRIPTION:
   {{wrap (reflow .Description) 3}}{{end}}{{if .VisibleFlags}}

OPTIONS:
{{flags .VisibleFlags}}{{end}}
`

// flagLines lists flags as urfave/cli does (names and value, then the
// description in a column), each description wrapped at width under its
// column.
func flagLines(flags []cli.Flag, width int) string {
	type row struct{ left, usage string }
	var rows []row
	col := 0
	for _, f := range flags {
		left, usage, _ := strings.Cut(f.String(), "\t")
		rows = append(rows, row{left, usage})
		col = max(col, term.Len(left))
	}
	indent := strings.Repeat(" ", 3+col+2)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("   " + r.left + strings.Repeat(" ", col-term.Len(r.left)+2) + term.Indent(r.usage, width, indent) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// reflow joins the lines of each paragraph of a description, which is
// written broken at about 100 columns, so that wrapping it to a narrower
// terminal does not leave every other line short. A blank line, and a
// line that starts with a space (an example), keep their breaks. width 0
// keeps the text as written.
func reflow(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == len(lines)-1 {
			break
		}
		next := lines[i+1]
		if l == "" || next == "" || strings.HasPrefix(next, " ") || strings.HasPrefix(l, " ") {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	return b.String()
}
