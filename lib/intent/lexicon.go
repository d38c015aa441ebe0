package intent

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// The word lists the offline rules read. They are small on purpose: a rule
// looks at the verb that leads a clause and at the shape of its object, so
// only words that can play those parts are listed.

// verbClass is what a clause-leading verb asks for, before its object is seen.
type verbClass uint8

const (
	classNone     verbClass = iota // a particle verb ("look", "get") that only counts in a phrasal verb
	classResearch                  // learn something
	classPlan                      // produce a plan or design
	classMake                      // create X: a plan, tests or a feature, by X
	classRevise                    // change X: an existing plan, else code
	classBuild                     // build X: a feature, or carry out a plan
	classExecute                   // carry out X: a plan, tests, else build
	classFix                       // repair a failure
	classTest                      // test X
	classRun                       // run X: only tests mean anything here
	classImprove                   // grow X: test coverage, else build
)

// wordSet is a set of words the rules read, as one bit. A token's sets are
// looked up once, when it is made (token.sets), so a rule asking whether a
// token is a filler tests a bit instead of looking the word up again. The
// words of each set, and why they are there, are in buildWordSets and
// buildTopicWords.
type wordSet uint64

const (
	fillers wordSet = 1 << iota
	negators
	nominalPreps
	notWorking
	lightVerbs
	wantWords
	recipients
	copulas
	indefinites
	resultVerbs
	resultWords
	causeNouns
	planParts
	sourcePreps
	questionWords
	determiners
	pronouns
	splitWords
	planNouns
	testNouns
	featureNouns
	metaNouns
	failureWords
	errorModifiers
	breadthWords
	cutWords
	leadingPreps
	smallWords
	generic
	acronyms
	fileExts
	headPreps
	phraseSplitters
)

// lexicon holds every table the rules read. It is built on the first
// classification (lex), not at package init: flowstate is one process per
// command and almost no command classifies, so building ~1,300 map entries
// at start-up was a measurable share of every call's start-up cost
// (tests/robust TestStartupWork holds package initialisers to 8 KB).
// Nothing writes to a lexicon after newLexicon returns it.
type lexicon struct {
	sets         map[string]wordSet // the word sets each word is in
	verbClasses  map[string]verbClass
	lemmas       map[string]string
	nounVerbs    map[string]string
	negatedNouns map[string]intent
	// implied lists the intents each scope covers; any other intent the
	// description asks for lowers the confidence.
	implied map[string][]intent
	// defaultSubjects name the subject when the description has no usable
	// noun phrase ("update the plan", "execute plan 003").
	defaultSubjects map[string]string
}

// lex returns the one lexicon, built on first use.
var lex = sync.OnceValue(newLexicon)

// in reports whether the word w is in set.
func (lx *lexicon) in(set wordSet, w string) bool { return lx.sets[w]&set != 0 }

func newLexicon() *lexicon {
	lx := &lexicon{sets: map[string]wordSet{}}
	lx.buildWords()
	lx.buildRules()
	lx.buildTopicWords()
	return lx
}

func (lx *lexicon) buildWords() {
	lx.verbClasses = map[string]verbClass{
		"research": classResearch, "investigate": classResearch, "analyze": classResearch,
		"analyse": classResearch, "explore": classResearch, "study": classResearch,
		"survey": classResearch, "examine": classResearch, "understand": classResearch,
		"audit": classResearch, "compare": classResearch, "evaluate": classResearch,
		"assess": classResearch, "review": classResearch, "inspect": classResearch,
		"explain": classResearch, "learn": classResearch, "summarize": classResearch,
		"summarise": classResearch, "benchmark": classResearch, "profile": classResearch,
		"look into": classResearch, "look at": classResearch, "find out": classResearch,
		"dig into": classResearch, "figure out": classResearch, "read up": classResearch,
		"go through": classResearch, "read through": classResearch, "look through": classResearch,
		"walk through": classResearch, "tell me": classResearch, "tell us": classResearch,
		"show me": classResearch, "show us": classResearch, "find": classResearch,

		"plan": classPlan, "design": classPlan, "propose": classPlan, "outline": classPlan,
		"architect": classPlan, "strategize": classPlan,

		"create": classMake, "write": classMake, "draft": classMake, "make": classMake,
		"produce": classMake, "prepare": classMake, "generate": classMake, "add": classMake,
		"sketch": classMake, "put together": classMake, "come up": classMake,

		"revise": classRevise, "update": classRevise, "amend": classRevise, "refine": classRevise,
		"rework": classRevise, "adjust": classRevise, "modify": classRevise, "change": classRevise,
		"edit": classRevise, "rewrite": classRevise, "correct": classRevise, "refresh": classRevise,
		"incorporate": classRevise, "revisit": classRevise, "restructure": classRevise,
		"reorder": classRevise, "reorganize": classRevise, "reorganise": classRevise,
		"extend": classRevise, "expand": classRevise, "split": classRevise, "drop": classRevise,
		"remove": classRevise,

		"implement": classBuild, "build": classBuild, "develop": classBuild, "code": classBuild,
		"refactor": classBuild, "migrate": classBuild, "port": classBuild, "integrate": classBuild,
		"support": classBuild, "ship": classBuild, "finish": classBuild, "introduce": classBuild,
		"enable": classBuild, "convert": classBuild, "replace": classBuild, "wire": classBuild,
		"upgrade": classBuild, "complete": classBuild, "document": classBuild, "set up": classBuild,
		"hook up": classBuild,

		"execute": classExecute, "apply": classExecute, "carry out": classExecute, "follow": classExecute,

		"fix": classFix, "debug": classFix, "troubleshoot": classFix, "diagnose": classFix,
		"resolve": classFix, "repair": classFix, "solve": classFix, "stabilize": classFix,
		"stabilise": classFix, "track down": classFix,

		"test": classTest,

		"run": classRun, "rerun": classRun,

		"increase": classImprove, "improve": classImprove, "raise": classImprove,

		"look": classNone, "figure": classNone, "dig": classNone, "read": classNone,
		"go": classNone, "put": classNone, "come": classNone, "set": classNone,
		"hook": classNone, "carry": classNone, "track": classNone, "walk": classNone,
		"tell": classNone, "show": classNone, "get": classNone, "keep": classNone,
	}

	// lemmas maps inflected forms ("researching", "fixes", "debugged") to the
	// verbs above; over-generating forms is harmless since only these verbs are
	// looked up.
	lx.lemmas = lemmasOf(lx.verbClasses)

	// nounVerbs read "do a review of X" as "review X" and "I need a summary of
	// X" as "summarize X": the request's verb is a noun after a light verb
	// (lightVerbs), a verb of wanting (wantWords) or, in a clause with no verb,
	// an indefinite article ("Deliverable: a report on X").
	lx.nounVerbs = map[string]string{
		"review": "review", "analysis": "analyze", "investigation": "investigate", "audit": "audit",
		"study": "study", "survey": "survey", "comparison": "compare", "evaluation": "evaluate",
		"assessment": "assess", "exploration": "explore", "dive": "dig into", "research": "research",
		"summary": "summarize", "overview": "summarize", "writeup": "summarize", "write-up": "summarize",
		"report": "research", "explanation": "explain", "breakdown": "analyze",
		"design": "design", "plan": "plan", "proposal": "propose", "roadmap": "plan", "spec": "design",
		"implementation": "implement", "refactor": "refactor", "migration": "migrate", "fix": "fix",
		"test": "test", "tests": "test", "cleanup": "implement",
	}

	lx.buildWordSets()
}

// lemmasOf derives the inflected forms of the verbs. Sorted iteration
// keeps the table the same on every run.
func lemmasOf(verbClasses map[string]verbClass) map[string]string {
	m := map[string]string{}
	for _, v := range slices.Sorted(maps.Keys(verbClasses)) {
		if strings.Contains(v, " ") {
			continue
		}
		for _, f := range []string{v, v + "s", v + "es", v + "ed", v + "d", v + "ing",
			strings.TrimSuffix(v, "e") + "ing", v + v[len(v)-1:] + "ing", v + v[len(v)-1:] + "ed",
			strings.TrimSuffix(v, "y") + "ies", strings.TrimSuffix(v, "y") + "ied"} {
			if _, taken := m[f]; !taken || f == v {
				m[f] = v
			}
		}
	}
	for f, v := range map[string]string{"wrote": "write", "written": "write", "ran": "run",
		"built": "build", "made": "make", "found": "find", "went": "go", "came": "come",
		"got": "get", "kept": "keep", "told": "tell", "shown": "show"} {
		m[f] = v
	}
	return m
}

// add puts words in set.
func (lx *lexicon) add(set wordSet, words ...string) {
	for _, w := range words {
		lx.sets[w] |= set
	}
}

func (lx *lexicon) buildWordSets() {
	// fillers come before the verb of a request and carry no intent.
	lx.add(fillers, "please", "pls", "kindly", "just", "first", "also", "then", "now", "so",
		"and", "but", "i", "we", "you", "me", "us", "let's", "lets", "let", "can", "could",
		"would", "will", "should", "shall", "must", "need", "needs", "want", "wants", "like",
		"i'd", "we'd", "i'll", "we'll", "to", "help", "ahead", "continue", "start", "begin",
		"try", "quickly", "actually", "simply", "only", "finally", "next", "ok", "okay", "hey",
		"do", "carefully", "properly", "fully", "again")

	// negators turn the intent that follows into something the user does
	// not want ("don't implement yet", "no plan needed", "skip research").
	lx.add(negators, "don't", "dont", "do not", "not", "no", "never", "without", "skip", "avoid",
		"doesn't", "shouldn't", "won't", "nothing")

	// negatedNouns are the nouns a negator can name instead of a verb.
	lx.negatedNouns = map[string]intent{
		"plan": intentPlan, "plans": intentPlan, "planning": intentPlan, "design": intentPlan,
		"research": intentResearch, "investigation": intentResearch,
		"tests": intentTest, "test": intentTest, "testing": intentTest,
		"implementation": intentImplement, "code": intentImplement, "coding": intentImplement,
		"changes": intentImplement, "fixes": intentFix, "fixing": intentFix,
	}

	lx.add(nominalPreps, "of", "into", "on", "for", "about")
	lx.add(notWorking, "not", "doesn't", "don't", "isn't", "aren't", "stopped", "never")

	lx.add(lightVerbs, "do", "perform", "conduct", "undertake", "give", "provide", "send")

	// wantWords are fillers that, before a noun like "summary", request it.
	lx.add(wantWords, "need", "needs", "want", "wants", "like")

	// recipients come between a light verb and its noun: "give me a plan".
	lx.add(recipients, "me", "us")

	// copulas after the noun make a statement of a nominal request.
	lx.add(copulas, "is", "are", "was", "were", "has", "have", "had", "exists")

	// indefinites open a noun phrase for something that does not exist yet.
	lx.add(indefinites, "a", "an")

	// A result verb whose object ends in a result word asks to reach a
	// working state: "make them pass", "get the suite green" ask for a fix.
	lx.add(resultVerbs, "make", "get", "keep")
	lx.add(resultWords, "pass", "passing", "green", "work", "working", "succeed", "succeeding")

	// causeNouns make a research object a failure: "find the cause".
	lx.add(causeNouns, "cause", "causes", "culprit", "culprits")

	// planParts refer to the plan mentioned elsewhere: "the plan is
	// approved, start building phase 1".
	lx.add(planParts, "phase", "phases")

	// sourcePreps make a plan the source of what is made ("write the code
	// for the plan"), not the place it goes ("add a phase to the plan").
	lx.add(sourcePreps, "for", "from", "per")

	lx.add(questionWords, "what", "how", "where", "which", "who", "whether", "why")

	lx.add(determiners, "the", "a", "an", "our", "your", "my", "its", "their", "this", "these",
		"those", "some", "any", "all", "each", "every", "that")

	lx.add(pronouns, "it", "them", "this", "that", "these", "those")

	// splitWords start a new clause: "and then" chains and subordinate
	// clauses each get their own leading verb.
	lx.add(splitWords, "and", "then", "but", "after", "before", "so", "while", "once", "afterwards")

	// planNouns make a "create X" request a planning request.
	lx.add(planNouns, "plan", "plans", "design", "proposal", "roadmap", "spec", "specification",
		"rfc", "strategy", "blueprint")

	lx.add(testNouns, "test", "tests", "testing", "coverage", "testcases", "specs", "suite",
		"suites", "e2e")

	// featureNouns after a workflow name mean the workflow itself is meant
	// ("the research-and-revise workflow"), not the plan it produced.
	lx.add(featureNouns, "workflow", "workflows", "scope", "scopes", "type", "command", "commands",
		"mode", "support", "state", "phase", "machine")

	// metaNouns after a workflow name make it the object of study.
	lx.add(metaNouns, "workflow", "workflows", "scope", "scopes", "type", "command", "commands")

	lx.add(failureWords, "bug", "bugs", "buggy", "crash", "crashes", "crashed", "crashing",
		"hang", "hangs", "hanging", "hung", "error", "errors", "fail", "fails", "failed",
		"failing", "failure", "failures", "broken", "breaks", "leak", "leaks", "leaking",
		"panic", "panics", "exception", "exceptions", "regression", "regressions",
		"segfault", "flaky", "deadlock", "deadlocks", "corrupt", "corrupted", "500", "wrong",
		"regressed")

	// errorModifiers: "error handling" names a topic, not a failure.
	lx.add(errorModifiers, "handling", "handler", "handlers", "message", "messages", "code",
		"codes", "reporting", "types", "type", "wrapping", "model", "patterns")

	lx.add(breadthWords, "comprehensive", "comprehensively", "entire", "whole", "thorough",
		"thoroughly", "holistic", "end-to-end", "exhaustive")

	// Topic cleaning: where a noun phrase ends, and which words alone are
	// not a subject.
	lx.add(cutWords, "is", "are", "was", "were", "be", "been", "does", "do", "did", "works",
		"work", "worked", "can", "could", "will", "would", "should", "has", "have", "had",
		"needs", "need", "when", "that", "which", "who", "so", "because", "since", "after",
		"before", "while", "if", "to", "at", "from", "with", "via", "using", "by", "into",
		"instead", "in", "on", "as", "than", "we", "they", "it", "i", "you", "now", "today",
		"yesterday", "accordingly", "already", "yet", "based", "describes", "happens",
		"reaches", "transitions", "get", "gets", "keep", "keeps", "print", "prints", "where",
		"end", "uncover", "find", "there", "take", "takes")
	lx.add(leadingPreps, "for", "of", "in", "on", "with", "to", "at", "from", "about", "into",
		"via", "how", "what", "why", "where", "which", "whether", "who", "when", "there")
	lx.add(smallWords, "of", "for", "and", "in", "on", "to", "the", "a", "an", "with", "vs", "or")
	lx.add(generic, "it", "them", "this", "that", "these", "those", "plan", "plans", "work",
		"whatever", "what", "what's", "fails", "fail", "anything", "everything", "something",
		"things", "thing", "ones", "one", "failing", "failures", "failure", "bugs", "bug",
		"problems", "problem", "issues", "issue", "tests", "test", "unit", "integration",
		"property", "code", "changes", "output", "design", "doc", "proposal",
		"roadmap", "strategy", "spec", "underlying", "needed", "new", "approved", "existing",
		"current", "phased", "why", "implementation", "breaks", "fixes", "suite", "options")
	lx.add(acronyms, "api", "apis", "cli", "ci", "ui", "jwt", "sso", "http", "https", "json", "yaml",
		"toml", "sql", "rest", "url", "id", "ssh", "tls", "io", "sdk", "llm", "oauth", "saml")
	lx.add(fileExts, "md", "go", "json", "jsonl", "sh", "txt", "yaml", "yml", "toml", "js", "ts", "py")
}
