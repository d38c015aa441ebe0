package supervisor

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestScanMarkdownCollapsesBlankRuns: a run of blank lines, code included,
// is one line, so millions of them cost one.
func TestScanMarkdownCollapsesBlankRuns(t *testing.T) {
	lines := scanMarkdown([]byte("# T\n\n\n   \n```\ncode\n```\n\ntext\n" + strings.Repeat("\n", 1000) + "## H\n"))
	var kinds []string
	for _, l := range lines {
		switch {
		case l.blank():
			kinds = append(kinds, "blank")
		case l.level > 0:
			kinds = append(kinds, "h"+l.title)
		default:
			kinds = append(kinds, l.text)
		}
	}
	if got, want := strings.Join(kinds, ","), "hT,blank,text,blank,hH"; got != want {
		t.Errorf("lines %s, want %s", got, want)
	}
}

// TestLongParagraphsAndItems: a paragraph or list item of many lines or
// words gives what it gave before (cut to SummaryWords and FindingWords
// with "…"), from its first words only.
func TestLongParagraphsAndItems(t *testing.T) {
	many := strings.Repeat("word ", 100_000)
	md := "# T\n\n## Executive Summary\n\n" + many + "\n" + strings.Repeat("more words here\n", 40_000) +
		"\n## Key Findings\n\n- first " + many + "\n" + strings.Repeat("  continued words\n", 40_000)
	m, err := ParseReport([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if wordCount(m.Summary) != SummaryWords || !strings.HasSuffix(m.Summary, "word…") {
		t.Errorf("summary of %d words: %.60q…", wordCount(m.Summary), m.Summary)
	}
	if len(m.KeyFindings) != 1 || wordCount(m.KeyFindings[0]) != FindingWords || !strings.HasPrefix(m.KeyFindings[0], "first word") {
		t.Errorf("findings %q", m.KeyFindings)
	}
}

func TestHeadWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a b c", 2, "a b "},
		{"  a\tb  ", 5, "  a\tb  "},
		{"a b", 0, ""},
		{"", 3, ""},
		{"é ü\u00a0x y", 2, "é ü\u00a0"}, // U+00A0 separates words, as in strings.Fields
	} {
		if got := headWords(tt.in, tt.n); got != tt.want {
			t.Errorf("headWords(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestReportLineBound: a report with more lines of text than
// MaxReportLines is refused (exit 4) before it is parsed; blank lines do
// not count.
func TestReportLineBound(t *testing.T) {
	head := "# T\n\n## Executive Summary\n\nok\n"
	if _, err := ParseReport([]byte(head + strings.Repeat("\n \t\n", MaxReportLines))); err != nil {
		t.Errorf("blank lines counted: %v", err)
	}
	_, err := ParseReport([]byte(head + strings.Repeat("x\n", MaxReportLines)))
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "100000") {
		t.Errorf("over the bound: %v", err)
	}
	if n := textLines([]byte("a\n\n b\n\t\n c")); n != 3 {
		t.Errorf("textLines = %d, want 3", n)
	}
}
