package supervisor

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
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
// a "# comment" in a bash block is never taken for a heading. A run of blank
// lines (code counts as blank) becomes one: readers only see where text
// stops, and 8 MB of empty lines must not cost a line each.
func scanMarkdown(md []byte) []mdLine {
	s := strings.ToValidUTF8(string(md), "\uFFFD")
	lines := make([]mdLine, 0, min(strings.Count(s, "\n")+1, 1<<12))
	add := func(l mdLine) {
		if l.blank() && len(lines) > 0 && lines[len(lines)-1].blank() {
			return
		}
		lines = append(lines, l)
	}
	fence := "" // the run of ` or ~ that opened the current code block
	for len(s) > 0 {
		r, rest, _ := strings.Cut(s, "\n")
		s = rest
		t := strings.TrimRight(r, " \t\r")
		body := strings.TrimLeft(t, " ")
		shallow := len(t)-len(body) < 4 // deeper indentation is code, never a fence or heading
		if fence != "" {
			if shallow && strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]) == "" {
				fence = ""
			}
			add(mdLine{code: true})
			continue
		}
		if f := fenceOpen(body); shallow && f != "" {
			fence = f
			add(mdLine{code: true})
			continue
		}
		l := mdLine{text: t}
		if shallow {
			l.level, l.title = atxHeading(body)
		}
		add(l)
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

// keepWords bounds the words collected for one paragraph or list item: more
// than any caller keeps (SummaryWords, FindingWords), so the cut they make
// is the same, while a paragraph of millions of lines costs no more than
// its first few.
const keepWords = 64

// firstParagraph returns the first run of text lines in body, skipping blank
// lines, code and subheadings before it, joined into one line (at least its
// first keepWords words).
func firstParagraph(body []mdLine) string {
	var parts []string
	words := 0
	for _, l := range body {
		if words > keepWords {
			break
		}
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
		t = headWords(strings.TrimLeft(t, "> "), keepWords)
		parts = append(parts, t)
		words += wordCount(t)
	}
	return plain(strings.Join(parts, " "))
}

// topListItems returns the items of the first list level in body, up to its
// first subheading. Nested items are dropped and continuation lines joined, so
// each item is one finding on one line (at least its first keepWords words).
func topListItems(body []mdLine) []string {
	var items [][]string // each item's lines, joined at the end: one copy, not one per line
	top, cur := -1, -1   // indentation of the top level; item taking continuation lines
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
			items = append(items, []string{headWords(text, keepWords)})
			cur = len(items) - 1
		case ok:
			cur = -1 // a nested item: detail, not a finding
		case cur >= 0 && len(items[cur]) <= keepWords: // each part holds a word at least
			items[cur] = append(items[cur], headWords(strings.TrimSpace(l.text), keepWords))
		}
	}
	out := make([]string, len(items))
	for i, parts := range items {
		out[i] = plain(strings.Join(parts, " "))
	}
	return out
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

// headWords returns s up to the end of its first n words (as
// strings.Fields splits them), without allocating: one line of a
// million words costs what its first n do.
func headWords(s string, n int) string {
	words, in := 0, false
	for i, r := range s {
		switch space := unicode.IsSpace(r); {
		case space && in:
			in = false
		case !space && !in:
			if words == n {
				return s[:i]
			}
			words, in = words+1, true
		}
	}
	return s
}

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
