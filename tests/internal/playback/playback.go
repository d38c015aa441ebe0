// Package playback plays command and agent files the way
// docs/command-protocol.md says a model must (lib/protocol reads them),
// for the test suites: a Runner that runs the bash blocks as processes
// and hands the task blocks' Agent calls to the test's fake agents;
// Brief, the file a fake agent reads first, and Filled, the file it
// writes from the brief's template.
package playback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// A Runner plays a parsed file the way docs/command-protocol.md says a
// model must: each bash block runs as written, as its own `bash -c`
// process; the KEY=VALUE lines it prints are the values of later task
// blocks (the newest wins); NEXT=<section> continues at "## <section>",
// NEXT=done ends the run, and so does a block that exits non-zero. A task
// block expands to its Agent calls, all of them handed to Agents at once
// (one message); each answer must be what the prompt's "Return exactly:"
// line asks for, if it has one.
type Runner struct {
	Doc  protocol.Doc
	Name string   // for messages: the file's path
	Dir  string   // the bash blocks' working directory
	Env  []string // the bash blocks' whole environment

	// Values are the KEY=VALUE lines printed so far; they may be seeded
	// (a subagent's prompt carries its inputs as KEY=VALUE lines).
	Values map[string]string

	// Agents plays the Agent calls of one task block and returns each
	// one's final answer, in order. An error ends the run.
	Agents func(calls []protocol.Invocation) ([]string, error)

	// AfterBash, if set, sees the stdout of every bash block that succeeded.
	AfterBash func(s protocol.Step, stdout string)

	// MaxSteps bounds the steps of a run, so that a NEXT loop that never
	// ends is an error (default 500).
	MaxSteps int

	Done   bool
	Err    error    // why the run stopped early: the failing block (with its stderr), a bad jump, an agent
	Stdout string   // of the last bash block run
	Stderr string   // of the last bash block run
	Trace  []string // "section/bash" or "section/task" for each step run
	Steps  int      // steps run

	pc int
}

// NewRunner is a Runner for doc whose bash blocks run in dir with env.
func NewRunner(name string, doc protocol.Doc, dir string, env []string, agents func([]protocol.Invocation) ([]string, error)) *Runner {
	return &Runner{Doc: doc, Name: name, Dir: dir, Env: env, Values: map[string]string{}, Agents: agents}
}

// Run steps until the run ends and returns its error.
func (r *Runner) Run() error {
	for !r.Done {
		r.Step()
	}
	return r.Err
}

func (r *Runner) stop(format string, a ...any) {
	r.Done, r.Err = true, fmt.Errorf(format, a...)
}

// Step runs one step.
func (r *Runner) Step() {
	if r.Done {
		return
	}
	if r.pc >= len(r.Doc.Steps) {
		r.Done = true
		return
	}
	limit := r.MaxSteps
	if limit == 0 {
		limit = 500
	}
	if r.Steps >= limit {
		r.stop("%s: more than %d steps: a NEXT loop never ends", r.Name, limit)
		return
	}
	s := r.Doc.Steps[r.pc]
	r.pc++
	r.Steps++
	r.Trace = append(r.Trace, s.Section+"/"+s.Info)
	if r.Values == nil {
		r.Values = map[string]string{}
	}
	if s.Task != nil {
		r.task(s)
		return
	}
	r.bash(s)
}

func (r *Runner) bash(s protocol.Step) {
	cmd := exec.Command("bash", "-c", s.Body)
	cmd.Dir = r.Dir
	cmd.Env = append([]string{}, r.Env...) // never nil: nil would inherit ours
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	if err != nil {
		r.stop("%s:%d (## %s): %v: %s", r.Name, s.Line, s.Section, err, strings.TrimSpace(r.Stderr))
		return
	}
	if r.AfterBash != nil {
		r.AfterBash(s, r.Stdout)
	}
	next := ""
	for _, kv := range protocol.KeyValues(r.Stdout) {
		if kv[0] == "NEXT" {
			next = kv[1] // this block's newest NEXT
			continue
		}
		r.Values[kv[0]] = kv[1]
	}
	switch target, ok := r.Doc.Sections[next]; {
	case next == "":
	case next == "done":
		r.Done = true
	case !ok:
		r.stop("%s:%d printed NEXT=%s, but there is no \"## %s\"", r.Name, s.Line, next, next)
	default:
		r.pc = target
	}
}

func (r *Runner) task(s protocol.Step) {
	calls, err := s.Task.Expand(r.Values)
	if err != nil {
		r.stop("%s:%d: task: %v", r.Name, s.Line, err)
		return
	}
	if len(calls) == 0 {
		return
	}
	if r.Agents == nil {
		r.stop("%s:%d: a task block, and no agents to run it", r.Name, s.Line)
		return
	}
	answers, err := r.Agents(calls)
	if err != nil {
		r.stop("%s:%d: agent: %v", r.Name, s.Line, err)
		return
	}
	if len(answers) != len(calls) {
		r.stop("%s:%d: %d answers for %d agent calls", r.Name, s.Line, len(answers), len(calls))
		return
	}
	for i, c := range calls {
		for _, line := range strings.Split(c.Prompt, "\n") {
			if want, ok := protocol.ReturnLine(line); ok {
				if answers[i] != want {
					r.stop("%s:%d: agent %s answered %q, the prompt asked for %q", r.Name, s.Line, c.SubagentType, answers[i], want)
					return
				}
				break
			}
		}
	}
}

// Brief reads the file prompt tells its agent to read first (its "Read
// first:" line), a relative path from dir (the project, the agent's
// working directory).
func Brief(dir, prompt string) (string, error) {
	path, ok := protocol.ReadFirst(prompt)
	if !ok {
		return "", fmt.Errorf("the prompt names no file to read first:\n%s", prompt)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// placeholder is a part of a brief's template to fill in.
var placeholder = regexp.MustCompile(`<[^<>\n]+>`)

// Filled is what a literal-minded agent writes from its brief: the
// template of the brief's format section, each <...> filled in with a
// few words about topic (escaped in a JSON template). ok is false for a
// brief that gives no template.
func Filled(brief, topic string) (file string, ok bool) {
	lang, text, ok := protocol.Template(brief)
	if !ok {
		return "", false
	}
	return placeholder.ReplaceAllStringFunc(text, func(p string) string {
		words := strings.Trim(p, "<>") + " of " + topic
		if lang == "json" {
			b, _ := json.Marshal(words)
			return strings.Trim(string(b), `"`)
		}
		return words
	}), true
}
