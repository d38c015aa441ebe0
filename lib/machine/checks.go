package machine

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The checks of a definition that look past one field: what a run would
// refuse later, once its workflow exists, is refused here, before. Pure:
// no I/O.

// maxName bounds the names a definition gives: states, scopes, agents and
// records keys become parts of checkpoint paths (at most 512 bytes) and
// file names (briefs/AGENT.md).
const maxName = 64

// testCounts are the numbers of format test-results a fail_when can
// count.
var testCounts = []string{"tests_failed", "total_tests", "tests_passed"}

// checkEnds: a state whose check can fail is not where a scope ends: a
// workflow leaves no terminal state, not even to recover.
func (m *Machine) checkEnds(state string, w Work) error {
	if w.FailWhen == "" {
		return nil
	}
	for _, name := range m.ScopeNames() {
		if m.Scopes[name].Terminal == state {
			return fmt.Errorf("fail_when: state %s ends scope %s, and a workflow leaves no state it ended in, not even to recover; add a state after %s to end the scope", state, name, state)
		}
	}
	return nil
}

// knownWorkers is how many workers the state has at most when the
// definition alone says it: one on the request or the failures, one per
// item of a fixed list.
func (w Work) knownWorkers() (int, bool) {
	switch w.Source() {
	case SourceRequest, SourceFailures:
		return 1, true
	case SourceItems:
		return len(w.Each.Items), len(w.Each.Items) > 0
	}
	return 0, false
}

// checkShare: min_delivered is a count or a percentage, and a count no
// larger than the number of workers where that is known.
func (w Work) checkShare() error {
	if w.MinDelivered == nil {
		return nil
	}
	if err := w.MinDelivered.check(); err != nil {
		return err
	}
	if n, known := w.knownWorkers(); known {
		return w.CheckShareOf(n, "")
	}
	return nil
}

// CheckShareOf checks min_delivered against the workers the state has,
// n of them (one per item of what, when the run says it): a count above
// them asks for more than can deliver.
func (w Work) CheckShareOf(n int, what string) error {
	if w.MinDelivered == nil || w.MinDelivered.Percent || w.MinDelivered.N <= n {
		return nil
	}
	if what != "" {
		what = " (one per item of " + what + ")"
	}
	return fmt.Errorf("min_delivered: %d, more than the %d workers of the state%s; give at most %d, or a percentage such as \"50%%\"", w.MinDelivered.N, n, what, n)
}

// checkItemsApart: the workers of a fixed list, in each of the subsets
// a plan's waves keep (min_waves), get an id and an output each.
func (w Work) checkItemsApart(state string) error {
	if w.Source() != SourceItems {
		return nil
	}
	var waves []int
	for _, it := range w.Each.Items {
		waves = append(waves, it.MinWaves)
	}
	slices.Sort(waves)
	for _, n := range slices.Compact(waves) {
		var kept []Item
		for _, it := range w.Each.Items {
			if it.MinWaves <= n {
				kept = append(kept, it)
			}
		}
		if err := w.itemsApart(state, kept); err != nil {
			return err
		}
	}
	return nil
}

// itemsApart: the items' workers, numbered as the run numbers them, get
// ids and outputs of their own.
func (w Work) itemsApart(state string, items []Item) error {
	for _, f := range []struct{ field, tmpl string }{{"id", w.IDTemplate()}, {"output", w.Output}} {
		seen := map[string]int{}
		for i, it := range items {
			got := Render(f.tmpl, Vars{State: state, N: i + 1, Run: 1, Item: Slug(it.Name), Text: it.Name})
			if j, dup := seen[got]; dup {
				return fmt.Errorf("%s: items %q and %q both get %q; put {n} in it, or name the items apart", f.field, items[j].Name, it.Name, got)
			}
			seen[got] = i
		}
	}
	return nil
}

// validKey reports whether s can be a key of supervisor_state: one part
// of a checkpoint path, not a number (that would be an array's index).
func validKey(s string) bool {
	if s == "" || len(s) > maxName || s[0] >= '0' && s[0] <= '9' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkRecords: the key the workers are recorded under is one.
func (w Work) checkRecords() error {
	if w.Records != "" && !validKey(w.Records) {
		return fmt.Errorf("records: %q; give a key of letters, digits, '_' and '-', starting with a letter, at most %d bytes (it is part of a checkpoint path)", w.Records, maxName)
	}
	return nil
}

// checkIsolation: isolation is a worktree per worker, for a state that
// can have more than one (a worker alone shares the tree with nobody),
// and on_conflict says what a conflict leads to only where there are
// merges.
func (w Work) checkIsolation(state string) error {
	switch {
	case w.Isolation != "" && w.Isolation != IsolationWorktree:
		return fmt.Errorf("isolation: %q; the one isolation is %q (each worker in a git worktree of its own), or leave it out", w.Isolation, IsolationWorktree)
	case w.Isolation != "" && !w.fansOut():
		return fmt.Errorf("isolation: state %s runs one worker, which shares the project's tree with no other; leave isolation out", state)
	case w.OnConflict != "" && w.Isolation == "":
		return fmt.Errorf("on_conflict: state %s merges nothing (no isolation); leave on_conflict out, or add \"isolation\": %q", state, IsolationWorktree)
	case w.OnConflict != "" && w.OnConflict != ConflictRedo && w.OnConflict != ConflictWait:
		return fmt.Errorf("on_conflict: %q; use %q (the conflicting worker runs again on the merged tree) or %q (a person merges it by hand)", w.OnConflict, ConflictRedo, ConflictWait)
	}
	return nil
}

// checkRecordsApart: no two states record their workers under one key,
// where each state's records would count the other's.
func (m *Machine) checkRecordsApart() error {
	owner := map[string]string{}
	for _, state := range slices.Sorted(maps.Keys(m.Work)) {
		key := m.Work[state].RecordsKey(state)
		if other, ok := owner[key]; ok {
			return fmt.Errorf("work.%s.records: %q is where work.%s's workers are recorded too; give each state a records key of its own", state, key, other)
		}
		owner[key] = state
	}
	return nil
}

// checkNameLengths: each name on the path an output renders to fits in a
// file name, with the longest values its variables take, a version and
// the suffix of a rejected file.
func checkNameLengths(tmpl string) error {
	const maxFileName, perVar = 255, maxName
	for _, part := range strings.Split(tmpl, "/") {
		vars := len(templateVar().FindAllString(part, -1))
		if n := len(templateVar().ReplaceAllString(part, "")) + vars*perVar + len(".v99"+rejected); n > maxFileName {
			return fmt.Errorf("output: %q: the name %q can render to more than the %d bytes a file name may have; shorten it", tmpl, part, maxFileName)
		}
	}
	return nil
}

// What a definition's arguments are: each item of the command's
// arguments (split as an "arguments" fan-out splits them) names a file,
// a directory, or matches a pattern.
const (
	ArgumentsFiles = "files"
	ArgumentsDirs  = "dirs"
)

// ArgumentPattern is the regular expression every argument must match
// in whole; nil when the definition says files, dirs or nothing.
func (m *Machine) ArgumentPattern() (*regexp.Regexp, error) {
	switch m.Arguments {
	case "", ArgumentsFiles, ArgumentsDirs:
		return nil, nil
	}
	// A pattern with nothing but letters would take one word only: it
	// is a misspelt files or dirs.
	if !strings.ContainsAny(m.Arguments, `.*+?[(|\^$`) {
		return nil, fmt.Errorf("arguments: %q is neither files, dirs nor a pattern (a regular expression each argument matches in whole, such as \"[A-Z]+-[0-9]+\")", m.Arguments)
	}
	re, err := regexp.Compile(`^(?:` + m.Arguments + `)$`)
	if err != nil {
		return nil, fmt.Errorf("arguments: %q is not a regular expression: %v", m.Arguments, err)
	}
	return re, nil
}

func (m *Machine) checkArguments() error {
	_, err := m.ArgumentPattern()
	return err
}
