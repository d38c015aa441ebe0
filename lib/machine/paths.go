package machine

import (
	"fmt"
	"path"
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

// outputPattern is every path tmpl renders to for state, as the file
// system finds it: cleaned ("./a//b" is "a/b", as filepath.Join makes it)
// and in lower case (a file system that ignores case, as macOS's does,
// finds "Briefs/x.md" at "briefs/x.md").
func outputPattern(state, tmpl string) pattern {
	var p pattern
	rest := strings.ToLower(path.Clean(tmpl))
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
	if !p.mayMeet(q) {
		return false
	}
	alphabet := representatives(p, q)
	width := len(q) + 1
	seen := make([]bool, (len(p)+1)*width)
	todo := []int{0}
	seen[0] = true
	visit := func(i, j int) {
		if k := i*width + j; !seen[k] {
			seen[k] = true
			todo = append(todo, k)
		}
	}
	for len(todo) > 0 {
		k := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		i, j := k/width, k%width
		if i == len(p) && j == len(q) {
			return true
		}
		for _, b := range alphabet {
			pi, pn := p.step(i, b)
			qj, qn := q.step(j, b)
			for di := range pn {
				for dj := range qn {
					visit(pi+di, qj+dj)
				}
			}
		}
		// A run of anything may also be empty.
		visit(p.skip(i), j)
		visit(i, q.skip(j))
	}
	return false
}

// step is where p can be after reading b at position i, the n
// positions from: past a byte (i+1, 1), or in or past a run of a class
// (i and i+1, 2), which once begun may go on; n 0: nowhere.
func (p pattern) step(i int, b byte) (from, n int) {
	if i >= len(p) {
		return 0, 0
	}
	s := p[i]
	switch {
	case s.class == literal && s.lit == b:
		return i + 1, 1
	case s.class != literal && s.class.has(b):
		return i, 2
	}
	return 0, 0
}

// mayMeet is a quick look before the walk: two patterns that differ in
// how they start, or in how they end, share no path. It compares them
// from each end up to the first run of a class on both sides, or of
// anything on either.
func (p pattern) mayMeet(q pattern) bool {
	return mayShare(len(p), len(q), func(k int) (symbol, symbol) { return p[k], q[k] }) &&
		mayShare(len(p), len(q), func(k int) (symbol, symbol) { return p[len(p)-1-k], q[len(q)-1-k] })
}

// mayShare compares the k-th symbols of two patterns, at(k), and is false
// once they cannot read the same byte.
func mayShare(lp, lq int, at func(k int) (symbol, symbol)) bool {
	for k := 0; k < lp && k < lq; k++ {
		a, b := at(k)
		switch {
		case a.class == anything || b.class == anything:
			return true
		case a.class == literal && b.class == literal:
			if a.lit != b.lit {
				return false
			}
		case a.class == literal:
			return b.class.has(a.lit)
		case b.class == literal:
			return a.class.has(b.lit)
		default:
			return true
		}
	}
	return true
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
	var named [256]bool
	var out []byte
	for _, p := range ps {
		for _, s := range p {
			if s.class == literal && !named[s.lit] {
				named[s.lit] = true
				out = append(out, s.lit)
			}
		}
	}
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

// ownFile is a file flowstate itself keeps in a workflow's spec
// directory, which no worker's output may be.
type ownFile struct {
	path pattern
	what string
}

// flowstateFiles lists them; built when a definition is checked, not
// before main in every process.
func flowstateFiles() []ownFile {
	return []ownFile{
		{lit("briefs/").then(pattern{{class: anything}}), "briefs/ holds the briefs flowstate writes for the workers"},
		{lit("classification.json"), "classification.json is where the classifier writes"},
	}
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
	files, dirs := make([][]pattern, len(states)), make([][]pattern, len(states))
	for i, state := range states {
		files[i] = paths(state, m.Work[state].Output)
		for _, p := range files[i] {
			dirs[i] = append(dirs[i], p.then(under))
		}
	}
	for i, state := range states {
		out := m.Work[state].Output
		for _, own := range flowstateFiles() {
			if anyMeet(files[i], []pattern{own.path, own.path.then(under)}) {
				return fmt.Errorf("work.%s.output: %q can name a file of flowstate's own: %s; write elsewhere, e.g. %q", state, out, own.what, "results/"+path1(out))
			}
		}
		for j, other := range states[:i] {
			if anyMeet(files[i], files[j]) || anyMeet(dirs[i], files[j]) || anyMeet(files[i], dirs[j]) {
				return fmt.Errorf("work.%s.output: %q and work.%s.output %q can name the same file (or one a directory of the other); give each state a directory of its own, e.g. %q",
					state, out, other, m.Work[other].Output, state+"/"+path1(out))
			}
		}
	}
	return nil
}

// path1 is tmpl's base name, for a suggestion.
func path1(tmpl string) string { return tmpl[strings.LastIndex(tmpl, "/")+1:] }

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
