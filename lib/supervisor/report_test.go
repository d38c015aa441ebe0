package supervisor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestParseReportFixtures(t *testing.T) {
	tests := []struct {
		file         string
		title        string
		summaryStart string
		findings     []string // nil: only the count is checked
		nFindings    int
		files        []string
	}{
		{
			file:         "reports/001_authentication_patterns.md",
			title:        "Authentication Patterns Research",
			summaryStart: "The portal should keep server-side session authentication",
			nFindings:    5,
		},
		{
			file:         "reports/overview_variant.md",
			title:        "Rate Limiting Options",
			summaryStart: "This report compares three ways",
			findings: []string{
				"Gateway limits stop volumetric attacks before they reach the application",
				"Per-account backoff must live in the application, which knows the account even when the request comes from many addresses",
				"Hard lockouts let attackers deny service to chosen users",
				"Managed edge services add cost without covering the per-account case",
			},
		},
		{
			file:         "reports/finding_headings.md",
			title:        "Dependency Audit of the Billing Service",
			summaryStart: "The billing service pulls 212 modules",
			findings: []string{
				"The PDF library has a reachable path traversal",
				"The currency module is abandoned",
				"Nine modules have no maintainer",
			},
		},
		{
			file:  "reports/finding_headings_nosection.md",
			title: "Cache Invalidation Review",
			findings: []string{
				"Product updates do not purge the CDN",
				"Stale prices survive for up to an hour",
				"The purge API is rate-limited to 10 calls per second",
			},
		},
		{
			file:         "summaries/frontend.md",
			title:        "Frontend Implementation Summary",
			summaryStart: "Added the login and registration forms",
			nFindings:    2,
			files:        []string{"src/components/LoginForm.tsx", "src/components/RegisterForm.tsx", "src/hooks/useFormValidation.ts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := ParseReport(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Title != tt.title {
				t.Errorf("title %q, want %q", m.Title, tt.title)
			}
			if !strings.HasPrefix(m.Summary, tt.summaryStart) || (tt.summaryStart == "") != (m.Summary == "") {
				t.Errorf("summary %q, want it to start with %q", m.Summary, tt.summaryStart)
			}
			if n := wordCount(m.Summary); n > SummaryWords {
				t.Errorf("summary has %d words, more than %d", n, SummaryWords)
			}
			if tt.findings != nil && !reflect.DeepEqual(m.KeyFindings, tt.findings) {
				t.Errorf("findings\n got %q\nwant %q", m.KeyFindings, tt.findings)
			}
			if tt.findings == nil && len(m.KeyFindings) != tt.nFindings {
				t.Errorf("%d findings, want %d: %q", len(m.KeyFindings), tt.nFindings, m.KeyFindings)
			}
			if !reflect.DeepEqual(m.FilesModified, tt.files) {
				t.Errorf("files %q, want %q", m.FilesModified, tt.files)
			}
		})
	}
}

func TestParseReportSummaryCut(t *testing.T) {
	m, err := ParseReport(fixture(t, "reports/004_password_security.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := wordCount(m.Summary); n != SummaryWords {
		t.Errorf("summary has %d words, want exactly %d (the paragraph is longer): %q", n, SummaryWords, m.Summary)
	}
	if !strings.HasSuffix(m.Summary, "…") {
		t.Errorf("a cut summary ends with an ellipsis: %q", m.Summary)
	}
}

func TestParseReportShapes(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    Meta
		invalid bool
	}{
		{
			name: "protocol format",
			md:   "# T\n\n## Executive Summary\n\nOne two\nthree.\n\nSecond paragraph.\n\n## Key Findings\n\n- a\n- b\n",
			want: Meta{Title: "T", Summary: "One two three.", KeyFindings: []string{"a", "b"}},
		},
		{
			name: "code fence hides a fake H1 and a fake list",
			md:   "```bash\n# not a title\n```\n# Real\n## Summary\nS.\n## Key Findings\n```\n- not a finding\n```\n- yes\n",
			want: Meta{Title: "Real", Summary: "S.", KeyFindings: []string{"yes"}},
		},
		{
			name: "numbered sections, bold, CRLF, closing hashes, task boxes",
			md:   "# Title #\r\n\r\n## 1. Executive Summary\r\n\r\n**Bold** start.\r\n\r\n## 2. Key Findings:\r\n\r\n* [x] done item\r\n+ plus item\r\n",
			want: Meta{Title: "Title", Summary: "Bold start.", KeyFindings: []string{"done item", "plus item"}},
		},
		{
			name: "executive summary wins over an earlier overview",
			md:   "# T\n## Overview\nfrom overview\n## Executive Summary\nfrom summary\n",
			want: Meta{Title: "T", Summary: "from summary", KeyFindings: nil},
		},
		{
			name: "summary skips a subheading and a comment",
			md:   "# T\n## Executive Summary\n<!-- fill in -->\n### Context\n\ntext here\n",
			want: Meta{Title: "T", Summary: "text here"},
		},
		{
			name: "findings section with plain subheadings",
			md:   "# T\n## Key Findings\n### Sessions are safest\ndetail\n#### deeper is ignored\n### Rotate ids\n",
			want: Meta{Title: "T", KeyFindings: []string{"Sessions are safest", "Rotate ids"}},
		},
		{
			name: "list stops at the first subheading of the section",
			md:   "# T\n## Key Findings\n- top\n### Detail\n- detail item\n",
			want: Meta{Title: "T", KeyFindings: []string{"top"}},
		},
		{name: "no H1", md: "## Executive Summary\ntext\n", invalid: true},
		{name: "H1 only", md: "# Just a title\n\nSome prose.\n", invalid: true},
		{name: "empty", md: "", invalid: true},
		{name: "hash without space is not a heading", md: "#NotTitle\n## Summary\nx\n", invalid: true},
		{name: "indented four spaces is code", md: "    # code\n## Summary\nx\n", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseReport([]byte(tt.md))
			if tt.invalid {
				wantCode(t, err, fail.Invalid)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, tt.want) {
				t.Errorf("got  %#v\nwant %#v", m, tt.want)
			}
		})
	}
}

func TestParseReportNoH1Fixture(t *testing.T) {
	_, err := ParseReport(fixture(t, "reports/no_h1.md"))
	wantCode(t, err, fail.Invalid)
	if !strings.Contains(err.Error(), "Title") {
		t.Errorf("the error should say what is missing: %v", err)
	}
}

func TestParseReportCaps(t *testing.T) {
	var b strings.Builder
	b.WriteString("# T\n## Key Findings\n")
	for i := 0; i < 30; i++ {
		b.WriteString("- " + strings.Repeat("word ", 40) + "\n")
	}
	m, err := ParseReport([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.KeyFindings) != MaxFindings {
		t.Errorf("%d findings, want the cap %d", len(m.KeyFindings), MaxFindings)
	}
	for _, f := range m.KeyFindings {
		if wordCount(f) != FindingWords {
			t.Errorf("finding of %d words, want %d", wordCount(f), FindingWords)
		}
	}
}

func TestCapWords(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a b c", 5, "a b c"},
		{"a  b\n c", 3, "a b c"},
		{"one, two, three", 2, "one, two…"},
		{"a b", 0, ""},
		{"end. more", 1, "end…"},
	}
	for _, tt := range tests {
		if got := capWords(tt.in, tt.n); got != tt.want {
			t.Errorf("capWords(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
