package standin

import (
	"fmt"
	"regexp"
	"strings"
)

type stepKind int

const (
	stepBash stepKind = iota
	stepTask
	stepWrite
)

// step is one thing the model does in one turn.
type step struct {
	Kind stepKind
	// Text is the bash block verbatim, or the write target path (with ${KEY}s).
	Text string
	Task task
}

// program is a parsed command or agent: its steps in order, where each
// "## section" starts, and the "Return exactly:" line if it has one.
type program struct {
	Steps    []step
	Sections map[string]int
	Return   string
}

var (
	fenceLine  = regexp.MustCompile("^(`{3,})\\s*([A-Za-z0-9_-]*)")
	headingRE  = regexp.MustCompile(`^##\s+(.+?)\s*#*\s*$`)
	writeLine  = regexp.MustCompile("^\\s*(?:[-*]\\s+)?(?:Write|Create|Save)\\b[^:]*:\\s*`?([^\\s`]+)`?\\s*$")
	returnLine = regexp.MustCompile("^\\s*(?:[-*]\\s+)?Return exactly:\\s*(.*?)\\s*$")
)

// parseProgram reads markdown per the command protocol: ```bash and ```task
// blocks are steps, other fenced blocks are examples and ignored, "## name"
// headings outside fences mark jump targets, and prose lines naming a file to
// write ("Write the report to: <path>") are write steps in place.
func parseProgram(md string) (program, error) {
	p := program{Sections: map[string]int{}}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceLine.FindStringSubmatch(line); m != nil {
			body, end, err := fencedBody(lines, i, m[1])
			if err != nil {
				return p, err
			}
			i = end
			switch m[2] {
			case "bash":
				p.Steps = append(p.Steps, step{Kind: stepBash, Text: body})
			case "task":
				t, err := parseTask(body)
				if err != nil {
					return p, fmt.Errorf("task block at line %d: %w", end, err)
				}
				p.Steps = append(p.Steps, step{Kind: stepTask, Task: t})
			}
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			p.Sections[m[1]] = len(p.Steps)
			continue
		}
		if m := returnLine.FindStringSubmatch(line); m != nil {
			if p.Return == "" {
				p.Return = strings.Trim(m[1], "`")
			}
			continue
		}
		if m := writeLine.FindStringSubmatch(line); m != nil && strings.Contains(m[1], "/") {
			p.Steps = append(p.Steps, step{Kind: stepWrite, Text: m[1]})
		}
	}
	return p, nil
}

// fencedBody returns the lines between the fence opened at lines[start] and its
// closing fence (at least as many backticks), and the index of the closing line.
func fencedBody(lines []string, start int, ticks string) (string, int, error) {
	for j := start + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, ticks) && strings.Trim(t, "`") == "" {
			return strings.Join(lines[start+1:j], "\n"), j, nil
		}
	}
	return "", 0, fmt.Errorf("line %d: fenced block never closed", start+1)
}

// then appends q's steps after p's, keeping p's Return line if it has one.
// Sections of q are shifted so that jumps land in q's part.
func (p program) then(q program) program {
	out := program{Steps: append(append([]step{}, p.Steps...), q.Steps...), Sections: map[string]int{}, Return: p.Return}
	for k, v := range p.Sections {
		out.Sections[k] = v
	}
	for k, v := range q.Sections {
		out.Sections[k] = v + len(p.Steps)
	}
	if out.Return == "" {
		out.Return = q.Return
	}
	return out
}
