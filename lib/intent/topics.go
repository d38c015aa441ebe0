package intent

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// Research complexity and topics.
//
// Complexity rule: count the distinct subjects of the request, that is the
// noun phrases that are objects of its verbs, where each list item ("X, Y and
// Z"), each side of "across", "between", "or" and "vs", and each plan file
// (by name) counts once; add one when a breadth word appears (comprehensive,
// entire, whole, thorough, end to end); clamp to 1..4. When no verb has a
// usable object, the phrases of the verbless clauses count instead (a bare
// report like "memory leak in the hook handler").
//
// Topics are those phrases, title-cased and deduplicated, in order of
// appearance; when there are fewer phrases than the complexity, aspects of
// the first subject pad the list ("<Subject> current state", "<Subject> best
// practices", ...).

const (
	maxTopicWords = 6
	maxTopicRunes = 60
)

var aspects = []string{"current state", "best practices", "constraints", "risks"}

func (lx *lexicon) buildTopicWords() {
	lx.add(headPreps, "in", "of", "for", "on", "with", "about")
	lx.add(phraseSplitters, "across", "between", "or", "vs", "versus")
	lx.defaultSubjects = map[string]string{
		machine.ResearchOnly:       "Research subject",
		machine.ResearchAndPlan:    "Planning subject",
		machine.ResearchAndRevise:  "Existing plan",
		machine.FullImplementation: "Requested change",
		machine.DebugOnly:          "Reported failure",
		machine.ImplementOnly:      "Plan implementation",
		machine.TestAndDebug:       "Test failures",
	}
}

func researchTopics(clauses []clause, acts []act, scope string) []string {
	var phrases []string
	seen := map[string]bool{} // lower case
	add := func(p string) {
		if k := strings.ToLower(p); p != "" && !seen[k] {
			seen[k] = true
			phrases = append(phrases, p)
		}
	}
	addObject := func(toks []token) {
		var piece []token
		for _, t := range toks {
			switch {
			case t.planRef:
				add(planFileSubject(t.text))
			case t.is(phraseSplitters):
				add(cleanPhrase(piece))
				piece = nil
			default:
				piece = append(piece, t)
			}
		}
		add(cleanPhrase(piece))
	}
	requestObjects(clauses, acts, addObject)
	if len(phrases) == 0 {
		statements(clauses, acts, addObject)
	}
	if len(phrases) == 0 {
		add(lex().defaultSubjects[scope])
	}
	n := len(phrases)
	if broad(clauses) {
		n++
	}
	return padTopics(phrases, seen, min(max(n, 1), classify.MaxComplexity))
}

// requestObjects calls f with the object of each clause that asks for
// something, and with each clause that continues a list of them (", Y and
// Z").
func requestObjects(clauses []clause, acts []act, f func([]token)) {
	listing := false // the previous clause gave a subject
	for i, c := range clauses {
		a := acts[i]
		switch {
		case a.negated:
			listing = false
		case a.has:
			f(a.obj)
			listing = true
		case listing && (c.joiner == "," || c.joiner == "and"):
			f(c.toks)
		default:
			listing = false
		}
	}
}

// statements calls f with each verbless clause, the subjects of a request
// that asks for nothing by verb ("memory leak in the hook handler").
func statements(clauses []clause, acts []act, f func([]token)) {
	for i, c := range clauses {
		if !acts[i].negated && !acts[i].has {
			f(c.toks)
		}
	}
}

// padTopics is the first n phrases, padded with aspects of the first that
// are not already among them (seen, lower case).
func padTopics(phrases []string, seen map[string]bool, n int) []string {
	topics := phrases[:min(len(phrases), n)]
	for _, a := range aspects {
		if len(topics) == n {
			break
		}
		if p := phrases[0] + " " + a; !seen[strings.ToLower(p)] {
			topics = append(topics, p)
		}
	}
	return topics
}

func broad(clauses []clause) bool {
	for _, c := range clauses {
		for i, t := range c.toks {
			if t.is(breadthWords) {
				return true
			}
			if t.text == "end" && i+2 < len(c.toks) && c.toks[i+1].text == "to" && c.toks[i+2].text == "end" {
				return true
			}
		}
	}
	return false
}

// planFileSubject names a plan by its file: "plans/002_api_redesign.md" is
// "Api Redesign".
func planFileSubject(p string) string {
	base := strings.TrimSuffix(path.Base(p), path.Ext(p))
	var words []string
	for _, w := range strings.FieldsFunc(base, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }) {
		if w != "plan" && strings.Trim(w, "0123456789") != "" {
			words = append(words, w)
		}
	}
	toks := make([]token, len(words))
	for i, w := range words {
		toks[i] = token{text: w, orig: w, kind: kindWord, sets: lex().sets[w]}
	}
	return cleanPhrase(toks)
}

// cleanPhrase turns an object into a short topic: leading function words
// go, a generic head with a preposition goes ("tests for the X" is about X),
// the phrase ends at the first verb-like or subordinating word, articles go,
// and what is left is title-cased. A phrase with only generic words or
// numbers names no topic ("").
func cleanPhrase(toks []token) string {
	toks = skipLead(toks)
	j := 0
	for j < len(toks) && toks[j].is(generic|determiners) {
		j++
	}
	if j > 0 && j < len(toks) && toks[j].is(headPreps) {
		toks = skipLead(toks[j+1:])
	}
	var words []token
	for _, t := range toks {
		if t.kind == kindPunct || t.is(cutWords) {
			break
		}
		if !t.is(determiners) {
			words = append(words, t)
		}
	}
	words = trimTopic(words)
	if !slices.ContainsFunc(words, meaningful) {
		return ""
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = titleWord(w, i == 0)
	}
	s := strings.Join(parts, " ")
	if utf8.RuneCountInString(s) > maxTopicRunes {
		s = strings.TrimSpace(string([]rune(s)[:maxTopicRunes]))
	}
	return s
}

// skipLead drops the punctuation and function words a phrase may open
// with ("the", "just", "into", "not", ...).
func skipLead(toks []token) []token {
	for len(toks) > 0 && (toks[0].kind == kindPunct || toks[0].is(determiners|fillers|leadingPreps|cutWords|negators)) {
		toks = toks[1:]
	}
	return toks
}

// trimTopic cuts a topic's words to maxTopicWords, not ending on a small
// word or preposition.
func trimTopic(words []token) []token {
	words = words[:min(len(words), maxTopicWords)]
	for len(words) > 0 && words[len(words)-1].is(smallWords|leadingPreps) {
		words = words[:len(words)-1]
	}
	return words
}

// meaningful reports a word that can name a topic: not a generic noun
// ("tests", "code"), a number or a version.
func meaningful(w token) bool {
	return !w.is(generic) && strings.Trim(w.text, "0123456789.%") != ""
}

func titleWord(t token, first bool) string {
	switch {
	case t.kind != kindWord:
		return t.orig
	case strings.IndexFunc(t.orig, unicode.IsUpper) >= 0:
		return t.orig
	case t.is(acronyms):
		return strings.ToUpper(t.orig)
	case t.is(smallWords) && !first:
		return t.text
	}
	r, size := utf8.DecodeRuneInString(t.orig)
	return string(unicode.ToUpper(r)) + t.orig[size:]
}
