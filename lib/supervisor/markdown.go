package supervisor

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// lazyRegexp compiles expr on first use, not at package init: flowstate
// runs as one process per command, and most commands never read markdown,
// so compiling this package's patterns at start-up was paid for nothing.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// mdLine is one line of a markdown document, classified just enough for the
// artifact formats of docs/command-protocol.md section 6. A full CommonMark
// parser would be a dependency for little gain: agents write ATX headings,
// lists and paragraphs.
type mdLine struct {
	text  string // the line without trailing whitespace; "" inside code blocks
	level int    // ATX heading level 1-6, 0 when not a heading
	title string // heading text without the #s
	code  bool   // inside a fenced code block, fences included
}

func (l mdLine) blank() bool { return l.code || strings.TrimSpace(l.text) == "" }

// scanMarkdown splits md into classified lines. Fenced code is masked so that
// a "# comment" in a bash block is never taken for a heading.
func scanMarkdown(md []byte) []mdLine {
	s := strings.ToValidUTF8(string(md), "\uFFFD")
	raw := strings.Split(s, "\n")
	lines := make([]mdLine, 0, len(raw))
	fence := "" // the run of ` or ~ that opened the current code block
	for _, r := range raw {
		t := strings.TrimRight(r, " \t\r")
		body := strings.TrimLeft(t, " ")
		shallow := len(t)-len(body) < 4 // deeper indentation is code, never a fence or heading
		if fence != "" {
			if shallow && strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]) == "" {
				fence = ""
			}
			lines = append(lines, mdLine{code: true})
			continue
		}
		if f := fenceOpen(body); shallow && f != "" {
			fence = f
			lines = append(lines, mdLine{code: true})
			continue
		}
		l := mdLine{text: t}
		if shallow {
			l.level, l.title = atxHeading(body)
		}
		lines = append(lines, l)
	}
	return lines
}

// fenceOpen returns the fence run if s opens a fenced code block.
func fenceOpen(s string) string {
	for _, c := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// atxHeading returns the level and text of an ATX heading ("## Title ##").
func atxHeading(s string) (int, string) {
	n := len(s) - len(strings.TrimLeft(s, "#"))
	if n < 1 || n > 6 || (len(s) > n && s[n] != ' ' && s[n] != '\t') {
		return 0, ""
	}
	t := strings.TrimSpace(s[n:])
	if c := strings.TrimRight(t, "#"); c == "" || strings.HasSuffix(c, " ") {
		t = strings.TrimSpace(c)
	}
	return n, t
}

var headingNumber = lazyRegexp(`^[0-9.]+\s+`)

// normalTitle lowercases a heading and drops emphasis, numbering ("2. ") and
// a trailing colon, so "## 1. **Key Findings:**" matches "key findings".
func normalTitle(t string) string {
	t = strings.ToLower(strings.NewReplacer("*", "", "_", "").Replace(t))
	t = headingNumber().ReplaceAllString(strings.TrimSpace(t), "")
	return strings.TrimSpace(strings.TrimSuffix(t, ":"))
}

// section returns the body of the first heading of level 2 or more whose
// normalised title is one of names, tried in the order given, up to the next
// heading of the same or a higher level; ok is false when none exists.
func section(lines []mdLine, names ...string) (body []mdLine, level int, ok bool) {
	for _, name := range names {
		for i, l := range lines {
			if l.level < 2 || normalTitle(l.title) != name {
				continue
			}
			end := i + 1
			for end < len(lines) && (lines[end].level == 0 || lines[end].level > l.level) {
				end++
			}
			return lines[i+1 : end], l.level, true
		}
	}
	return nil, 0, false
}

var listMarker = lazyRegexp(`^( *)(?:[-*+]|[0-9]{1,9}[.)])(?:\s+|$)(?:\[[ xX]\]\s+)?`)

// listItem reports whether s is a list item and returns its indentation and
// its text without the marker (and without a task-list box).
func listItem(s string) (indent int, text string, ok bool) {
	m := listMarker().FindStringSubmatch(strings.ReplaceAll(s, "\t", "    "))
	if m == nil {
		return 0, "", false
	}
	return len(m[1]), strings.TrimSpace(strings.ReplaceAll(s, "\t", "    ")[len(m[0]):]), true
}

// firstParagraph returns the first run of text lines in body, skipping blank
// lines, code and subheadings before it, joined into one line.
func firstParagraph(body []mdLine) string {
	var parts []string
	for _, l := range body {
		if l.blank() || l.level > 0 || strings.HasPrefix(strings.TrimSpace(l.text), "<!--") {
			if len(parts) > 0 {
				break
			}
			continue
		}
		t := strings.TrimSpace(l.text)
		if _, item, ok := listItem(t); ok {
			t = item
		}
		parts = append(parts, strings.TrimLeft(t, "> "))
	}
	return plain(strings.Join(parts, " "))
}

// topListItems returns the items of the first list level in body, up to its
// first subheading. Nested items are dropped and continuation lines joined, so
// each item is one finding on one line.
func topListItems(body []mdLine) []string {
	var items []string
	top, cur := -1, -1 // indentation of the top level; item taking continuation lines
	for _, l := range body {
		if l.level > 0 {
			break
		}
		if l.blank() {
			cur = -1
			continue
		}
		indent, text, ok := listItem(l.text)
		switch {
		case ok && (top < 0 || indent <= top+1):
			if top < 0 || indent < top {
				top = indent
			}
			items = append(items, text)
			cur = len(items) - 1
		case ok:
			cur = -1 // a nested item: detail, not a finding
		case cur >= 0:
			items[cur] += " " + strings.TrimSpace(l.text)
		}
	}
	for i := range items {
		items[i] = plain(items[i])
	}
	return items
}

// plain collapses whitespace and drops bold markers: the text goes into JSON
// read by models, where "**" is noise.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "**", "")), " ")
}

// capWords keeps the first n words of s; a cut is marked with "…" on the last
// kept word, so the word count stays n.
func capWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	if n <= 0 {
		return ""
	}
	w = w[:n]
	last := strings.TrimRight(w[n-1], ",;:.")
	if last == "" {
		last = w[n-1]
	}
	w[n-1] = last + "…"
	return strings.Join(w, " ")
}

// wordCount is the number of whitespace-separated words in s.
func wordCount(s string) int { return len(strings.Fields(s)) }

// validText reports whether s is valid UTF-8 without control characters,
// the rule for identifiers and paths that end up in JSON and on one line.
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
