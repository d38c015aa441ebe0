package supervisor

import (
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Size limits of report metadata. They keep one report's metadata, and so
// any aggregate built from it, to a few hundred bytes however long the
// report is (docs/supervisors.md: only metadata goes up).
const (
	SummaryWords = 50 // words of a report summary (protocol section 6)
	FindingWords = 20 // words of one finding
	MaxFindings  = 12 // findings kept from one report, and in an aggregate
)

// The headings of a report (docs/command-protocol.md section 6): what
// ParseReport reads first, and what a worker's brief shows it to write.
const (
	ReportSummary       = "Executive Summary"
	ReportFindings      = "Key Findings"
	ReportFilesModified = "Files Modified" // an implementation summary's
)

// MaxReportLines bounds the lines with text in a report, so that reading
// one costs bounded memory whatever its shape: a line of the parsed
// report takes tens of bytes, however short the line.
const MaxReportLines = 100_000

// textLines counts the lines of md holding more than ASCII whitespace,
// without allocating.
func textLines(md []byte) int {
	n, text := 0, false
	for _, c := range md {
		switch c {
		case '\n':
			text = false
		case ' ', '\t', '\r', '\v', '\f':
		default:
			if !text {
				n, text = n+1, true
			}
		}
	}
	return n
}

// Meta is what a supervisor keeps of a report: a worker's metadata
// (docs/supervisors.md, "The protocol").
// FilesModified is set only for implementation summaries.
type Meta struct {
	Title         string   `json:"title"`
	Summary       string   `json:"summary"`
	KeyFindings   []string `json:"key_findings"`
	FilesModified []string `json:"files_modified,omitempty"`
}

var findingHeading = lazyRegexp(`(?i)^finding\s*#?\s*[0-9]+\s*(?:[:.)\-–—]\s*)?`)

// ParseReport extracts Meta from a report in the protocol's format: the title
// from the first H1, the summary from the first paragraph of "Executive
// Summary" (else "Overview", else "Summary") cut to SummaryWords, the findings
// from the "Key Findings" (or "Findings") list, else from that section's
// subheadings, else from "### Finding N: ..." headings anywhere. A document
// without an H1, or with neither summary nor findings, is not a report:
// fail.Invalid.
func ParseReport(md []byte) (Meta, error) {
	if n := textLines(md); n > MaxReportLines {
		return Meta{}, fail.Invalidf("not a report: %d lines of text, more than the %d a report may have; a report summarises (docs/command-protocol.md section 6)", n, MaxReportLines)
	}
	lines := scanMarkdown(md)
	var m Meta
	for _, l := range lines {
		if l.level == 1 && plain(l.title) != "" {
			m.Title = plain(l.title)
			break
		}
	}
	if m.Title == "" {
		return Meta{}, fail.Invalidf("not a report: no \"# Title\" heading; a report starts with a level-1 heading (docs/command-protocol.md section 6)")
	}
	if body, _, ok := section(lines, normalTitle(ReportSummary), "overview", "summary"); ok {
		m.Summary = capWords(firstParagraph(body), SummaryWords)
	}
	m.KeyFindings = findings(lines)
	if m.Summary == "" && len(m.KeyFindings) == 0 {
		return Meta{}, fail.Invalidf("not a report: %q has no \"## Executive Summary\" paragraph and no \"## Key Findings\" list (docs/command-protocol.md section 6)", m.Title)
	}
	if body, _, ok := section(lines, normalTitle(ReportFilesModified), "files changed"); ok {
		for _, item := range topListItems(body) {
			if p := pathOf(item); p != "" {
				m.FilesModified = append(m.FilesModified, p)
			}
		}
	}
	return m, nil
}

// findings applies ParseReport's three sources in order and caps the result.
func findings(lines []mdLine) []string {
	var found []string
	if body, level, ok := section(lines, normalTitle(ReportFindings), "findings"); ok {
		found = topListItems(body)
		if len(found) == 0 {
			for _, l := range body {
				if l.level == level+1 {
					found = append(found, findingText(l.title))
				}
			}
		}
	} else {
		for _, l := range lines {
			if l.level >= 2 && findingHeading().MatchString(plain(l.title)) {
				found = append(found, findingText(l.title))
			}
		}
	}
	var out []string
	for _, f := range found {
		if f = capWords(f, FindingWords); f != "" && len(out) < MaxFindings {
			out = append(out, f)
		}
	}
	return out
}

// findingText drops a "Finding N:" prefix from a heading.
func findingText(title string) string {
	t := plain(title)
	return strings.TrimSpace(t[len(findingHeading().FindString(t)):])
}

// pathOf takes the path out of a "Files Modified" item: the first code span
// if there is one ("`src/a.go` - added X"), else the first word.
func pathOf(item string) string {
	if _, rest, ok := strings.Cut(item, "`"); ok {
		if p, _, ok := strings.Cut(rest, "`"); ok {
			return strings.TrimSpace(p)
		}
	}
	w := strings.Fields(item)
	if len(w) == 0 {
		return ""
	}
	return strings.TrimRight(w[0], ":,;")
}
