package machine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Where the workers of a definition write, as sets of paths: an output
// template stands for every path it can render to. A worker's file is
// its own only when no other state's template, no file flowstate keeps in
// the spec directory (the briefs, the classification) and no earlier
// version of either can be the same path or a directory on its way.
// Pure: no I/O.

// symbol is one part of a path pattern: a byte, or a run of bytes of a
// class (one or more; any: zero or more).
type symbol struct {
	lit   byte
	class charClass
}

type charClass int

const (
	literal  charClass = iota
	digits             // {n}, {run}: a number
	slugs              // {item}: lower-case letters, digits and '_'
	anything           // any bytes, '/' too
)

func (c charClass) has(b byte) bool {
	switch c {
	case digits:
		return b >= '0' && b <= '9'
	case slugs:
		return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '_'
	case anything:
		return true
	}
	return false
}

// pattern is a set of paths, as a sequence of symbols.
type pattern []symbol

func lit(s string) pattern {
	p := make(pattern, len(s))
	for i := range len(s) {
		p[i] = symbol{lit: s[i]}
	}
	return p
}

// outputPattern is every path tmpl renders to for state.
func outputPattern(state, tmpl string) pattern {
	var p pattern
	rest := tmpl
	for rest != "" {
		loc := templateVar().FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		p = append(p, lit(rest[:loc[0]])...)
		switch rest[loc[2]:loc[3]] {
		case "state":
			p = append(p, lit(state)...)
		case "item":
			p = append(p, symbol{class: slugs})
		default:
			p = append(p, symbol{class: digits})
		}
		rest = rest[loc[1]:]
	}
	return append(p, lit(rest)...)
}

// versioned is p as a later version of the workflow writes it (after a
// rewind): ".vN" before the extension of the base name, as
// orchestrate's Facts.artifact puts it. Template variables render no
// '.' or '/', so the extension starts at the last literal '.' after the
// last '/'.
func (p pattern) versioned() pattern {
	at := len(p)
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].class == literal && p[i].lit == '/' {
			break
		}
		if p[i].class == literal && p[i].lit == '.' {
			at = i
			break
		}
	}
	out := slices.Concat(p[:at:at], lit(".v"), pattern{{class: digits}}, p[at:])
	return out
}

// then is p followed by q.
func (p pattern) then(q pattern) pattern { return slices.Concat(p[:len(p):len(p)], q) }

// meets reports whether some path is in both p and q: a walk of both
// patterns side by side, a byte at a time, over one byte of each kind
// the patterns tell apart.
func (p pattern) meets(q pattern) bool {
	alphabet := representatives(p, q)
	type pos struct{ i, j int }
	start := pos{}
	seen := map[pos]bool{start: true}
	todo := []pos{start}
	for len(todo) > 0 {
		at := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if at.i == len(p) && at.j == len(q) {
			return true
		}
		for _, b := range alphabet {
			for _, i := range p.step(at.i, b) {
				for _, j := range q.step(at.j, b) {
					if next := (pos{i, j}); !seen[next] {
						seen[next] = true
						todo = append(todo, next)
					}
				}
			}
		}
		// A run of anything may also be empty.
		for _, next := range []pos{{p.skip(at.i), at.j}, {at.i, q.skip(at.j)}} {
			if !seen[next] {
				seen[next] = true
				todo = append(todo, next)
			}
		}
	}
	return false
}

// step lists where p can be after reading b at position i: past a byte,
// or in or past a run of a class (which, once begun, may go on).
func (p pattern) step(i int, b byte) []int {
	if i >= len(p) {
		return nil
	}
	s := p[i]
	switch {
	case s.class == literal && s.lit == b:
		return []int{i + 1}
	case s.class != literal && s.class.has(b):
		return []int{i, i + 1}
	}
	return nil
}

// skip is where p can be at i without reading: past an empty run of
// anything.
func (p pattern) skip(i int) int {
	if i < len(p) && p[i].class == anything {
		return i + 1
	}
	return i
}

// representatives is one byte of each kind the patterns tell apart: each
// byte they name, and a digit, a slug byte and any other byte they do not.
func representatives(ps ...pattern) []byte {
	named := map[byte]bool{}
	for _, p := range ps {
		for _, s := range p {
			if s.class == literal {
				named[s.lit] = true
			}
		}
	}
	out := slices.Sorted(maps.Keys(named))
	for _, kind := range []string{"0123456789", "abcdefghijklmnopqrstuvwxyz_", "~!@$^&=+,;-"} {
		for i := range len(kind) {
			if !named[kind[i]] {
				out = append(out, kind[i])
				break
			}
		}
	}
	return out
}

// flowstateFiles are the files flowstate itself keeps in a workflow's
// spec directory, which no worker's output may be.
var flowstateFiles = []struct {
	path pattern
	what string
}{
	{lit("briefs/").then(pattern{{class: anything}}), "briefs/ holds the briefs flowstate writes for the workers"},
	{lit("classification.json"), "classification.json is where the classifier writes"},
}

// rejected is the suffix flowstate gives an artifact it set aside
// (orchestrate's setAside).
const rejected = ".rejected"

// paths lists the paths a state's worker may write, with the versions a
// rewind gives them and the names their rejected files get.
func paths(state, tmpl string) []pattern {
	p := outputPattern(state, tmpl)
	v := p.versioned()
	return []pattern{p, v, p.then(lit(rejected)), v.then(lit(rejected))}
}

// checkOutputsApart reports the first state whose output may be a file
// flowstate keeps, or the file, or a directory on the way to the file,
// of an earlier state in the machine's order.
func (m *Machine) checkOutputsApart() error {
	states := m.WorkStates()
	under := lit("/").then(pattern{{class: anything}})
	for i, state := range states {
		mine := paths(state, m.Work[state].Output)
		for _, own := range flowstateFiles {
			if anyMeet(mine, []pattern{own.path, own.path.then(under)}) {
				return fmt.Errorf("work.%s.output: %q can name a file of flowstate's own: %s; write elsewhere, e.g. %q", state, m.Work[state].Output, own.what, "results/"+path1(m.Work[state].Output))
			}
		}
		for _, other := range states[:i] {
			theirs := paths(other, m.Work[other].Output)
			if anyMeet(mine, theirs) || anyMeet(withUnder(mine, under), theirs) || anyMeet(mine, withUnder(theirs, under)) {
				return fmt.Errorf("work.%s.output: %q and work.%s.output %q can name the same file (or one a directory of the other); give each state a directory of its own, e.g. %q",
					state, m.Work[state].Output, other, m.Work[other].Output, state+"/"+path1(m.Work[state].Output))
			}
		}
	}
	return nil
}

// path1 is tmpl's base name, for a suggestion.
func path1(tmpl string) string { return tmpl[strings.LastIndex(tmpl, "/")+1:] }

func withUnder(ps []pattern, under pattern) []pattern {
	out := make([]pattern, len(ps))
	for i, p := range ps {
		out[i] = p.then(under)
	}
	return out
}

// anyMeet reports whether a pattern of ps meets one of qs.
func anyMeet(ps, qs []pattern) bool {
	for _, p := range ps {
		for _, q := range qs {
			if p.meets(q) {
				return true
			}
		}
	}
	return false
}
