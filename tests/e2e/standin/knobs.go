package standin

import (
	"time"

	"github.com/flowstate-dev/flowstate/lib/classify"
)

// Knobs steer a scenario. They may depend only on what the stand-in sees in
// the conversation, never on files in the project.
type Knobs struct {
	// Classification is what the workflow-classifier agent answers; nil gives
	// DefaultClassification.
	Classification *Classification
	// FailTestRuns makes the first N test-results files the test-specialist
	// writes (counted over the server's lifetime) report failing tests.
	FailTestRuns int
	// MissingWorker: a subagent whose prompt contains this text writes none of
	// its files but still answers its completion signal.
	MissingWorker string
	// SlowAgent names a persona (e.g. "implementation-executor") whose every
	// request waits SlowDelay before it is answered.
	SlowAgent string
	SlowDelay time.Duration
}

// Classification is the workflow-classifier's JSON (command protocol,
// section 6): the very type flowstate parses it into, so the two agree.
type Classification = classify.Classification

// DefaultClassification is answered when Knobs.Classification is nil.
var DefaultClassification = Classification{
	WorkflowType:       "research-and-plan",
	Confidence:         0.9,
	ResearchComplexity: 2,
	ResearchTopics:     []string{"Existing patterns", "Design options"},
	Reasoning:          "stand-in default classification",
}
