package supervisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Phase is one phase of a plan. EstimateMs is 0 when the plan gives none.
type Phase struct {
	Number       int    `json:"phase"`
	Name         string `json:"name,omitempty"`
	Dependencies []int  `json:"dependencies"`
	EstimateMs   int64  `json:"estimate_ms,omitempty"`
}

var (
	phaseHeading = lazyRegexp(`(?i)^phase\s+([0-9]+)\s*(?:[:.)\-–—]\s*(.*))?$`)
	planKey      = lazyRegexp(`(?i)^(dependencies|depends on|estimate_ms)\s*:\s*(.*)$`)
)

// ParsePlan reads the phases of a plan in the protocol's format: headings
// "### Phase N: Name" (any level from 2), each with a "dependencies: [..]"
// line and optionally an "estimate_ms: N" line in its body. Items may read
// "2" or "Phase 2"; "[]" and "none" mean no dependencies. A plan where no
// phase has a dependencies line runs its phases in order, one after another;
// one where only some have it is invalid, as are duplicate phase numbers and
// dependencies on phases the plan does not have.
func ParsePlan(md []byte) ([]Phase, error) {
	lines := scanMarkdown(md)
	var phases []Phase
	declared := 0
	for i, l := range lines {
		m := phaseHeading().FindStringSubmatch(plain(l.title))
		if l.level < 2 || m == nil {
			continue
		}
		p := Phase{Name: strings.TrimSpace(m[2])}
		var err error
		if p.Number, err = phaseNumber(m[1]); err != nil {
			return nil, fail.Invalidf("plan heading %q: %v", l.title, err)
		}
		found, err := phaseBody(&p, lines[i+1:], l.level)
		if err != nil {
			return nil, err
		}
		if found {
			declared++
		}
		phases = append(phases, p)
	}
	if len(phases) == 0 {
		return nil, fail.Invalidf("plan has no phases: expected headings like \"### Phase 1: Name\" followed by \"dependencies: []\"")
	}
	switch declared {
	case 0:
		for i := 1; i < len(phases); i++ {
			phases[i].Dependencies = []int{phases[i-1].Number}
		}
	case len(phases):
	default:
		var missing []string
		for _, p := range phases {
			if p.Dependencies == nil {
				missing = append(missing, strconv.Itoa(p.Number))
			}
		}
		return nil, fail.Invalidf("plan: phases %s have no \"dependencies: [..]\" line; add one under each phase heading (\"dependencies: []\" for none)", strings.Join(missing, ", "))
	}
	return phases, checkPhases(phases)
}

// phaseBody reads the dependencies and estimate lines of a phase, whose body
// runs to the next heading of its level or higher. found reports whether a
// dependencies line was there; the first one counts.
func phaseBody(p *Phase, rest []mdLine, level int) (found bool, err error) {
	for _, l := range rest {
		if l.level > 0 && l.level <= level {
			break
		}
		t := strings.TrimSpace(l.text)
		if _, item, ok := listItem(t); ok {
			t = item
		}
		m := planKey().FindStringSubmatch(strings.ReplaceAll(t, "**", ""))
		switch {
		case l.level > 0 || m == nil: // a subheading or prose
		case strings.EqualFold(m[1], "estimate_ms") && p.EstimateMs == 0:
			n, err := strconv.ParseInt(strings.TrimSpace(m[2]), 10, 64)
			if err != nil || n < 0 {
				return false, fail.Invalidf("phase %d: estimate_ms %q is not a non-negative whole number of milliseconds", p.Number, m[2])
			}
			p.EstimateMs = n
		case !strings.EqualFold(m[1], "estimate_ms") && !found:
			if p.Dependencies, err = parseDepList(m[2]); err != nil {
				return false, fail.Invalidf("phase %d: dependencies %q: %v; write e.g. \"dependencies: [1, 2]\"", p.Number, m[2], err)
			}
			found = true
		}
	}
	return found, nil
}

// parseDepList reads "[1, 2]", "1, Phase 2", "[]" or "none", and what a
// careful writer plausibly adds: a comment after the list ("[1, 2]
// (schema first)") or a phase's name after its number ("Phase 1 (Data
// model)", "2 - API"). Anything else is refused.
func parseDepList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "["); ok {
		list, comment, closed := strings.Cut(rest, "]")
		if !closed {
			return nil, fmt.Errorf("the list has no closing ]")
		}
		if c := strings.TrimSpace(comment); c != "" && !isCommentStart(c) {
			return nil, fmt.Errorf("%q after the list is not a comment (start it with \"(\" or \"#\")", c)
		}
		s = strings.TrimSpace(list)
	}
	deps := []int{}
	if s == "" || strings.EqualFold(s, "none") {
		return deps, nil
	}
	for _, item := range strings.Split(s, ",") {
		m := depItem().FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			return nil, fmt.Errorf("%q is not a phase number", strings.TrimSpace(item))
		}
		n, err := phaseNumber(m[1])
		if err != nil {
			return nil, err
		}
		deps = append(deps, n)
	}
	return deps, nil
}

// depItem is one dependency: a phase number, maybe after "Phase" and
// before a name set off by a bracket, dash or colon.
var depItem = lazyRegexp(`(?i)^(?:phase\s*)?([0-9]+)\s*(?:[(:\-–—].*)?$`)

// isCommentStart reports whether text after a dependency list reads as
// a comment on it.
func isCommentStart(c string) bool {
	return strings.ContainsAny(c[:1], "(#-–—/;:") || strings.HasPrefix(c, "–") || strings.HasPrefix(c, "—")
}

// phaseNumber parses a phase number: a positive integer.
func phaseNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a phase number (1, 2, ...)", s)
	}
	return n, nil
}

// parseDeps reads phases from JSON: an array of phase objects
// ([{"phase": 1, "dependencies": [], "estimate_ms": 60000}, ...]) or an
// object from phase number to its dependencies ({"1": [], "2": [1]}).
func parseDeps(data []byte) ([]Phase, error) {
	var phases []Phase
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var m map[string][]int
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, fail.Invalidf("dependencies JSON: %v; expected {\"1\": [], \"2\": [1]}", err)
		}
		for k, deps := range m {
			n, err := phaseNumber(k)
			if err != nil {
				return nil, fail.Invalidf("dependencies JSON: key %v", err)
			}
			phases = append(phases, Phase{Number: n, Dependencies: deps})
		}
		sort.Slice(phases, func(a, b int) bool { return phases[a].Number < phases[b].Number })
	} else if err := decodeStrict(data, &phases); err != nil {
		return nil, fail.Invalidf("dependencies JSON: %v; expected [{\"phase\": 1, \"dependencies\": [], \"estimate_ms\": 60000}, ...] or {\"1\": [], \"2\": [1]}", err)
	}
	if len(phases) == 0 {
		return nil, fail.Invalidf("dependencies JSON has no phases")
	}
	for i := range phases {
		if phases[i].Dependencies == nil {
			phases[i].Dependencies = []int{}
		}
	}
	return phases, checkPhases(phases)
}

// ParsePhases reads a plan named name: dependencies JSON (parseDeps) when
// the name ends in .json or the text starts with [ or {, the plan markdown
// (ParsePlan) otherwise.
func ParsePhases(name string, data []byte) ([]Phase, error) {
	t := bytes.TrimSpace(data)
	if strings.HasSuffix(name, ".json") || bytes.HasPrefix(t, []byte("[")) || bytes.HasPrefix(t, []byte("{")) {
		return parseDeps(data)
	}
	return ParsePlan(data)
}

// checkPhases rejects numbers that are not positive or repeat, estimates
// out of range and dependencies on phases that do not exist.
func checkPhases(phases []Phase) error {
	have := make(map[int]bool, len(phases))
	for _, p := range phases {
		if p.Number < 1 {
			return fail.Invalidf("phase number %d: phases are numbered from 1", p.Number)
		}
		if have[p.Number] {
			return fail.Invalidf("phase %d appears twice; give each phase its own number", p.Number)
		}
		if p.EstimateMs < 0 || p.EstimateMs > maxMs {
			return fail.Invalidf("phase %d: estimate_ms %d is not within 0-%d", p.Number, p.EstimateMs, int64(maxMs))
		}
		have[p.Number] = true
	}
	for _, p := range phases {
		for _, d := range p.Dependencies {
			if !have[d] {
				return fail.Invalidf("phase %d depends on phase %d, which the plan does not have; fix its dependencies line", p.Number, d)
			}
		}
	}
	return nil
}

// Waves groups phases into waves that can run in parallel: each wave holds
// the phases whose dependencies are all in earlier waves, in ascending order
// (Kahn's algorithm, made deterministic by sorting). A cycle is invalid and
// named, e.g. "dependency cycle: phase 2 -> 3 -> 2 (each depends on the next)".
func Waves(phases []Phase) ([][]int, error) {
	if err := checkPhases(phases); err != nil {
		return nil, err
	}
	deps := make(map[int][]int, len(phases))
	waiting := make(map[int]int, len(phases))      // phase -> dependencies not yet placed
	dependents := make(map[int][]int, len(phases)) // phase -> phases depending on it
	var ready []int
	for _, p := range phases {
		uniq := map[int]bool{}
		for _, d := range p.Dependencies {
			if !uniq[d] {
				uniq[d] = true
				deps[p.Number] = append(deps[p.Number], d)
				dependents[d] = append(dependents[d], p.Number)
			}
		}
		waiting[p.Number] = len(uniq)
		if len(uniq) == 0 {
			ready = append(ready, p.Number)
		}
	}
	waves := [][]int{}
	placed := 0
	for len(ready) > 0 {
		sort.Ints(ready)
		waves = append(waves, ready)
		placed += len(ready)
		var next []int
		for _, n := range ready {
			for _, d := range dependents[n] {
				if waiting[d]--; waiting[d] == 0 {
					next = append(next, d)
				}
			}
		}
		ready = next
	}
	if placed < len(phases) {
		return nil, fail.Invalidf("dependency cycle: phase %s (each depends on the next); remove one of these dependencies", cycle(deps, waiting))
	}
	return waves, nil
}

// cycle finds a cycle among the phases Kahn's algorithm could not place:
// each of them waits on another unplaced one, so walking those edges from the
// lowest unplaced phase must come back to a phase already seen. The cycle is
// printed from its lowest phase.
func cycle(deps map[int][]int, waiting map[int]int) string {
	var stuck []int
	for n, w := range waiting {
		if w > 0 {
			stuck = append(stuck, n)
		}
	}
	sort.Ints(stuck)
	pos := map[int]int{}
	var path []int
	for n := stuck[0]; ; {
		if i, seen := pos[n]; seen {
			path = path[i:]
			break
		}
		pos[n] = len(path)
		path = append(path, n)
		next := 0
		for _, d := range deps[n] {
			if waiting[d] > 0 && (next == 0 || d < next) {
				next = d
			}
		}
		n = next
	}
	low := 0
	for i, n := range path {
		if n < path[low] {
			low = i
		}
	}
	path = append(path[low:], path[:low]...)
	parts := make([]string, 0, len(path)+1)
	for _, n := range append(path, path[0]) {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, " -> ")
}

// Estimate is the duration of a plan run wave by wave versus phase by phase.
type Estimate struct {
	ParallelMs         int64   `json:"parallel_ms"`
	SequentialMs       int64   `json:"sequential_ms"`
	TimeSavingsPercent float64 `json:"time_savings_percent"`
}

// EstimateWaves sums, per wave, its longest phase (parallel) and all phases
// (sequential). Every phase needs an estimate_ms; the error names those
// without.
func EstimateWaves(phases []Phase, waves [][]int) (Estimate, error) {
	ms := make(map[int]int64, len(phases))
	var missing []string
	for _, p := range phases {
		ms[p.Number] = p.EstimateMs
		if p.EstimateMs == 0 {
			missing = append(missing, strconv.Itoa(p.Number))
		}
	}
	if len(missing) > 0 {
		return Estimate{}, fail.Invalidf("phases %s have no estimate_ms; add \"estimate_ms: N\" under each phase heading", strings.Join(missing, ", "))
	}
	var e Estimate
	for _, w := range waves {
		var longest int64
		for _, n := range w {
			e.SequentialMs += ms[n]
			longest = max(longest, ms[n])
		}
		e.ParallelMs += longest
	}
	e.TimeSavingsPercent = savingsPercent(e.ParallelMs, e.SequentialMs)
	return e, nil
}
