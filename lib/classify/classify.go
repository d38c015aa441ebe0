// Package classify owns the classification a workflow starts with: the
// JSON the workflow-classifier agent returns, validated by Parse
// (docs/command-protocol.md), and the one built from a scope the user gave
// (Given). Reading a description without a model is lib/intent's job. It
// is pure: it must not do I/O, read the environment, poll or wait; its
// callers do that.
package classify

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// Classification is the classifier agent's answer, as documented in
// docs/command-protocol.md.
type Classification struct {
	WorkflowType       string   `json:"workflow_type"`
	Confidence         float64  `json:"confidence"`
	ResearchComplexity int      `json:"research_complexity"`
	ResearchTopics     []string `json:"research_topics"`
	Reasoning          string   `json:"reasoning"`
	// TopicDetails are the topics as objects, when the classifier gave
	// them so (the original design's form: short_name,
	// detailed_description, ...); ResearchTopics then holds their short
	// names.
	TopicDetails []Topic `json:"research_topic_details,omitempty"`
}

// Topic is a research topic in the original design's object form.
type Topic struct {
	ShortName           string `json:"short_name"`
	DetailedDescription string `json:"detailed_description,omitempty"`
	FilenameSlug        string `json:"filename_slug,omitempty"`
	ResearchFocus       string `json:"research_focus,omitempty"`
}

// signal is how the original design's classifier began its answer.
const signal = "CLASSIFICATION_COMPLETE:"

// MaxComplexity is the largest research_complexity: at most four research
// workers run in parallel.
const MaxComplexity = 4

// MinConfidence is the lowest classifier confidence a workflow starts
// with; below it the classifier is guessing. Offline answers a rule
// matched never go below it, so they always start a workflow.
const MinConfidence = 0.7

// Parse validates the classifier's JSON and returns it. Surrounding
// whitespace, a leading "CLASSIFICATION_COMPLETE:" (the original design's
// answer) and one markdown code fence (```json ... ``` or ``` ... ```)
// are accepted because agents add them; any other text is rejected.
// Research topics may be strings or objects with a short_name. Unknown
// fields are ignored. Every error is fail.Invalid except a
// minConfidence outside 0-1, which is the caller's flag (fail.Usage); with
// an error comes the zero Classification.
func Parse(data []byte, minConfidence float64) (Classification, error) {
	return ParseFor(data, minConfidence, machine.DefaultScopes())
}

// ParseFor is Parse for a workflow definition whose scopes are scopes:
// workflow_type must be one of them.
func ParseFor(data []byte, minConfidence float64, scopes []string) (Classification, error) {
	if math.IsNaN(minConfidence) || minConfidence < 0 || minConfidence > 1 {
		return Classification{}, fail.Usagef("--min-confidence %v is outside 0-1", minConfidence)
	}
	raw, err := object(data)
	if err != nil {
		return Classification{}, err
	}
	var c Classification
	if c.WorkflowType, err = workflowType(raw, scopes); err != nil {
		return Classification{}, err
	}
	if c.Confidence, err = confidence(raw, minConfidence); err != nil {
		return Classification{}, err
	}
	if c.ResearchComplexity, err = complexity(raw); err != nil {
		return Classification{}, err
	}
	if c.ResearchTopics, c.TopicDetails, err = researchTopics(raw, c.ResearchComplexity); err != nil {
		return Classification{}, err
	}
	if c.Reasoning, err = reasoning(raw); err != nil {
		return Classification{}, err
	}
	return c, nil
}

// object is the answer's JSON object, its signal and fence stripped.
func object(data []byte) (map[string]json.RawMessage, error) {
	body := unfence(bytes.TrimPrefix(bytes.TrimSpace(data), []byte(signal)))
	if err := limit.JSON(body, "classification"); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		why := "not a JSON object"
		if err != nil {
			why = err.Error()
		}
		return nil, fail.Invalidf("classification is not valid JSON (%s); expected one JSON object like "+
			`{"workflow_type": "research-and-plan", "confidence": 0.9, "research_complexity": 2, "research_topics": ["A", "B"], "reasoning": "..."}`+
			", optionally in a ```json fence, and nothing else", why)
	}
	return raw, nil
}

// workflowType is one of the definition's scopes.
func workflowType(raw map[string]json.RawMessage, scopes []string) (string, error) {
	wt, ok := stringField(raw, "workflow_type")
	if !ok || !slices.Contains(scopes, wt) {
		return "", fail.Invalidf("classification: workflow_type %s is not one of %s; the classifier must return one of them",
			show(raw, "workflow_type"), strings.Join(scopes, ", "))
	}
	return wt, nil
}

// confidence is a number from 0 to 1, at least minConfidence.
func confidence(raw map[string]json.RawMessage, minConfidence float64) (float64, error) {
	conf, ok := numberField(raw, "confidence")
	switch {
	case !ok:
		return 0, fail.Invalidf("classification: confidence %s is not a number; the classifier must return a number from 0 to 1",
			show(raw, "confidence"))
	case conf < 0 || conf > 1:
		return 0, fail.Invalidf("classification: confidence %v is outside 0-1; the classifier must return a number from 0 to 1", conf)
	case conf < minConfidence:
		return 0, fail.Invalidf("classification: confidence %v is below the minimum %v; re-run the classifier with a clearer description, or change the threshold with --min-confidence",
			conf, minConfidence)
	}
	return conf, nil
}

// complexity is research_complexity: an integer from 1 to MaxComplexity.
func complexity(raw map[string]json.RawMessage) (int, error) {
	n, ok := numberField(raw, "research_complexity")
	if !ok || n != math.Trunc(n) || n < 1 || n > MaxComplexity {
		return 0, fail.Invalidf("classification: research_complexity %s is not an integer from 1 to %d; the classifier must return one",
			show(raw, "research_complexity"), MaxComplexity)
	}
	return int(n), nil
}

// researchTopics are n topics, none blank; details are their objects when
// the classifier gave objects.
func researchTopics(raw map[string]json.RawMessage, n int) ([]string, []Topic, error) {
	topics, details, err := parseTopics(raw["research_topics"])
	// NUL cannot be stored in workflow state (exit-code table: invalid data).
	blank := func(t string) bool { return strings.TrimSpace(t) == "" || strings.ContainsRune(t, 0) }
	if err != nil || len(topics) != n || slices.ContainsFunc(topics, blank) {
		return nil, nil, fail.Invalidf("classification: research_topics %s is not an array of exactly %d non-empty strings (research_complexity is %d); the classifier must return one topic per research worker",
			show(raw, "research_topics"), n, n)
	}
	return topics, details, nil
}

// reasoning is a string, empty when absent or null.
func reasoning(raw map[string]json.RawMessage) (string, error) {
	if r, present := raw["reasoning"]; !present || isNull(r) {
		return "", nil
	}
	s, ok := stringField(raw, "reasoning")
	if !ok {
		return "", fail.Invalidf("classification: reasoning %s is not a string; the classifier must return a string (it may be empty)",
			show(raw, "reasoning"))
	}
	return s, nil
}

// parseTopics reads research_topics: strings, or objects whose
// short_name names the topic (details then holds the objects).
func parseTopics(raw json.RawMessage) (topics []string, details []Topic, err error) {
	if err = json.Unmarshal(raw, &topics); err == nil {
		return topics, nil, nil
	}
	if err = json.Unmarshal(raw, &details); err != nil {
		return nil, nil, err
	}
	topics = nil // the failed decode above may have filled some
	for _, d := range details {
		topics = append(topics, d.ShortName)
	}
	return topics, details, nil
}

// unfence strips surrounding whitespace and one enclosing code fence whose
// info string is empty or "json".
func unfence(data []byte) []byte {
	s := bytes.TrimSpace(data)
	if !bytes.HasPrefix(s, []byte("```")) || !bytes.HasSuffix(s, []byte("```")) || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	nl := bytes.IndexByte(inner, '\n')
	if nl < 0 {
		return s // a one-line fence has no room for an info string: leave it to fail
	}
	info := strings.ToLower(strings.TrimSpace(string(inner[:nl])))
	if info != "" && info != "json" {
		return s
	}
	return bytes.TrimSpace(inner[nl+1:])
}

func isNull(r json.RawMessage) bool { return string(bytes.TrimSpace(r)) == "null" }

func stringField(raw map[string]json.RawMessage, key string) (string, bool) {
	r, ok := raw[key]
	if !ok || len(r) == 0 || r[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(r, &s) != nil || strings.ContainsRune(s, 0) {
		return "", false
	}
	return s, true
}

func numberField(raw map[string]json.RawMessage, key string) (float64, bool) {
	r, ok := raw[key]
	if !ok || len(r) == 0 {
		return 0, false
	}
	var num json.Number
	// json.Number also accepts a quoted number; a string is not a number here.
	if r[0] == '"' || json.Unmarshal(r, &num) != nil {
		return 0, false
	}
	f, err := num.Float64()
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// show renders a field's raw value for an error message, or "(missing)".
func show(raw map[string]json.RawMessage, key string) string {
	r, ok := raw[key]
	if !ok {
		return "(missing)"
	}
	if s := []rune(string(r)); len(s) > 60 {
		return string(s[:57]) + "..."
	}
	return string(r)
}
