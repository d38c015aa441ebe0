package plugin

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// orchestrators are the commands that run the whole machine; together
// they must stay small because their logic lives in the binary.
var orchestrators = []string{"coordinate", "supervise", "orchestrate"}

const orchestratorLineBudget = 600

// printedBy lists the KEY=VALUE keys each flowstate subcommand can print,
// for the static check that a task block's ${KEY}s come from a bash
// block; KEY_i stands for KEY_1, KEY_2, .... TestRun* check that the
// binary prints nothing outside this table.
var printedBy = map[string][]string{
	"phase-start":  append([]string{"DESCRIPTION", "CLASSIFICATION_PATH"}, planPrints...),
	"phase-plan":   planPrints,
	"phase-verify": append([]string{"RUNNING"}, planPrints...),
	"resume":       planPrints,
	"sm-status":    {"WORKFLOW_ID", "COMMAND_NAME", "WORKFLOW_SCOPE", "CURRENT_STATE", "TERMINAL_STATE", "COMPLETED_STATES", "IS_TERMINAL"},
	"list":         {},
	"status":       {},
	"approve":      personKeys,
	"reject":       personKeys,
}

// planPrints is what phase-plan prints, and every step that plans after
// it: the next batch, the sub-supervisor, the finished workflow, or what
// a person holding the workflow must do (heldKeys).
var planPrints = append([]string{"AGENT", "SPEC_DIR", "WORKER_COUNT", "TOPIC_i", "OUTPUT_i", "STATE", "SUPERVISOR",
	"WORKFLOW_ID", "FINAL_STATE", "ARTIFACTS_DIR", "ARTIFACT_COUNT", "NEXT"}, heldKeys...)

// heldKeys are what a step prints when a person holds its workflow
// (NEXT=stopped); personKeys what approve and reject print.
var (
	heldKeys   = []string{"WORKFLOW_ID", "STATUS", "WAITING_FOR", "REVIEW", "MESSAGE"}
	personKeys = []string{"WORKFLOW_ID", "STATUS", "CURRENT_STATE", "WAITING_FOR"}
)

// nextBy lists the sections each subcommand can jump to. "supervised" is
// never printed in sequential mode (/supervise) or in a sub-supervisor,
// "stopped" never in a sub-supervisor (it ends on its signal line).
var nextBy = map[string][]string{
	"phase-start":  {"classify", "classified", "work", "supervised", "verify", "stopped"},
	"phase-plan":   {"work", "supervised", "verify", "stopped"},
	"phase-verify": {"work", "supervised", "verify", "stopped"},
	"resume":       {"work", "supervised", "verify", "stopped"},
}

var (
	flowstateCall = regexp.MustCompile(`\bflowstate\s+([a-z][a-z-]*)`)
	literalKey    = regexp.MustCompile(`\b([A-Z][A-Z0-9_]*)=`)
	sourcing      = regexp.MustCompile(`(?m)(^|[;&|({]\s*|\bthen\s+|\bdo\s+)(source|\.)\s+\S`)
	positional    = regexp.MustCompile(`\$[0-9]|\$ARGUMENTS\[`)
	forEach       = regexp.MustCompile(`^i in 1\.\.\$\{[A-Z][A-Z0-9_]*\}$`)
	loopRef       = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)_i\}`)
	heredocStart  = regexp.MustCompile(`<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)`)
)

func allDocs(t *testing.T) []doc {
	return append(loadDocs(t, "commands"), loadDocs(t, "agents")...)
}

func TestFrontmatter(t *testing.T) {
	for _, d := range loadDocs(t, "commands") {
		if d.Frontmatter["description"] == "" {
			t.Errorf("%s: frontmatter has no description", d.Path)
		}
	}
	for _, d := range loadDocs(t, "agents") {
		fm := d.Frontmatter
		if fm["name"] != d.Name() || fm["description"] == "" || fm["tools"] == "" {
			t.Errorf("%s: frontmatter needs name: %s, description and tools; got %v", d.Path, d.Name(), fm)
		}
	}
}

func TestBashBlocksParse(t *testing.T) {
	for _, d := range allDocs(t) {
		for _, s := range d.Steps {
			if s.Task != nil {
				continue
			}
			out, err := exec.Command("bash", "-n", "-c", s.Body).CombinedOutput()
			if err != nil {
				t.Errorf("%s:%d: bash -n: %v\n%s", d.Path, s.Line, err, out)
			}
		}
	}
}

// TestBashBlocksStandAlone: each block runs as its own process, so it may
// not source libraries, and user text may reach it only as the body of a
// quoted heredoc, where nothing in it is expanded or run.
func TestBashBlocksStandAlone(t *testing.T) {
	for _, d := range allDocs(t) {
		if m := positional.FindString(d.Body); m != "" && d.IsCommand() {
			t.Errorf("%s: %q is replaced by a command argument in this Claude Code version; use $ARGUMENTS in a quoted heredoc", d.Path, m)
		}
		outside := d.Body
		for _, s := range d.Steps {
			if s.Task != nil {
				if strings.Contains(s.Task.Prompt, "$ARGUMENTS") {
					t.Errorf("%s:%d: $ARGUMENTS in a task block; agents get values from flowstate", d.Path, s.Line)
				}
				continue
			}
			outside = strings.Replace(outside, s.Body, "", 1)
			if sourcing.MatchString(s.Body) {
				t.Errorf("%s:%d: a bash block sources a file; call flowstate instead", d.Path, s.Line)
			}
			if !strings.Contains(s.Body, "flowstate") {
				t.Errorf("%s:%d: a bash block must get what it needs from flowstate", d.Path, s.Line)
			}
			checkHeredocs(t, d, s)
		}
		if strings.Contains(outside, "$ARGUMENTS") {
			t.Errorf("%s: $ARGUMENTS outside a bash block's heredoc", d.Path)
		}
	}
}

func checkHeredocs(t *testing.T, d doc, s step) {
	delim, quoted := "", false
	for _, line := range strings.Split(s.Body, "\n") {
		switch {
		case delim != "" && line == delim:
			delim = ""
		case delim != "":
			if strings.Contains(line, "$ARGUMENTS") && (!quoted || strings.TrimSpace(line) != "$ARGUMENTS") {
				t.Errorf("%s:%d: $ARGUMENTS must be alone on its line in a quoted heredoc (<<'FLOWSTATE_EOF')", d.Path, s.Line)
			}
		default:
			if strings.Contains(line, "$ARGUMENTS") {
				t.Errorf("%s:%d: $ARGUMENTS on a command line: %q", d.Path, s.Line, line)
			}
			if m := heredocStart.FindStringSubmatch(line); m != nil {
				delim, quoted = m[2], m[1] != "" && m[1] == m[3]
			}
		}
	}
	if delim != "" {
		t.Errorf("%s:%d: heredoc %s never closed", d.Path, s.Line, delim)
	}
}

// printedKeys is what a bash block may print: literal KEY= text and the
// keys of the flowstate subcommands it calls.
func printedKeys(bash string) map[string]bool {
	keys := map[string]bool{}
	for _, m := range literalKey.FindAllStringSubmatch(bash, -1) {
		keys[m[1]] = true
	}
	for _, m := range flowstateCall.FindAllStringSubmatch(bash, -1) {
		for _, k := range printedBy[m[1]] {
			keys[k] = true
		}
	}
	return keys
}

// TestTaskBlocksFollowTheirValues: a task block comes right after a bash
// block (or starts a section a bash block jumps to), and every ${KEY} it
// uses is printed by a bash block before it.
func TestTaskBlocksFollowTheirValues(t *testing.T) {
	for _, d := range allDocs(t) {
		starts := map[int]bool{}
		for _, i := range d.Sections {
			starts[i] = true
		}
		printed := map[string]bool{}
		for i, s := range d.Steps {
			if s.Task == nil {
				for k := range printedKeys(s.Body) {
					printed[k] = true
				}
				continue
			}
			if i == 0 || d.Steps[i-1].Task != nil && !starts[i] {
				t.Errorf("%s:%d: a task block must follow the bash block that prints its values", d.Path, s.Line)
			}
			tk := s.Task
			if tk.ForEach != "" && !forEach.MatchString(tk.ForEach) {
				t.Errorf("%s:%d: for_each %q: want i in 1..${COUNT}", d.Path, s.Line, tk.ForEach)
			}
			for _, m := range keyRef.FindAllStringSubmatch(tk.SubagentType+tk.Description+tk.ForEach+tk.Prompt, -1) {
				if !printed[m[1]] {
					t.Errorf("%s:%d: ${%s} is not printed by an earlier bash block", d.Path, s.Line, m[1])
				}
			}
			for _, m := range loopRef.FindAllStringSubmatch(tk.Description+tk.Prompt, -1) {
				if tk.ForEach == "" || !printed[m[1]+"_i"] {
					t.Errorf("%s:%d: ${%s_i} needs a for_each and an earlier bash block printing %s_1...", d.Path, s.Line, m[1], m[1])
				}
			}
		}
	}
}

// TestJumpsLand: every NEXT a block can print names a section of its file.
func TestJumpsLand(t *testing.T) {
	for _, d := range allDocs(t) {
		sequential := strings.Contains(d.Body, "--sequential")
		for _, s := range d.Steps {
			if s.Task != nil {
				continue
			}
			var targets []string
			for _, m := range regexp.MustCompile(`NEXT=([a-z-]+)`).FindAllStringSubmatch(s.Body, -1) {
				targets = append(targets, m[1])
			}
			for _, m := range flowstateCall.FindAllStringSubmatch(s.Body, -1) {
				for _, n := range nextBy[m[1]] {
					supervisorMode := strings.Contains(s.Body, "--supervisor")
					switch {
					case n == "stopped" && supervisorMode, // a sub-supervisor ends on its signal line
						n == "supervised" && (sequential || supervisorMode),
						n == "classify" && (strings.Contains(s.Body, "--classified") || strings.Contains(s.Body, "--require-scope")),
						n == "classified" && !strings.Contains(s.Body, "--classified"):
						continue // never printed in this mode
					}
					targets = append(targets, n)
				}
			}
			for _, n := range targets {
				if _, ok := d.Sections[n]; !ok && n != "done" {
					t.Errorf("%s:%d: NEXT=%s has no section \"## %s\"", d.Path, s.Line, n, n)
				}
			}
		}
	}
}

func TestOrchestratorsStaySmall(t *testing.T) {
	total := 0
	for _, name := range orchestrators {
		total += loadDoc(t, "commands/"+name+".md").Lines
	}
	if total > orchestratorLineBudget {
		t.Errorf("the orchestrator commands have %d lines together, more than %d: move logic into flowstate", total, orchestratorLineBudget)
	}
	t.Logf("orchestrators: %d lines", total)
}

// TestAgentsExist: every agent a command or agent names, and every agent
// phase-plan can name (${AGENT}, ${SUPERVISOR}), has a file; every agent
// file is used.
func TestAgentsExist(t *testing.T) {
	agents := map[string]bool{}
	for _, d := range loadDocs(t, "agents") {
		agents[d.Name()] = false
	}
	use := func(where, name string) {
		if _, ok := agents[name]; !ok {
			t.Errorf("%s names agent %q, which has no agents/%s.md", where, name, name)
		}
		agents[name] = true
	}
	for _, d := range allDocs(t) {
		for _, s := range d.Steps {
			if s.Task == nil {
				continue
			}
			name, ok := strings.CutPrefix(s.Task.SubagentType, "flowstate:")
			if !ok {
				t.Errorf("%s:%d: subagent_type %q must be flowstate:<agent>", d.Path, s.Line, s.Task.SubagentType)
			}
			if !strings.Contains(name, "${") {
				use(d.Path, name)
			}
		}
	}
	for _, name := range machine.Default().AgentNames() {
		use("the default machine's work (lib/machine/default.json)", name)
	}
	for name, used := range agents {
		if !used {
			t.Errorf("agents/%s.md is never invoked", name)
		}
	}
}

// TestAgentBodiesLeavePathsToPrompts: the paths an agent writes come from
// its prompt; a write or return line in the body would be followed too
// (the stand-in writes it twice) and could name a stale path.
func TestAgentBodiesLeavePathsToPrompts(t *testing.T) {
	for _, d := range loadDocs(t, "agents") {
		for _, p := range d.Prose { // the lines outside fenced blocks
			if _, ok := protocol.WriteTarget(p.Text); ok {
				t.Errorf("%s:%d: write line in the agent body: %q", d.Path, p.Line, p.Text)
			}
			if _, ok := protocol.ReturnLine(p.Text); ok {
				t.Errorf("%s:%d: return line in the agent body: %q", d.Path, p.Line, p.Text)
			}
		}
	}
}

// TestSharedSectionsAgree: the orchestrators share their phase loop and
// the supervisors their fan-out; this keeps the copies identical, so a
// change to one is a change to all.
func TestSharedSectionsAgree(t *testing.T) {
	section := func(d doc, name string) []step {
		i, ok := d.Sections[name]
		if !ok {
			return nil
		}
		end := len(d.Steps)
		for _, j := range d.Sections {
			if j > i && j < end {
				end = j
			}
		}
		return d.Steps[i:end]
	}
	ref := loadDoc(t, "commands/coordinate.md")
	// The reference sections must be there: two empty sections would be
	// equal and prove nothing.
	refSections := map[string][]step{}
	shared := []string{"phase", "work", "verify", "supervised"}
	for _, sec := range shared {
		if refSections[sec] = section(ref, sec); len(refSections[sec]) == 0 {
			t.Fatalf("commands/coordinate.md has no steps in section %q", sec)
		}
	}
	for _, name := range []string{"orchestrate", "supervise", "workflow-resume"} {
		d := loadDoc(t, "commands/"+name+".md")
		for _, sec := range shared {
			if name == "supervise" && sec == "supervised" {
				continue // sequential: never delegates
			}
			if !slices.EqualFunc(section(d, sec), refSections[sec], sameStep) {
				t.Errorf("%s: section %q differs from commands/coordinate.md", d.Path, sec)
			}
		}
	}
	refSections["work"] = section(ref, "work")
	if len(refSections["phase"]) != 1 || len(refSections["work"]) != 1 || refSections["work"][0].Task == nil {
		t.Fatalf("commands/coordinate.md: ## phase must be a bash block, ## work the worker task")
	}
	worker := refSections["work"][0].Task
	supervisors := map[string]bool{}
	for _, r := range orchestrate.Roles(machine.Default()) {
		if r.Supervisor != nil {
			supervisors[r.Supervisor.Agent] = true
		}
	}
	for name := range supervisors {
		d := loadDoc(t, "agents/"+name+".md")
		plan, work, verify := section(d, "workers"), section(d, "work"), section(d, "verify")
		if len(plan) != 1 || len(work) != 1 || work[0].Task == nil || *work[0].Task != *worker || len(verify) != 1 {
			t.Errorf("%s: ## workers must be phase-plan --supervisor, ## work the worker task of commands/coordinate.md, ## verify phase-verify --supervisor", d.Path)
		}
	}
}

func sameStep(a, b step) bool {
	if a.Task == nil || b.Task == nil {
		return a.Task == nil && b.Task == nil && a.Body == b.Body
	}
	return *a.Task == *b.Task
}
