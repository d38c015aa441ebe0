package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// A runner plays a command file the way docs/command-protocol.md says a
// model must: bash blocks run as written, each in its own process;
// KEY=VALUE lines feed ${KEY} in later task blocks; NEXT=<section> jumps;
// NEXT=done or a failing block ends the run. Task blocks go to fake
// agents. Claude Code's own substitutions ($ARGUMENTS,
// ${CLAUDE_PLUGIN_ROOT}) are applied to the whole file first.
type runner struct {
	t        *testing.T
	steps    []block
	sections map[string]int
	pc       int
	env      map[string]string // KEY=VALUE printed so far
	procEnv  []string          // the bash blocks' environment
	dir      string
	agents   map[string]agent
	Done     bool
	Err      error  // the failing block's error, its stderr included
	Stderr   string // of the last bash block
	Trace    []string
}

// agent does what an agent would for one task: write files, answer.
type agent func(prompt string) (answer string, err error)

var (
	kvLine   = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	keyRef   = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)
	writeTo  = regexp.MustCompile(`(?m)^Write the [a-z ]+ to: (\S+)$`)
	returnLn = regexp.MustCompile(`(?m)^Return exactly: (.+)$`)
)

func newRunner(t *testing.T, command, arguments, pluginRoot, dir string, procEnv []string, agents map[string]agent) *runner {
	t.Helper()
	md, err := os.ReadFile(command)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("$ARGUMENTS", arguments, "${CLAUDE_PLUGIN_ROOT}", pluginRoot).Replace(string(md))
	all, err := blocks(text)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	r := &runner{t: t, sections: map[string]int{}, env: map[string]string{}, procEnv: procEnv, dir: dir, agents: agents}
	for _, b := range all {
		if b.Info != "bash" && b.Info != "task" {
			continue
		}
		if _, seen := r.sections[b.Section]; !seen {
			r.sections[b.Section] = len(r.steps)
		}
		r.steps = append(r.steps, b)
	}
	return r
}

// Run steps until the command ends.
func (r *runner) Run() *runner {
	for !r.Done {
		r.Step()
	}
	return r
}

// Step runs one block.
func (r *runner) Step() {
	if r.Done {
		return
	}
	if r.pc >= len(r.steps) {
		r.Done = true
		return
	}
	b := r.steps[r.pc]
	r.pc++
	r.Trace = append(r.Trace, b.Section+"/"+b.Info)
	if b.Info == "task" {
		r.task(b)
		return
	}
	r.bash(b)
}

func (r *runner) bash(b block) {
	cmd := exec.Command("bash", "-c", b.Body)
	cmd.Dir = r.dir
	cmd.Env = r.procEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r.Stderr = stderr.String()
	if err != nil {
		r.Done, r.Err = true, fmt.Errorf("block at line %d (## %s): %v: %s", b.Line, b.Section, err, stderr.String())
		return
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		m := kvLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "NEXT" {
			r.env[m[1]] = m[2]
			continue
		}
		if m[2] == "done" {
			r.Done = true
			return
		}
		pc, ok := r.sections[m[2]]
		if !ok {
			r.Done, r.Err = true, fmt.Errorf("block at line %d printed NEXT=%s, but there is no ## %s", b.Line, m[2], m[2])
			return
		}
		r.pc = pc
	}
}

func (r *runner) task(b block) {
	body := keyRef.ReplaceAllStringFunc(b.Body, func(ref string) string {
		k := keyRef.FindStringSubmatch(ref)[1]
		if v, ok := r.env[k]; ok {
			return v
		}
		r.t.Errorf("task at line %d uses ${%s}, which no earlier block printed", b.Line, k)
		return ref
	})
	typ, prompt := parseTask(body)
	a, ok := r.agents[typ]
	if !ok {
		r.Done, r.Err = true, fmt.Errorf("task at line %d: no agent %q", b.Line, typ)
		return
	}
	answer, err := a(prompt)
	if err != nil {
		r.Done, r.Err = true, fmt.Errorf("agent %s: %v", typ, err)
		return
	}
	if m := returnLn.FindStringSubmatch(prompt); m != nil && answer != m[1] {
		r.t.Errorf("agent %s answered %q, the prompt asked for %q", typ, answer, m[1])
	}
}

// parseTask reads the subagent_type and the "prompt: |" block of a task.
func parseTask(body string) (typ, prompt string) {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(t, "subagent_type:"); ok {
			typ = strings.TrimSpace(v)
		}
		if t == "prompt: |" {
			var p []string
			for _, pl := range lines[i+1:] {
				if strings.TrimSpace(pl) == "}" {
					break
				}
				p = append(p, strings.TrimSpace(pl))
			}
			prompt = strings.Join(p, "\n")
		}
	}
	return typ, prompt
}

// writeAgent returns an agent that writes content(prompt) to the path
// its prompt names and answers as the prompt asks.
func writeAgent(content func(prompt string) string) agent {
	return func(prompt string) (string, error) {
		m := writeTo.FindStringSubmatch(prompt)
		if m == nil {
			return "", fmt.Errorf("prompt names no file to write:\n%s", prompt)
		}
		if err := os.WriteFile(m[1], []byte(content(prompt)), 0o644); err != nil {
			return "", err
		}
		return "REPORT_CREATED: " + m[1], nil
	}
}
