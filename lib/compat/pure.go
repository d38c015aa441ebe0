package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/intent"
	"github.com/flowstate-dev/flowstate/lib/statefile"
)

// The pure rules of the functions: no I/O, table-tested.

var (
	// commandName is what generate_unique_workflow_id takes.
	commandName = lazyRegexp(`^[a-z_][a-z0-9_]*$`)
	// workflowIDForm is the id validate_workflow_id accepts: what
	// generate_unique_workflow_id makes, with an optional suffix.
	workflowIDForm = lazyRegexp(`^[a-z_]+_[0-9]+(_[a-z_]+)?$`)
	// varName is a shell variable name.
	varName = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// namedCheckpoint is a name save_json_checkpoint takes: it becomes a
	// key of phase_data.named.
	namedCheckpoint = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	// keyForm is the one argument of the design's load_workflow_state KEY:
	// an upper-case variable name, which no generated workflow id is.
	keyForm = lazyRegexp(`^[A-Z][A-Z0-9_]*$`)
	// jsonValue is a value append_workflow_state takes for JSON: one
	// starting, after blanks, with [ or {, as the original's check was.
	jsonValue = lazyRegexp(`^[ \t\n\v\f\r]*[\[{]`)
)

// uniqueID is generate_unique_workflow_id's id: COMMAND_<nanoseconds>.
func uniqueID(command string, now time.Time) string {
	return command + "_" + strconv.FormatInt(now.UnixNano(), 10)
}

// recoveredID is what validate_workflow_id prints for an id it refuses.
func recoveredID(command string, now time.Time) string {
	if command == "" {
		command = "workflow"
	}
	return fmt.Sprintf("%s_%d_recovered", command, now.Unix())
}

// phaseState is map_phase_to_state: 0..7 to their state, anything else
// to initialize.
func phaseState(phase string) string {
	states := checkpoint.PhaseStates()
	for i, s := range states {
		if phase == strconv.Itoa(i) {
			return s
		}
	}
	return states[0]
}

// statePhase is map_state_to_phase: the phase number of state, 0 for an
// unknown one.
func statePhase(state string) string {
	return strconv.Itoa(max(0, slices.Index(checkpoint.PhaseStates(), state)))
}

// entered are the states the original's COMPLETED_STATES held: every
// state entered since the initial one, in order, each once. flowstate
// records the states left (completed, initial first), so the two lists
// differ by the initial state and the current one.
func entered(completed []string, current, initial string) []string {
	out := []string{}
	seen := map[string]bool{"": true, initial: true} // a checkpoint can list any number
	for _, s := range append(slices.Clone(completed), current) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// constName is the STATE_* variable of a state: STATE_ and the name in
// upper case, '-' as '_'.
func constName(state string) string {
	return "STATE_" + strings.ToUpper(strings.ReplaceAll(state, "-", "_"))
}

// notConstants are STATE_* names the libraries use for something else.
var notConstants = []string{"STATE_FILE", "STATE_TRANSITIONS"}

// constants maps each state to its STATE_* variable, in the order of
// states. Two states spelling the same name (a-b, a_b) get none: which
// would it hold?
func constants(states []string) [][2]string {
	count := map[string]int{}
	for _, s := range states {
		count[constName(s)]++
	}
	var out [][2]string
	for _, s := range states {
		if n := constName(s); count[n] == 1 && !slices.Contains(notConstants, n) {
			out = append(out, [2]string{n, s})
		}
	}
	return out
}

// resembles returns the state that word, which is not one, reads like:
// the same stem (planning, planned: plan; implementation: implement;
// completion: complete). "" when none. sm_transition A B refuses such a
// B rather than guess between FROM TO and STATE REASON.
func resembles(word string, states []string) string {
	w := strings.ToLower(word)
	if len(w) < 3 || strings.ContainsFunc(w, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_' || r == '-') }) {
		return ""
	}
	for _, s := range states {
		stem := strings.TrimSuffix(s, "e")
		if len(stem) >= 3 && strings.HasPrefix(w, stem) || strings.HasPrefix(s, w) {
			return s
		}
	}
	return ""
}

// genericTopics is the original's fallback: "Topic 1" ... "Topic n", n in
// 1-4 (2 otherwise).
func genericTopics(n string) []string {
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > classify.MaxComplexity {
		k = 2
	}
	out := make([]string, k)
	for i := range out {
		out[i] = "Topic " + strconv.Itoa(i+1)
	}
	return out
}

// topics are the research topics flowstate's offline classifier finds in
// description, else the generic ones.
func topics(description, n string) []string {
	if strings.TrimSpace(description) != "" {
		if t := intent.Classify(description).ResearchTopics; len(t) > 0 {
			return t
		}
	}
	return genericTopics(n)
}

// plansDescription is the description generate_descriptive_topics_from_plans
// classifies: revise PLAN and PLAN ...
func plansDescription(plans []string) string {
	return "revise " + strings.Join(plans, " and ")
}

// jqPath turns the jq paths checkpoint_get_field took (.a.b, .a[0]) into
// flowstate's (a.b, a.0).
func jqPath(p string) string {
	p = strings.TrimPrefix(p, ".")
	p = strings.ReplaceAll(p, "[", ".")
	return strings.ReplaceAll(p, "]", "")
}

// jsonText encodes v as JSON, keeping <, > and & as they are.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, slices and maps of them always encode
	return strings.TrimSuffix(b.String(), "\n")
}

// isObject reports whether s, trimmed, starts a JSON object: the design's
// save_checkpoint COMMAND JSON against the original's TYPE PROJECT.
func isObject(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "{") }

// lazyRegexp compiles expr on first use, not at every flowstate start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// assignLine is a line of a state file the original wrote that sourcing
// can only assign: NAME=VALUE, exported or not, the value bare, in single
// quotes, or in double quotes with nothing that expands ($, `) and only
// \" and \\ escaped.
var assignLine = lazyRegexp(`^(export )?([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_./:@%+,=-]*|'[^']*'|"([^"\\$` + "`" + `]|\\["\\])*")$`)

// onlyAssigns reports whether sourcing a state file flowstate did not
// generate can only assign variables that change nothing else: every
// line blank, a comment or an assignLine of a name that is not reserved
// (BASH_ENV, PATH, ... would run code in later commands).
func onlyAssigns(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := assignLine().FindStringSubmatch(line)
		if m == nil {
			return false
		}
		if _, reserved := statefile.Reserved(m[2]); reserved {
			return false
		}
	}
	return true
}
