// Package intent is the offline classifier: it reads what an English
// workflow description asks for and answers as the workflow-classifier agent
// would (a classify.Classification), without a model. It is pure and
// deterministic, and used only when the user asks for it
// (FLOWSTATE_CLASSIFICATION=offline for phase-start, `flowstate classify`:
// docs/cli.md; the compat layer's one-argument sm_init:
// docs/migrating-from-bash.md) and where no model can run (a checkpoint
// migrated without a scope). Validating the agent's own answer is
// lib/classify's job.
package intent

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// The offline classifier reads a description the way the classifier agent is
// told to (agents/workflow-classifier.md): by intent, not keywords. It
//
//  1. tokenizes, turning quoted or backticked spans, workflow names
//     ("research-and-revise") and /commands into opaque names, and file
//     paths into paths, so none of them can act as a verb;
//  2. splits the text into clauses at punctuation, "and"/"then" chains,
//     subordinators ("after", "before", "so") and purpose infinitives
//     ("... to plan a move");
//  3. reads each clause's leading verb (after fillers like "please just"),
//     its negation ("don't implement", "no plan needed", "skip research")
//     and its object (a plan? tests? a failure? a workflow by name?);
//  4. applies the first matching rule of the ordered table in rules.
//
// Verbs inside an object are part of the object: "plan how to debug X" asks
// for a plan, "figure out what it would take to support X" asks for research
// (a "what/how/whether ..." object keeps its infinitives), "research the
// research-and-revise workflow" asks for research about a workflow.
//
// The request need not be a verb: "I need a summary of X" and "give me a
// plan" ask for the noun's verb (nominalVerb); "make them pass" and "get the
// suite green" ask for a fix (resultAt). What a verb does depends on its
// object: a change verb ("refresh", "incorporate", "split") on a plan revises
// it and on anything else builds; a build verb on a plan, or on "phase 1"
// or "it" when a plan is mentioned elsewhere, carries the plan out.

type intent uint8

const (
	intentResearch intent = iota
	intentPlan
	intentRevise      // revise an existing plan
	intentImplement   // build something new
	intentExecutePlan // build what an existing plan says
	intentFix
	intentTest
	numIntents
)

type tokenKind uint8

const (
	kindWord  tokenKind = iota
	kindPunct           // a clause boundary
	kindName            // quoted span, workflow name or /command: never a verb
	kindPath            // file or directory path
)

type token struct {
	text    string  // lower case; for quoted spans, the trimmed content
	orig    string  // as typed, for topics
	scope   string  // the workflow this name spells, if any
	sets    wordSet // the word sets text is in (token.is)
	kind    tokenKind
	command bool // a /command
	planRef bool // a path or quoted name of a plan file
}

// tokenize splits s into tokens. Control characters count as spaces so no
// topic can carry one (NUL cannot be stored in workflow state).
func tokenize(s string) []token {
	rs := []rune(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
	var toks []token
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			if t, ok := wordToken(string(cur)); ok {
				toks = append(toks, t)
			}
			cur = cur[:0]
		}
	}
	atEnd := func(i int) bool { return i+1 >= len(rs) || unicode.IsSpace(rs[i+1]) }
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case len(cur) == 0 && strings.ContainsRune("`\"'“‘", r):
			if j := closingQuote(rs, i); j > 0 {
				if t, ok := quotedToken(string(rs[i+1 : j])); ok {
					toks = append(toks, t)
				}
				i = j
			}
		case unicode.IsSpace(r):
			flush()
		case strings.ContainsRune("()[]{}—–", r),
			strings.ContainsRune(",;:!?.", r) && atEnd(i),
			r == '-' && len(cur) == 0 && atEnd(i):
			flush()
			toks = append(toks, token{text: string(r), orig: string(r), kind: kindPunct})
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return toks
}

// closingQuote finds the quote closing the one at i, or -1. A single quote
// only closes before a non-letter, so "don't" inside 'x' stays a word.
func closingQuote(rs []rune, i int) int {
	want := map[rune]rune{'`': '`', '"': '"', '\'': '\'', '“': '”', '‘': '’'}[rs[i]]
	for j := i + 1; j < len(rs); j++ {
		if rs[j] != want {
			continue
		}
		if want == '\'' && j+1 < len(rs) && (unicode.IsLetter(rs[j+1]) || unicode.IsDigit(rs[j+1])) {
			continue
		}
		return j
	}
	return -1
}

func isScope(s string) bool { return slices.Contains(machine.DefaultScopes(), s) }

func isPath(s string) bool {
	if strings.Contains(strings.TrimPrefix(s, "/"), "/") {
		return true
	}
	ext := strings.TrimPrefix(path.Ext(s), ".")
	return ext != "" && lex().in(fileExts, ext)
}

func wordToken(w string) (token, bool) {
	w = strings.Trim(w, `'’"`)
	lower := strings.ToLower(w)
	t := token{text: lower, orig: w, kind: kindWord, sets: lex().sets[lower]}
	switch {
	case w == "":
		return t, false
	case isScope(lower):
		t.kind, t.scope = kindName, lower
	case strings.HasPrefix(lower, "/") && len(lower) > 1 && !strings.Contains(lower[1:], "/"):
		t.kind, t.command = kindName, true
	case isPath(lower):
		t.kind, t.planRef = kindPath, strings.Contains(lower, "plan")
	}
	return t, true
}

func quotedToken(content string) (token, bool) {
	content = strings.TrimSpace(content)
	if content == "" {
		return token{}, false
	}
	lower := strings.ToLower(content)
	t := token{text: lower, orig: content, kind: kindName}
	switch {
	case isScope(lower):
		t.scope = lower
	case isPath(lower):
		t.kind, t.planRef = kindPath, strings.Contains(lower, "plan")
	}
	return t, true
}

// is reports whether t is a word in any of sets.
func (t token) is(sets wordSet) bool { return t.kind == kindWord && t.sets&sets != 0 }

// lemma is the verb a word token is a form of, or "".
func (t token) lemma() string {
	if t.kind != kindWord {
		return ""
	}
	return lex().lemmas[t.text]
}

// clause is a run of tokens between boundaries; joiner is the boundary
// that opened it ("" for the first, "and", ",", "to", ...).
type clause struct {
	toks   []token
	joiner string
}

func splitClauses(toks []token) []clause {
	var out []clause
	cur := clause{}
	question := false // the clause has a "what/how/whether ..." object so far
	cut := func(joiner string) {
		if len(cur.toks) > 0 {
			out = append(out, cur)
		}
		cur, question = clause{joiner: joiner}, false
	}
	for i, t := range toks {
		switch {
		case t.kind == kindPunct:
			cut(t.text)
		case t.is(splitWords):
			cut(t.text)
		case t.kind == kindWord && t.text == "to" && purposeVerbAt(toks, i+1) && !question &&
			slices.ContainsFunc(cur.toks, isContent):
			// "analyze X to plan a move": a purpose infinitive is an intent of
			// its own, unlike "how to debug X" or "what it would take to
			// support X", which are objects, and "no need to research", where
			// the infinitive is the clause's own verb.
			cut("to")
		default:
			question = question || t.is(questionWords)
			cur.toks = append(cur.toks, t)
		}
	}
	cut("")
	return out
}

// isContent reports a token that is neither a filler nor a negator.
func isContent(t token) bool { return !t.is(fillers) && !t.is(negators) }

// purposeVerbAt reports whether toks[i] is an intent verb with an object
// after it: "transitions to plan" ends the clause, so plan is a noun there.
func purposeVerbAt(toks []token, i int) bool {
	if i+1 >= len(toks) || toks[i+1].kind == kindPunct {
		return false
	}
	c, ok := lex().verbClasses[toks[i].lemma()]
	return ok && c != classNone
}

// act is what one clause asks for.
type act struct {
	intent  intent
	has     bool // a verb or question was found
	negated bool
	verb    string
	obj     []token
	failure bool // the object (or the verbless clause) reports a failure
	meta    bool // the object is a workflow or /command by name
	pronoun bool // the object is "it"/"them" or "phase 2" resolved to the plan
}

// readClause finds the clause's leading verb after fillers and negation and
// decides the intent from the verb class and the object. planMentioned lets
// "update it" refer to a plan named elsewhere in the description.
func readClause(c clause, planMentioned bool) act {
	lx := lex()
	toks := c.toks
	i, negated := leadingVerb(toks)
	a := act{negated: negated}
	if i >= len(toks) {
		return a
	}
	t := toks[i]
	if t.is(questionWords) {
		a.has, a.intent, a.verb, a.obj = true, intentResearch, t.text, toks[i+1:]
		a.failure = t.text == "why" || reportsFailure(a.obj)
		return a
	}
	verb, obj := verbPhrase(toks, i)
	class, ok := lx.verbClasses[verb]
	if at := resultAt(obj); lx.in(resultVerbs, verb) && at > 0 {
		// "make them pass", "get the suite green": repair until it works.
		a.has, a.intent, a.verb, a.obj = true, intentFix, verb, obj[:at]
		return a
	}
	if !ok && a.negated && t.kind == kindWord {
		if in, ok := lx.negatedNouns[t.text]; ok {
			a.has, a.intent, a.verb = true, in, t.text
			return a
		}
	}
	if !ok || class == classNone {
		a.failure = reportsFailure(toks[i:])
		return a
	}
	plan, pronoun := planObject(obj, planMentioned)
	a.verb, a.obj, a.pronoun = verb, obj, pronoun
	a.intent, a.has = intentOf(class, obj, plan)
	if class == classResearch {
		a.failure = reportsFailure(obj) || startsWith(obj, "why") || hasAny(nounPhrase(obj), causeNouns)
		a.meta = namesWorkflow(obj)
	}
	return a
}

// leadingVerb skips the fillers and negation that open a clause ("please
// just", "don't", "no need to") and returns where its verb is, past a "go"
// that only leads it ("go build it"), and whether the clause is negated.
// The verb's index is len(toks) when there is none.
func leadingVerb(toks []token) (int, bool) {
	negated := false
	i := 0
scan:
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.is(negators):
			negated = true
		case t.kind == kindWord && t.text == "do" && i+1 < len(toks) && toks[i+1].text == "not":
			negated = true
			i++
		case t.is(fillers), negated && t.is(determiners):
		default:
			break scan
		}
	}
	if i+1 < len(toks) && toks[i].text == "go" {
		if c, ok := lex().verbClasses[toks[i+1].lemma()]; ok && c != classNone {
			i++
		}
	}
	return i, negated
}

// verbPhrase is the verb at toks[i] and its object: a light verb with a
// noun ("do a review of X") is the noun's verb (nominalVerb), and a verb
// with its particle ("look into X") is one phrasal verb.
func verbPhrase(toks []token, i int) (string, []token) {
	verb, obj := toks[i].lemma(), toks[i+1:]
	if v, rest, ok := nominalVerb(toks, i); ok {
		verb, obj = v, rest
	}
	if len(obj) > 0 && obj[0].kind == kindWord {
		if _, ok := lex().verbClasses[verb+" "+obj[0].text]; ok {
			verb, obj = verb+" "+obj[0].text, obj[1:]
		}
	}
	return verb, obj
}

// intentOf is what a verb of class asks for given its object, which names
// an existing plan when plan is set; false when the verb asks for nothing
// on this object ("run the linter").
func intentOf(class verbClass, obj []token, plan bool) (intent, bool) {
	tests := hasAny(obj, testNouns)
	switch class {
	case classPlan:
		return intentPlan, true
	case classMake:
		return madeIntent(obj, plan), true
	case classRevise:
		if plan {
			return intentRevise, true
		}
		return intentImplement, true
	case classBuild, classExecute:
		switch {
		case plan:
			return intentExecutePlan, true
		case class == classExecute && tests:
			return intentTest, true
		}
		return intentImplement, true
	case classFix:
		return intentFix, true
	case classTest:
		return intentTest, true
	case classRun, classImprove:
		switch {
		case tests:
			return intentTest, true
		case class == classImprove:
			return intentImplement, true
		}
		return intentResearch, false
	}
	return intentResearch, true // classResearch
}

// madeIntent is what creating obj asks for: a plan, tests, carrying out a
// plan ("write the code for the plan"), changing one ("add a phase to the
// plan"), or else building something new.
func madeIntent(obj []token, plan bool) intent {
	head := nounPhrase(obj)
	switch {
	case hasAny(head, planNouns):
		return intentPlan
	case hasAny(head, testNouns):
		return intentTest
	case plan && planIsSource(obj):
		return intentExecutePlan
	case plan:
		return intentRevise
	}
	return intentImplement
}

// nominalVerb reads "(do|perform) a [comprehensive] review of X" as
// "review X", the light verb at toks[i] or just before it (as a filler),
// "I need a summary of X" as "summarize X", and a clause that opens with an
// indefinite noun phrase ("a writeup of X") as a request for it.
func nominalVerb(toks []token, i int) (string, []token, bool) {
	switch {
	case toks[i].is(lightVerbs):
		i++
	case i > 0 && (toks[i-1].is(lightVerbs) || toks[i-1].is(wantWords)), toks[i].is(indefinites):
	default:
		return "", nil, false
	}
	rest := skip(skip(toks[i:], recipients), determiners)
	for j := 0; j < len(rest) && j < 3; j++ {
		if v, ok := lex().nounVerbs[rest[j].text]; ok && rest[j].kind == kindWord {
			if j+1 < len(rest) && rest[j+1].is(copulas) {
				return "", nil, false // "a plan was approved" states, not asks
			}
			return v, skip(rest[j+1:], nominalPreps), true
		}
	}
	return "", nil, false
}

// planObject reports whether obj refers to an existing plan: the word plan,
// a plan file, the output of a planning workflow ("the research-and-plan
// output"), or, when a plan is mentioned elsewhere, a bare pronoun or a
// phase ("start building phase 1").
func planObject(obj []token, planMentioned bool) (plan, viaContext bool) {
	if mentionsPlan(obj) {
		return true, false
	}
	if !planMentioned {
		return false, false
	}
	rest := skip(obj, determiners)
	if len(rest) > 0 && rest[0].is(pronouns) && (len(rest) == 1 || rest[1].kind == kindWord && rest[1].is(cutWords)) {
		return true, true
	}
	part := hasAny(nounPhrase(obj), planParts)
	return part, part
}

// planIsSource reports whether the plan in obj comes after "for", "from" or
// "per": what is made follows the plan instead of going into it.
func planIsSource(obj []token) bool {
	at := slices.IndexFunc(obj, func(t token) bool { return mentionsPlan([]token{t}) })
	for i := at - 1; i >= 0; i-- {
		if obj[i].is(leadingPreps) || obj[i].is(sourcePreps) {
			return obj[i].is(sourcePreps)
		}
	}
	return false
}

// resultAt finds the result word in an object like "them pass" or "the
// suite green again" (something brought to a working state), or returns -1.
func resultAt(obj []token) int {
	return slices.IndexFunc(obj, func(t token) bool { return t.is(resultWords) })
}

func mentionsPlan(toks []token) bool {
	for i, t := range toks {
		switch {
		case t.planRef, t.kind == kindWord && (t.text == "plan" || t.text == "plans"):
			return true
		case t.scope == machine.ResearchAndPlan || t.scope == machine.ResearchAndRevise:
			if i+1 == len(toks) || !toks[i+1].is(featureNouns) {
				return true
			}
		}
	}
	return false
}

// namesWorkflow reports an object like "the implement-only scope" or "the
// /implement command": one of flowstate's own workflows, by name.
func namesWorkflow(obj []token) bool {
	for i, t := range obj {
		if t.command || t.scope != "" && i+1 < len(obj) && obj[i+1].is(metaNouns) {
			return true
		}
	}
	return false
}

func reportsFailure(toks []token) bool {
	for i, t := range toks {
		if t.kind != kindWord {
			continue
		}
		if t.text == "error" || t.text == "errors" {
			if i+1 < len(toks) && toks[i+1].is(errorModifiers) {
				continue
			}
			return true
		}
		if t.is(failureWords) {
			return true
		}
		// "doesn't work", "not working", "isn't working"
		if (t.text == "work" || t.text == "working" || t.text == "works") && i > 0 &&
			toks[i-1].is(notWorking) {
			return true
		}
	}
	return false
}

func hasAny(toks []token, sets wordSet) bool {
	return slices.ContainsFunc(toks, func(t token) bool { return t.is(sets) })
}

func startsWith(toks []token, word string) bool {
	return len(toks) > 0 && toks[0].kind == kindWord && toks[0].text == word
}

func skip(toks []token, sets wordSet) []token {
	for len(toks) > 0 && toks[0].is(sets) {
		toks = toks[1:]
	}
	return toks
}

// nounPhrase is the object up to its first preposition or subordinator:
// the thing being made in "create an implementation plan for X".
func nounPhrase(obj []token) []token {
	obj = skip(obj, leadingPreps) // "come up with a plan"
	for i, t := range obj {
		if t.is(cutWords) || t.is(nominalPreps) {
			return obj[:i]
		}
	}
	return obj
}

// signals is what the whole description asks for, after negation.
type signals struct {
	acts             []act
	pos, neg         [numIntents]bool
	verb             [numIntents]string // first verb seen per intent, for the reasoning
	pronounPlan      bool
	meta             bool
	failureResearch  bool
	failureStatement bool
	testsMentioned   bool
}

func read(clauses []clause) signals {
	var s signals
	planMentioned := false
	for _, c := range clauses {
		if a := readClause(c, false); !a.negated && mentionsPlan(c.toks) {
			planMentioned = true
		}
	}
	for _, c := range clauses {
		a := readClause(c, planMentioned)
		s.acts = append(s.acts, a)
		if a.negated {
			if a.has {
				s.neg[a.intent] = true
			}
			continue
		}
		if hasAny(c.toks, testNouns) {
			s.testsMentioned = true
		}
		if !a.has {
			s.failureStatement = s.failureStatement || a.failure
			continue
		}
		if !s.pos[a.intent] {
			s.pos[a.intent], s.verb[a.intent] = true, a.verb
		}
		s.pronounPlan = s.pronounPlan || a.pronoun
		if a.intent == intentResearch {
			s.meta = s.meta || a.meta
			s.failureResearch = s.failureResearch || a.failure
		}
	}
	for in := range s.pos {
		s.pos[in] = s.pos[in] && !s.neg[in]
	}
	return s
}

// rule is one line of the decision table; the first that applies wins.
type rule struct {
	name    string
	scope   string
	conf    float64
	applies func(s *signals) bool
	why     func(s *signals) string
}

// rules is ordered from the most specific request to the least: revising or
// carrying out an existing plan names its object, building something new
// subsumes research, planning and tests, and so on down to plain research.
var rules = []rule{
	{"revise-plan", machine.ResearchAndRevise, 0.9,
		func(s *signals) bool { return s.pos[intentRevise] },
		func(s *signals) string {
			return fmt.Sprintf("the verb %q acts on an existing plan%s", s.verb[intentRevise], pronounNote(s))
		}},
	{"implement-existing-plan", machine.ImplementOnly, 0.9,
		func(s *signals) bool {
			return s.pos[intentExecutePlan] && !s.pos[intentResearch] && !s.pos[intentImplement]
		},
		func(s *signals) string {
			return fmt.Sprintf("the verb %q carries out an existing plan with no research asked for%s",
				s.verb[intentExecutePlan], pronounNote(s))
		}},
	{"build-feature", machine.FullImplementation, 0.9,
		func(s *signals) bool { return s.pos[intentImplement] || s.pos[intentExecutePlan] },
		func(s *signals) string {
			v := s.verb[intentImplement]
			if v == "" {
				v = s.verb[intentExecutePlan]
			}
			return fmt.Sprintf("the verb %q asks to build something, which includes research, plan, tests and docs", v)
		}},
	{"plan-requested", machine.ResearchAndPlan, 0.9,
		func(s *signals) bool { return s.pos[intentPlan] },
		func(s *signals) string {
			return fmt.Sprintf("%q asks for a plan, design or proposal and nothing is to be built yet", s.verb[intentPlan])
		}},
	{"test-then-fix", machine.TestAndDebug, 0.9,
		func(s *signals) bool { return s.pos[intentTest] },
		func(s *signals) string {
			return fmt.Sprintf("%q asks to write or run tests and fix what fails", s.verb[intentTest])
		}},
	{"fix-failing-tests", machine.TestAndDebug, 0.8,
		func(s *signals) bool { return s.pos[intentFix] && s.testsMentioned },
		func(s *signals) string { return fmt.Sprintf("%q is aimed at failing tests", s.verb[intentFix]) }},
	{"fix-failure", machine.DebugOnly, 0.9,
		func(s *signals) bool { return s.pos[intentFix] },
		func(s *signals) string {
			return fmt.Sprintf("the verb %q asks to repair a failure, with nothing new to build", s.verb[intentFix])
		}},
	{"investigate-failure", machine.DebugOnly, 0.8,
		func(s *signals) bool { return s.failureResearch && !s.neg[intentFix] },
		func(s *signals) string {
			return fmt.Sprintf("%q is aimed at a failure (why it happens), which is debugging", s.verb[intentResearch])
		}},
	{"report-failure", machine.DebugOnly, 0.75,
		func(s *signals) bool { return s.failureStatement && !s.neg[intentFix] },
		func(*signals) string { return "the description reports a failure without asking for anything else" }},
	{"research-workflow-by-name", machine.ResearchAndPlan, 0.75,
		func(s *signals) bool { return s.pos[intentResearch] && s.meta && !s.neg[intentPlan] },
		func(s *signals) string {
			return fmt.Sprintf("%q takes a workflow or command by name as its object, so the name is the topic, not the intent, and research on a workflow feeds a plan",
				s.verb[intentResearch])
		}},
	{"research", machine.ResearchOnly, 0.9,
		func(s *signals) bool { return s.pos[intentResearch] },
		func(s *signals) string {
			return fmt.Sprintf("%q asks to learn about something, with no plan or change asked for", s.verb[intentResearch])
		}},
	{"no-rule", machine.FullImplementation, 0.5,
		func(*signals) bool { return true },
		func(*signals) string {
			return "no leading verb or failure report was recognised, so this guesses a feature request"
		}},
}

func pronounNote(s *signals) string {
	if s.pronounPlan {
		return " (its object refers to the plan mentioned elsewhere)"
	}
	return ""
}

func (lx *lexicon) buildRules() {
	lx.implied = map[string][]intent{
		machine.ResearchOnly:       {intentResearch},
		machine.ResearchAndPlan:    {intentResearch, intentPlan},
		machine.ResearchAndRevise:  {intentResearch, intentRevise},
		machine.FullImplementation: {intentResearch, intentPlan, intentImplement, intentExecutePlan, intentTest, intentFix},
		machine.DebugOnly:          {intentResearch, intentFix},
		machine.ImplementOnly:      {intentExecutePlan},
		machine.TestAndDebug:       {intentTest, intentFix},
	}
}

// Scope is the scope Classify reads in a description: the guess a
// migration makes for a checkpoint that names none (checkpoint.Migrate).
func Scope(description string) string { return Classify(description).WorkflowType }

// Classify classifies a description without a model: deterministic, pure,
// and meant for when the user asks for it, never as a silent fallback for
// the agent. Its output passes classify.Parse(_, 0). Confidence is the
// firing rule's, less 0.05 for each other intent the description asks for
// (never below classify.MinConfidence); it is 0.5 when no rule matched.
// TestClassifyAccuracy measures it on labelled sets in testdata.
func Classify(description string) classify.Classification {
	clauses := splitClauses(tokenize(description))
	s := read(clauses)
	r := rules[len(rules)-1]
	for _, c := range rules {
		if c.applies(&s) {
			r = c
			break
		}
	}
	conf := r.conf
	if r.name != "no-rule" {
		for in, on := range s.pos {
			if on && !slices.Contains(lex().implied[r.scope], intent(in)) {
				conf -= 0.05
			}
		}
		conf = max(conf, classify.MinConfidence)
	}
	topics := researchTopics(clauses, s.acts, r.scope)
	return classify.Classification{
		WorkflowType:       r.scope,
		Confidence:         math.Round(conf*100) / 100,
		ResearchComplexity: len(topics),
		ResearchTopics:     topics,
		Reasoning:          fmt.Sprintf("Offline rule %s: %s.", r.name, r.why(&s)),
	}
}
