package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// block is one fenced block of a markdown file.
type block struct {
	Info    string // the info string: "bash", "output", "task", "bash legacy", ...
	Body    string
	Line    int    // 1-based line of the opening fence
	Section string // the "## name" heading above it
}

var (
	fenceOpen = regexp.MustCompile("^(`{3,})(.*)$")
	heading2  = regexp.MustCompile(`^##\s+(.+?)\s*$`)
)

// blocks returns the fenced blocks of md in order. A fence closes only
// with at least as many backticks as opened it, so a command file shown
// inside a ```` fence stays one block; headings inside fences do not
// count.
func blocks(md string) ([]block, error) {
	var out []block
	section := ""
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if m := heading2.FindStringSubmatch(lines[i]); m != nil {
			section = m[1]
			continue
		}
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := i + 1
		for ; end < len(lines); end++ {
			t := strings.TrimRight(lines[end], " ")
			if strings.HasPrefix(t, m[1]) && strings.Trim(t, "`") == "" {
				break
			}
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: fence never closed", i+1)
		}
		out = append(out, block{Info: strings.TrimSpace(m[2]), Body: strings.Join(lines[i+1:end], "\n"), Line: i + 1, Section: section})
		i = end
	}
	return out, nil
}

func TestBlocks(t *testing.T) {
	md := "# T\n\n## one\n\n```bash\necho hi\n```\n\n````markdown\n## not a section\n```bash\nnot run\n```\n````\n\n## two\n\n```output\nhi\n```\n"
	got, err := blocks(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{"bash", "echo hi", 5, "one"},
		{"markdown", "## not a section\n```bash\nnot run\n```", 9, "one"},
		{"output", "hi", 18, "two"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := blocks("```bash\nopen"); err == nil {
		t.Fatal("an unclosed fence must be an error")
	}
}

// matchOutput compares stdout with an ```output block: lines must be
// equal, except that "..." in an expected line matches any text (ids,
// timestamps), and a line that is only "..." matches any number of
// lines.
func matchOutput(want, got string) bool {
	return matchLines(strings.Split(strings.TrimRight(want, "\n"), "\n"), strings.Split(strings.TrimRight(got, "\n"), "\n"))
}

func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 || !matchLine(want[0], got[0]) {
		return false
	}
	return matchLines(want[1:], got[1:])
}

func matchLine(want, got string) bool {
	parts := strings.Split(want, "...")
	re := "^"
	for i, p := range parts {
		if i > 0 {
			re += ".*"
		}
		re += regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(re + "$").MatchString(got)
}

func TestMatchOutput(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb\n", true},
		{"a\nb", "a\nc", false},
		{"id=...", "id=review-20251107-1", true},
		{"x ... z", "x y z", true},
		{"x ... z", "x y", false},
		{"first\n...\nlast", "first\n1\n2\nlast", true},
		{"first\n...\nlast", "first\nlast", true},
		{"first\n...", "second", false},
	}
	for _, tt := range tests {
		if got := matchOutput(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}
