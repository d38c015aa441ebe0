package standin

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/tests/internal/playback"
)

// personaOf turns an agent type ("flowstate:research-specialist") into the
// persona that decides what the agent writes ("research-specialist").
func personaOf(agentType string) string {
	return agentType[strings.LastIndex(agentType, ":")+1:]
}

// writeContext is what a persona needs to fill one file.
type writeContext struct {
	Persona  string
	Path     string
	Prompt   string
	Siblings []string // every file this agent writes, project-relative
	TestRun  int      // ordinal of a test-results file, else 0
	// Classification is the ordinal of a classification file, else 0.
	Classification int
	Knobs          Knobs
	// Brief is the file the agent read first, "" if none.
	Brief string
}

// ownFormat are the personas whose files say what a template cannot: a
// plan's phases in waves, failing tests, the files an executor changed,
// the classification.
var ownFormat = map[string]bool{"plan-architect": true, "test-specialist": true, "implementation-executor": true, "workflow-classifier": true}

func (w writeContext) content() string {
	if file, ok := w.fromBrief(); ok {
		return file
	}
	switch ext := filepath.Ext(w.Path); {
	case ext == ".json" && w.Persona == "test-specialist":
		return w.testResults()
	case ext == ".json" && w.Persona == "workflow-classifier":
		if w.Classification == 1 && w.Knobs.FirstClassification != "" {
			return w.Knobs.FirstClassification + "\n"
		}
		return w.Knobs.classification() + "\n"
	case ext == ".json":
		return fmt.Sprintf("{\"written_by\": %q, \"topic\": %q}\n", w.Persona, topicOf(w.Prompt))
	case ext == ".md" && w.Persona == "plan-architect":
		return w.plan()
	case ext == ".md" && w.Persona == "implementation-executor":
		return w.report("Implementation summary: ") + w.filesModified()
	case ext == ".md":
		return w.report("")
	}
	return sourceFile(w.Path, topicOf(w.Prompt))
}

// fromBrief is what a literal-minded agent writes from the brief it read:
// the template the brief gives for a file of the kind it writes, each
// <...> filled in about its topic, and, in markdown, its evidence at the
// length a real agent's has. Not for a persona of its own format.
func (w writeContext) fromBrief() (string, bool) {
	lang, _, ok := protocol.Template(w.Brief)
	if !ok || ownFormat[w.Persona] || map[string]string{".md": "markdown", ".json": "json"}[filepath.Ext(w.Path)] != lang {
		return "", false
	}
	topic := topicOf(w.Prompt)
	file, _ := playback.Filled(w.Brief, topic)
	if lang == "markdown" {
		file += "\n" + details(topic, reportSections)
	}
	return file, true
}

// report follows the report format of the command protocol, section 6.
func (w writeContext) report(titlePrefix string) string {
	topic := topicOf(w.Prompt)
	return fmt.Sprintf(`# %s%s

## Executive Summary

The %s examined %s and found a clear, low-risk way forward that keeps the existing structure and adds the missing pieces in small steps.

## Key Findings

- %s is handled in one place today.
- The change fits the existing layout.
- Tests cover the main path.

## Details

Written by the flowstate e2e stand-in model.

%s`, titlePrefix, topic, orDefault(w.Persona, "agent"), topic, topic, details(topic, reportSections))
}

// Sizes of what the personas write, about those of real agents' files
// (a research report of 8 KB, a plan's phase of 1 KB), so that what the
// orchestrating model receives is measured against realistic artifacts.
const (
	reportSections = 16 // of about 500 bytes each
	planSections   = 2  // per phase
)

// details is n sections of evidence about topic, deterministic text of
// the length real findings have.
func details(topic string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "### Evidence %d\n\nIn the part of the codebase that handles %s, the stand-in looked at how the "+
			"request flows from the entry point through validation, storage and the response, which modules own each "+
			"step, and where the tests exercise them. Finding %d: the structure is consistent, the error paths are "+
			"explicit, and the change can be made in small reviewable steps without touching unrelated code; the "+
			"risks are in the places where state is shared between requests, which the plan should cover first.\n\n", i, topic, i)
	}
	return b.String()
}

func (w writeContext) filesModified() string {
	var b strings.Builder
	b.WriteString("\n## Files Modified\n\n")
	for _, p := range w.Siblings {
		if filepath.Ext(p) != ".md" {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// plan has four phases in a diamond: 1 first, 2 and 3 in parallel, 4 last.
func (w writeContext) plan() string {
	return fmt.Sprintf(`# Plan: %s

## Overview

Four phases; phases 2 and 3 depend only on phase 1 and can run in parallel.

### Phase 1: Foundation
dependencies: []
estimate_ms: 60000

%s
### Phase 2: Core logic
dependencies: [1]
estimate_ms: 90000

%s
### Phase 3: Interfaces
dependencies: [1]
estimate_ms: 90000

%s
### Phase 4: Integration
dependencies: [2, 3]
estimate_ms: 60000

%s`, topicOf(w.Prompt), details("foundation", planSections), details("core logic", planSections),
		details("interfaces", planSections), details("integration", planSections))
}

func (w writeContext) testResults() string {
	if w.TestRun <= w.Knobs.FailTestRuns {
		return `{"total_tests": 4, "tests_passed": 3, "tests_failed": 1, "coverage_percent": 72.5, "failures": [{"name": "TestStandInFailure", "message": "expected 200, got 500"}]}` + "\n"
	}
	return `{"total_tests": 4, "tests_passed": 4, "tests_failed": 0, "coverage_percent": 85.0, "failures": []}` + "\n"
}

func (k Knobs) classification() string {
	c := DefaultClassification
	if k.Classification != nil {
		c = *k.Classification
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func sourceFile(path, topic string) string {
	if filepath.Ext(path) == ".go" {
		pkg := strings.ReplaceAll(filepath.Base(filepath.Dir(path)), "-", "")
		if pkg == "." || pkg == "/" || pkg == "" {
			pkg = "main"
		}
		return fmt.Sprintf("// Package %s: %s (written by the e2e stand-in).\npackage %s\n", pkg, topic, pkg)
	}
	return fmt.Sprintf("%s (written by the e2e stand-in)\n", topic)
}

var topicLine = regexp.MustCompile(`(?im)^\s*(?:[^:\n]*\btopic\b[^:\n]*:\s*|TOPIC=)(.+?)\s*$`)

// topicOf is the topic named in a prompt ("Research the topic: X", "TOPIC=X"),
// else its first line.
func topicOf(prompt string) string {
	if m := topicLine.FindStringSubmatch(prompt); m != nil {
		return m[1]
	}
	first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return orDefault(first, "the task")
}

// workerSteps are what a worker (persona) of topic does after its
// report: an implementer writes its source file (EditSource); any worker
// edits the files its topic's edits name (Edits) and writes outside its
// worktree (Stray, when once says this one is the one).
func (k Knobs) workerSteps(persona, topic string, once func() bool) []step {
	var out []step
	if k.EditSource && persona == "implementation-executor" {
		out = append(out, step{Kind: stepWrite, Text: sourcePath(topic)})
	}
	for _, e := range k.Edits {
		if strings.Contains(topic, e.Topic) {
			out = append(out, step{Kind: stepEdit, Text: e.Path, Edit: e})
		}
	}
	if k.Stray.Topic != "" && strings.Contains(topic, k.Stray.Topic) && once() {
		out = append(out, step{Kind: stepBash, Text: "echo 'written outside the worktree' > " + k.Stray.Path})
	}
	return out
}

// pick is the edit's first pair whose old text read (a Read result)
// holds.
func (e Edit) pick(read string) (old, new string, ok bool) {
	for i := 0; i+1 < len(e.Pairs); i += 2 {
		if strings.Contains(read, e.Pairs[i]) {
			return e.Pairs[i], e.Pairs[i+1], true
		}
	}
	return "", "", false
}

// sourcePath is the project's source file an implementer of topic edits
// (Knobs.EditSource): src/<topic in lower case, words joined by _>.go.
func sourcePath(topic string) string {
	words := strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	return "src/" + orDefault(strings.Join(words, "_"), "change") + ".go"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
