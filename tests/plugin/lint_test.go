package plugin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/lint"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/tests/internal/testenv"
)

// orchestrators are the commands that run the whole machine; together
// they must stay small because their logic lives in the binary.
var orchestrators = []string{"coordinate", "supervise", "orchestrate"}

const orchestratorLineBudget = 600

func allDocs(t *testing.T) []doc {
	return append(loadDocs(t, "commands"), loadDocs(t, "agents")...)
}

// TestLint: every command and agent follows the command protocol, as
// `flowstate lint` checks any user's file (lib/lint). The tests below
// add what only flowstate's own files must do.
func TestLint(t *testing.T) {
	for _, d := range allDocs(t) {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), d.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range lint.Check(d.Path, string(b)) {
			t.Error(f)
		}
	}
}

// TestAgentNamesAreFileNames: commands name agents by their files'
// names, and Claude Code finds them by the name in the frontmatter.
func TestAgentNamesAreFileNames(t *testing.T) {
	for _, d := range loadDocs(t, "agents") {
		if d.Frontmatter["name"] != d.Name() {
			t.Errorf("%s: frontmatter name %q; want %s", d.Path, d.Frontmatter["name"], d.Name())
		}
	}
}

// TestBashBlocksCallFlowstate: a block of flowstate's own gets what it
// needs from flowstate, never from elsewhere.
func TestBashBlocksCallFlowstate(t *testing.T) {
	for _, d := range allDocs(t) {
		for _, s := range d.Steps {
			if s.Bash() && !strings.Contains(s.Body, "flowstate") {
				t.Errorf("%s:%d: a bash block must get what it needs from flowstate", d.Path, s.Line)
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
	flows, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "workflows", "*.js"))
	for _, f := range flows {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), `const STEP_AGENT = "flowstate:`)
		name, _, _ := strings.Cut(rest, `"`)
		use(filepath.Base(f), name)
	}
	for name, used := range agents {
		if !used {
			t.Errorf("agents/%s.md is never invoked", name)
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
	// ## work launches a batch: its workers in the project's tree, or
	// each in a worktree of its own (one of the two counts is 0).
	work := refSections["work"]
	if len(refSections["phase"]) != 1 || len(work) != 2 || work[0].Task == nil || work[1].Task == nil ||
		work[0].Task.Isolation != "" || work[1].Task.Isolation != "worktree" {
		t.Fatalf("commands/coordinate.md: ## phase must be a bash block, ## work the worker task and the isolated workers' task")
	}
	supervisors := map[string]bool{}
	for _, r := range orchestrate.Roles(machine.Default()) {
		if r.Supervisor != nil {
			supervisors[r.Supervisor.Agent] = true
		}
	}
	for name := range supervisors {
		d := loadDoc(t, "agents/"+name+".md")
		plan, work, verify := section(d, "workers"), section(d, "work"), section(d, "verify")
		if len(plan) != 1 || !slices.EqualFunc(work, refSections["work"], sameStep) || len(verify) != 1 {
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
