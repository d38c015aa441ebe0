package supervisor

import (
	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Sectioned is what is kept of a markdown artifact that must have given
// sections: its title and the first paragraph of each section.
type Sectioned struct {
	Title    string            `json:"title,omitempty"`
	Sections map[string]string `json:"sections"`
}

// ParseSections checks that md has a "## <name>" heading (any level from
// 2, any case) with text under it for each of want, as a workflow
// definition's "format": "markdown" asks, and keeps the first paragraph
// of each, cut to SummaryWords. A missing or empty section is
// fail.Invalid naming it.
func ParseSections(md []byte, want []string) (Sectioned, error) {
	if n := textLines(md); n > MaxReportLines {
		return Sectioned{}, fail.Invalidf("%d lines of text, more than the %d an artifact may have", n, MaxReportLines)
	}
	lines := scanMarkdown(md)
	s := Sectioned{Sections: make(map[string]string, len(want))}
	for _, l := range lines {
		if l.level == 1 && plain(l.title) != "" {
			s.Title = plain(l.title)
			break
		}
	}
	for _, name := range want {
		body, _, ok := section(lines, normalTitle(name))
		if !ok {
			return Sectioned{}, fail.Invalidf("no \"## %s\" section; the file must have the sections %v", name, want)
		}
		text := firstParagraph(body)
		if text == "" {
			if items := topListItems(body); len(items) > 0 {
				text = items[0]
			}
		}
		if text == "" {
			return Sectioned{}, fail.Invalidf("section \"## %s\" is empty", name)
		}
		s.Sections[name] = capWords(text, SummaryWords)
	}
	return s, nil
}
