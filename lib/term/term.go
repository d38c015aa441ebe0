// Package term owns fitting text to a person's terminal: how wide it is
// (COLUMNS, else the terminal's own size), and wrapping lines at word
// boundaries or shortening cells to that width. Width reads the
// environment and the terminal; the rest is pure.
package term

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Width is the width to fit output to: COLUMNS when set, else the
// terminal's of f, else 0 (not a terminal: do not fit, a pipe or file
// gets whole lines).
func Width(getenv func(string) string, f any) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	file, ok := f.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(file.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

// Len is how many columns s takes: one per rune (flowstate's text is
// Latin and box-drawing characters), colour escapes taking none.
func Len(s string) int {
	if !strings.Contains(s, "\x1b[") {
		return utf8.RuneCountInString(s)
	}
	n, esc := 0, false
	for _, r := range s {
		switch {
		case esc:
			esc = r != 'm'
		case r == 0x1b:
			esc = true
		default:
			n++
		}
	}
	return n
}

// Fit wraps each line of text wider than width at spaces, its further
// lines indented two more than it; 0 keeps text as it is.
func Fit(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if Len(l) <= width {
			continue
		}
		body := strings.TrimLeft(l, " ")
		lead := strings.Repeat(" ", len(l)-len(body))
		lines[i] = lead + Indent(body, width, lead+"  ")
	}
	return strings.Join(lines, "\n")
}

// Wrap breaks s into lines of at most width columns at spaces, never
// inside a word: a word longer than width has a line of its own. width 0
// or less keeps s whole.
func Wrap(s string, width int) []string {
	words := strings.Fields(s)
	if width <= 0 || Len(s) <= width || len(words) == 0 {
		return []string{s}
	}
	var lines []string
	line := words[0]
	for _, w := range words[1:] {
		if Len(line)+1+Len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		line += " " + w
	}
	return append(lines, line)
}

// Indent wraps s, which starts at column Len(indent), to width: the
// lines after the first start with indent.
func Indent(s string, width int, indent string) string {
	if width <= 0 {
		return s
	}
	lines := Wrap(s, max(width-Len(indent), 1))
	return strings.Join(lines, "\n"+indent)
}

// Shorten cuts s to width columns, ending in … when cut.
func Shorten(s string, width int) string {
	if width <= 0 || Len(s) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// Join joins items with sep into lines of at most width columns, breaking
// only between items: a legend's phrase stays on one line. An item wider
// than width is wrapped on lines of its own; width 0 or less keeps one
// line.
func Join(items []string, sep string, width int) string {
	if width <= 0 {
		return strings.Join(items, sep)
	}
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "":
			line = it
		case Len(line)+Len(sep)+Len(it) <= width:
			line += sep + it
		default:
			lines = append(lines, strings.TrimRight(line+sep, " "))
			line = it
		}
		if Len(line) > width {
			wrapped := Wrap(line, width)
			lines = append(lines, wrapped[:len(wrapped)-1]...)
			line = wrapped[len(wrapped)-1]
		}
	}
	return strings.Join(append(lines, line), "\n")
}
