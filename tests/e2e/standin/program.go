package standin

import "github.com/flowstate-dev/flowstate/lib/protocol"

type stepKind int

const (
	stepBash stepKind = iota
	stepTask
	stepWrite
	stepRead   // a subagent reads the file its prompt says to read first (its brief)
	stepLaunch // a ```workflow block: one Workflow call
	stepEdit   // read a file, then edit it (Knobs.Edits): two turns
)

// step is one thing the model does in one turn (an edit: two).
type step struct {
	Kind stepKind
	// Text is the bash block verbatim, or the path to write, read or
	// edit (with ${KEY}s).
	Text   string
	Task   task
	Launch protocol.Launch
	Edit   Edit
}

// program is a parsed command or agent: its steps in order, where each
// "## section" starts, and the "Return exactly:" line if it has one.
type program struct {
	Steps    []step
	Sections map[string]int
	Return   string
}

// parseProgram reads markdown per the command protocol, with the parser
// flowstate lint and the plugin and docs tests share (lib/protocol): ```bash and
// ```task blocks are steps, other fenced blocks are examples and ignored,
// "## name" headings outside fences mark jump targets, and prose lines
// naming a file to write ("Write the report to: <path>") are write steps in
// place, and one naming the file to read first ("Read first: <path>") a
// read step.
func parseProgram(md string) (program, error) {
	p := program{Sections: map[string]int{}}
	d, err := protocol.Parse(md)
	if err != nil {
		return p, err
	}
	k := 0
	for i := 0; i <= len(d.Steps); i++ {
		// The prose before step i, in order.
		for ; k < len(d.Prose) && d.Prose[k].Step == i; k++ {
			line := d.Prose[k].Text
			if name, ok := protocol.Heading(line); ok {
				p.Sections[name] = len(p.Steps)
				continue
			}
			if r, ok := protocol.ReturnLine(line); ok {
				if p.Return == "" {
					p.Return = r
				}
				continue
			}
			if path, ok := protocol.WriteTarget(line); ok {
				p.Steps = append(p.Steps, step{Kind: stepWrite, Text: path})
			}
			if path, ok := protocol.ReadFirst(line); ok {
				p.Steps = append(p.Steps, step{Kind: stepRead, Text: path})
			}
		}
		if i == len(d.Steps) {
			break
		}
		switch s := d.Steps[i]; {
		case s.Task != nil:
			p.Steps = append(p.Steps, step{Kind: stepTask, Task: task{*s.Task}})
		case s.Launch != nil:
			p.Steps = append(p.Steps, step{Kind: stepLaunch, Launch: *s.Launch})
		default:
			p.Steps = append(p.Steps, step{Kind: stepBash, Text: s.Body})
		}
	}
	return p, nil
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
