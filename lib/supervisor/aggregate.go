package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Kind is a supervisor kind (docs/supervisors.md).
type Kind string

// The three supervisor kinds.
const (
	Research       Kind = "research"
	Implementation Kind = "implementation"
	Testing        Kind = "testing"
)

// ParseKind checks a --kind flag value.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Research, Implementation, Testing:
		return k, nil
	}
	return "", fail.Usagef("--kind %q: use research, implementation or testing", s)
}

// Limits of an aggregate (docs/supervisors.md, "Aggregation and partial
// failures").
const (
	AggregateSummaryWords = 100 // words of an aggregate summary
	FindingsPerWorker     = 3   // findings one research worker contributes
	ErrorWords            = 30  // words of a worker's error in a failure list
	// ContextBudget is the most context_tokens a research aggregate may
	// take: "~500 tokens instead of ~10,000", which is 5% of four
	// 10 KB reports. Findings, then summary words, are trimmed to fit.
	ContextBudget = 500
)

// inputs is what Aggregate read for aggregate. Outputs maps a worker's
// output_path to the file's bytes; a path that could not be read is absent.
// FileLines counts the lines of a modified file for implementation tracks
// that do not report total_lines; nil means unknown.
type inputs struct {
	Outputs   map[string][]byte
	FileLines func(path string) (int, bool)
	// SpanMs is how long the workers took together, from the first start
	// to the last end, when it was measured (0 when not): the parallel
	// duration of waves that ran one after another is their span, not
	// the longest worker's time.
	SpanMs int64
}

// Failure names a worker that did not deliver and why.
type Failure struct {
	WorkerID string `json:"worker_id"`
	Topic    string `json:"topic,omitempty"`
	Track    string `json:"track,omitempty"`
	Stage    string `json:"stage,omitempty"`
	Error    string `json:"error"`
}

// FailedError is returned when no worker delivered. Its message is the
// "SUPERVISOR_FAILED: {json}" signal line, ready for stdout; it unwraps to
// fail.Refused (exit 3): the data is valid, the phase just cannot go on, like
// a transition refused after retries are exhausted.
type FailedError struct {
	Kind     Kind
	Failures []Failure
}

func (e *FailedError) Error() string {
	b, _ := json.Marshal(struct {
		Kind     Kind      `json:"kind"`
		Error    string    `json:"error"`
		Failures []Failure `json:"failures"`
	}{e.Kind, e.summary(), e.Failures})
	return "SUPERVISOR_FAILED: " + string(b)
}

func (e *FailedError) summary() string {
	return fmt.Sprintf("all %d %s workers failed", len(e.Failures), e.Kind)
}

func (e *FailedError) Unwrap() error {
	return &fail.Error{Code: fail.Refused, Err: errors.New(e.summary())}
}

// ResearchAggregate is the aggregated_metadata of a research supervisor
// (docs/supervisors.md). ContextTokens is len(JSON of this aggregate)/4, the
// 4-bytes-per-token estimate, counted on the compact JSON that includes the
// field itself; findings and summary are trimmed to keep it within
// ContextBudget.
type ResearchAggregate struct {
	TopicsResearched int       `json:"topics_researched"`
	ReportsCreated   []string  `json:"reports_created"`
	Summary          string    `json:"summary"`
	KeyFindings      []string  `json:"key_findings"`
	TotalDurationMs  int64     `json:"total_duration_ms"`
	ContextTokens    int       `json:"context_tokens"`
	PartialFailures  []Failure `json:"partial_failures,omitempty"`
}

// ImplementationAggregate is the aggregated_metadata of an implementation
// supervisor; tracks run in parallel.
type ImplementationAggregate struct {
	TracksCompleted      int       `json:"tracks_completed"`
	FilesModified        int       `json:"files_modified"`
	TotalLines           int64     `json:"total_lines"`
	ParallelDurationMs   int64     `json:"parallel_duration_ms"`
	SequentialDurationMs int64     `json:"sequential_duration_ms"`
	TimeSavingsPercent   float64   `json:"time_savings_percent"`
	Summary              string    `json:"summary"`
	PartialFailures      []Failure `json:"partial_failures,omitempty"`
}

// TestingAggregate is the aggregated_metadata of a testing supervisor. CoveragePercent is the highest coverage any worker measured
// (coverage does not add up across runs; the highest is a lower bound of the
// combined coverage), null when none did.
type TestingAggregate struct {
	TotalTests      int64     `json:"total_tests"`
	TestsPassed     int64     `json:"tests_passed"`
	TestsFailed     int64     `json:"tests_failed"`
	CoveragePercent *float64  `json:"coverage_percent"`
	TotalDurationMs int64     `json:"total_duration_ms"`
	Summary         string    `json:"summary"`
	PartialFailures []Failure `json:"partial_failures,omitempty"`
}

// aggregate builds the aggregated_metadata of kind from the worker records
// as one line of compact JSON. Completed workers are aggregated, with
// missing metadata filled from their output files; failed, pending and
// running workers, and completed ones whose output is missing or unusable,
// are listed in partial_failures. When no worker delivered the error is a
// *FailedError.
func aggregate(kind Kind, recs []Record, in inputs) ([]byte, error) {
	var v any
	var err error
	switch kind {
	case Research:
		v, err = aggregateResearch(recs, in)
	case Implementation:
		v, err = aggregateImplementation(recs, in)
	case Testing:
		v, err = aggregateTesting(recs, in)
	default:
		_, err = ParseKind(string(kind))
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// worker is a completed worker with its metadata filled in.
type worker struct {
	Record
	m metadata
}

// kindRules say when a worker's own metadata suffices for its kind and how
// its output file completes it.
type kindRules struct {
	kind        Kind
	complete    func(Record, metadata) bool
	fill        func(*metadata, []byte) error
	needsOutput bool // an incomplete worker without output_path has failed
}

// settle splits recs into delivered workers and failures.
func settle(r kindRules, recs []Record, in inputs) ([]worker, []Failure, error) {
	if len(recs) == 0 {
		return nil, nil, fail.Invalidf("no worker records to aggregate: record each worker (status, output_path) first")
	}
	var done []worker
	var failed []Failure
	for i, rec := range recs {
		// Records parsed by ParseRecords are valid already, but Aggregate
		// also takes records built in Go (lib/orchestrate's pending ones),
		// and the sums below rely on the bounds Validate checks and on the
		// metadata decoding.
		if err := rec.Validate(); err != nil {
			return nil, nil, fmt.Errorf("worker record %d: %w", i+1, err)
		}
		m, problem := deliver(r, rec, in)
		if problem != "" {
			failed = append(failed, Failure{rec.WorkerID, rec.Topic, rec.Track, rec.Stage, capWords(problem, ErrorWords)})
			continue
		}
		done = append(done, worker{rec, m})
	}
	if len(done) == 0 {
		return nil, nil, &FailedError{Kind: r.kind, Failures: failed}
	}
	return done, failed, nil
}

// deliver returns the worker's filled metadata, or why it did not deliver.
func deliver(r kindRules, rec Record, in inputs) (metadata, string) {
	switch rec.Status {
	case checkpoint.WorkerFailed:
		if rec.Error == "" {
			return metadata{}, "failed without an error message"
		}
		return metadata{}, rec.Error
	case checkpoint.WorkerPending, checkpoint.WorkerRunning, checkpoint.WorkerInProgress:
		return metadata{}, "no result recorded: the worker is still " + rec.Status
	}
	m, _ := rec.meta() // Validate checked it decodes
	if r.complete(rec, m) {
		return m, ""
	}
	if rec.OutputPath == "" {
		if r.needsOutput {
			return m, "completed without metadata or output_path"
		}
		return m, ""
	}
	out, ok := in.Outputs[rec.OutputPath]
	if !ok {
		return m, fmt.Sprintf("output %s is missing or unreadable", rec.OutputPath)
	}
	if err := r.fill(&m, out); err != nil {
		return m, fmt.Sprintf("output %s: %v", rec.OutputPath, err)
	}
	return m, ""
}

// fillFromReport completes report metadata from a report file.
func fillFromReport(m *metadata, report []byte) error {
	meta, err := ParseReport(report)
	if err != nil {
		return err
	}
	if m.Title == "" {
		m.Title = meta.Title
	}
	if m.Summary == "" {
		m.Summary = meta.Summary
	}
	if len(m.KeyFindings) == 0 {
		m.KeyFindings = meta.KeyFindings
	}
	if len(m.FilesModified) == 0 {
		m.FilesModified = meta.FilesModified
	}
	return nil
}

var researchRules = kindRules{
	kind:        Research,
	complete:    func(_ Record, m metadata) bool { return m.Summary != "" && len(m.KeyFindings) > 0 },
	fill:        fillFromReport,
	needsOutput: true,
}

// aggregateResearch aggregates research workers (see Aggregate).
func aggregateResearch(recs []Record, in inputs) (ResearchAggregate, error) {
	done, failed, err := settle(researchRules, recs, in)
	if err != nil {
		return ResearchAggregate{}, err
	}
	a := ResearchAggregate{TopicsResearched: len(done), ReportsCreated: []string{}, PartialFailures: failed}
	pieces := make([]string, len(done))
	lists := make([][]string, len(done))
	for i, w := range done {
		if w.OutputPath != "" {
			a.ReportsCreated = append(a.ReportsCreated, w.OutputPath)
		}
		a.TotalDurationMs += w.DurationMs
		pieces[i] = labelled(w.Label(), firstNonEmpty(w.m.Summary, w.m.Title))
		lists[i] = w.m.KeyFindings
	}
	picks := pickFindings(lists)
	// Trim to the context budget: drop the findings picked last, so every
	// worker keeps its first finding longest, then shorten the summary.
	for k, words := len(picks), AggregateSummaryWords; ; {
		a.Summary = compose("", pieces, words)
		a.KeyFindings = grouped(picks[:k])
		if err := a.countTokens(); err != nil {
			return ResearchAggregate{}, err
		}
		switch {
		case a.ContextTokens <= ContextBudget:
			return a, nil
		case k > 0:
			k--
		case words > 0:
			words = max(words-10, 0)
		default:
			return a, nil // the paths and failures alone exceed the budget
		}
	}
}

// countTokens sets ContextTokens to len(JSON)/4 of the aggregate that
// contains it: the fixed point, reached in a few rounds from 0 because the
// count only grows with the digits it adds.
func (a *ResearchAggregate) countTokens() error {
	a.ContextTokens = 0
	for {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if len(b)/4 == a.ContextTokens {
			return nil
		}
		a.ContextTokens = len(b) / 4
	}
}

// pick is a finding chosen from worker w.
type pick struct {
	w    int
	text string
}

// pickFindings takes findings round-robin, at most FindingsPerWorker from
// each worker and MaxFindings in all, dropping repeats, so that every worker
// is heard before any worker's second finding. Picks are in that order.
func pickFindings(lists [][]string) []pick {
	var picks []pick
	next := make([]int, len(lists))
	seen := map[string]bool{}
	for round := 0; round < FindingsPerWorker; round++ {
		for w, l := range lists {
			for next[w] < len(l) && len(picks) < MaxFindings {
				f := capWords(plain(l[next[w]]), FindingWords)
				next[w]++
				if f == "" || seen[strings.ToLower(f)] {
					continue
				}
				seen[strings.ToLower(f)] = true
				picks = append(picks, pick{w, f})
				break
			}
		}
	}
	return picks
}

// grouped lists picks worker by worker, each worker's in pick order.
func grouped(picks []pick) []string {
	sorted := append([]pick{}, picks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].w < sorted[j].w })
	out := make([]string, len(sorted))
	for i, p := range sorted {
		out[i] = p.text
	}
	return out
}

var implementationRules = kindRules{
	kind: Implementation,
	complete: func(r Record, m metadata) bool {
		return m.Summary != "" && (len(r.FilesModified) > 0 || len(m.FilesModified) > 0)
	},
	fill: fillFromReport,
}

// aggregateImplementation aggregates implementation tracks (see Aggregate).
// A track's lines are its metadata total_lines, else the lines of its
// modified files as in.FileLines counts them.
func aggregateImplementation(recs []Record, in inputs) (ImplementationAggregate, error) {
	done, failed, err := settle(implementationRules, recs, in)
	if err != nil {
		return ImplementationAggregate{}, err
	}
	a := ImplementationAggregate{TracksCompleted: len(done), PartialFailures: failed}
	files := map[string]bool{}
	counted := map[string]bool{} // files whose lines are already in TotalLines
	pieces := make([]string, len(done))
	for i, w := range done {
		for _, f := range append(append([]string{}, w.FilesModified...), w.m.FilesModified...) {
			files[f] = true
			if w.m.TotalLines == nil && in.FileLines != nil && !counted[f] {
				if n, ok := in.FileLines(f); ok {
					a.TotalLines += int64(n)
				}
				counted[f] = true
			}
		}
		if w.m.TotalLines != nil {
			a.TotalLines += *w.m.TotalLines
		}
		a.SequentialDurationMs += w.DurationMs
		a.ParallelDurationMs = max(a.ParallelDurationMs, w.DurationMs)
		pieces[i] = labelled(w.Label(), firstNonEmpty(w.m.Summary, w.m.Title))
	}
	if in.SpanMs > 0 {
		a.ParallelDurationMs = min(in.SpanMs, a.SequentialDurationMs)
	}
	a.FilesModified = len(files)
	a.TimeSavingsPercent = savingsPercent(a.ParallelDurationMs, a.SequentialDurationMs)
	head := fmt.Sprintf("Completed %d of %d tracks in parallel: %d files modified, %d lines; %.1f%% time saved (%d ms vs %d ms sequential).",
		len(done), len(recs), a.FilesModified, a.TotalLines, a.TimeSavingsPercent, a.ParallelDurationMs, a.SequentialDurationMs)
	a.Summary = compose(head, pieces, AggregateSummaryWords)
	return a, nil
}

var testingRules = kindRules{
	kind:     Testing,
	complete: func(_ Record, m metadata) bool { return m.TotalTests != nil },
	fill: func(m *metadata, out []byte) error {
		r, err := ParseTestResults(out)
		if err != nil {
			return err
		}
		m.TotalTests, m.TestsPassed, m.TestsFailed = &r.TotalTests, &r.TestsPassed, &r.TestsFailed
		if m.CoveragePercent == nil {
			m.CoveragePercent = r.CoveragePercent
		}
		if len(m.Failures) == 0 {
			m.Failures = r.Failures
		}
		return nil
	},
}

// failingShown is how many failing tests a testing summary names.
const failingShown = 3

// aggregateTesting aggregates testing workers (see Aggregate). Workers of
// one stage run in parallel and stages run one after another, so the total
// duration is the sum over stages of the longest worker of each stage.
func aggregateTesting(recs []Record, in inputs) (TestingAggregate, error) {
	done, failed, err := settle(testingRules, recs, in)
	if err != nil {
		return TestingAggregate{}, err
	}
	a := TestingAggregate{PartialFailures: failed}
	var failing []string
	var stages []string
	longest := map[string]int64{}
	for _, w := range done {
		a.TotalTests += deref(w.m.TotalTests)
		a.TestsPassed += deref(w.m.TestsPassed)
		a.TestsFailed += deref(w.m.TestsFailed)
		if c := w.m.CoveragePercent; c != nil && (a.CoveragePercent == nil || *c > *a.CoveragePercent) {
			a.CoveragePercent = c
		}
		for _, f := range w.m.Failures {
			failing = append(failing, f.String())
		}
		if _, ok := longest[w.Stage]; !ok {
			stages = append(stages, w.Stage)
		}
		longest[w.Stage] = max(longest[w.Stage], w.DurationMs)
	}
	for _, s := range stages {
		a.TotalDurationMs += longest[s]
	}
	coverage := "coverage not measured"
	if a.CoveragePercent != nil {
		coverage = fmt.Sprintf("coverage %.1f%%", *a.CoveragePercent)
	}
	head := fmt.Sprintf("%d tests: %d passed, %d failed; %s.", a.TotalTests, a.TestsPassed, a.TestsFailed, coverage)
	if len(failing) > failingShown {
		head += fmt.Sprintf(" Failing (first %d of %d):", failingShown, len(failing))
		failing = failing[:failingShown]
	} else if len(failing) > 0 {
		head += " Failing:"
	}
	a.Summary = compose(head, failing, AggregateSummaryWords)
	return a, nil
}

// savingsPercent is the time saved by running in parallel, in percent with
// one decimal; 0 when there is no sequential time.
func savingsPercent(parallelMs, sequentialMs int64) float64 {
	if sequentialMs <= 0 {
		return 0
	}
	return math.Round(float64(sequentialMs-parallelMs)*1000/float64(sequentialMs)) / 10
}

// compose builds a summary of at most budget words: head first, then the
// pieces sharing what is left so that short pieces keep all their words and
// long ones are cut equally. Deterministic: summaries are never written by a
// model.
func compose(head string, pieces []string, budget int) string {
	var parts []string
	if head = capWords(head, budget); head != "" {
		parts = append(parts, head)
	}
	lens := make([]int, len(pieces))
	for i, p := range pieces {
		lens[i] = wordCount(p)
	}
	shares := share(lens, budget-wordCount(head))
	for i, p := range pieces {
		if c := capWords(p, shares[i]); c != "" {
			parts = append(parts, sentence(c))
		}
	}
	return strings.Join(parts, " ")
}

// share splits budget among pieces of the given lengths, shortest first:
// each gets its length or an equal part of what remains, whichever is less.
func share(lens []int, budget int) []int {
	order := make([]int, len(lens))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lens[order[a]] < lens[order[b]] })
	out := make([]int, len(lens))
	for k, i := range order {
		out[i] = min(lens[i], max(budget, 0)/(len(lens)-k))
		budget -= out[i]
	}
	return out
}

// labelled prefixes text with the label of its worker.
func labelled(label, text string) string {
	if text == "" {
		return ""
	}
	return plain(label) + ": " + text
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
