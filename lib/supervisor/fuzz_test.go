package supervisor

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Seeds beyond testdata/fuzz: every fixture of the matching kind.
func addFixtures(f *testing.F, names ...string) {
	for _, n := range names {
		f.Add(fixture(f, n))
	}
}

func FuzzParseReport(f *testing.F) {
	addFixtures(f, "reports/001_authentication_patterns.md", "reports/overview_variant.md",
		"reports/finding_headings.md", "reports/finding_headings_nosection.md", "reports/no_h1.md", "summaries/frontend.md")
	f.Fuzz(func(t *testing.T, md []byte) {
		m, err := ParseReport(md)
		if err != nil {
			if fail.Code(err) != fail.Invalid {
				t.Fatalf("error with code %d: %v", fail.Code(err), err)
			}
			return
		}
		oneLine := func(what, s string) {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r") || s != strings.TrimSpace(s) {
				t.Fatalf("%s %q is not trimmed valid one-line text", what, s)
			}
		}
		if m.Title == "" || (m.Summary == "" && len(m.KeyFindings) == 0) {
			t.Fatalf("accepted without title, summary or findings: %+v", m)
		}
		oneLine("title", m.Title)
		oneLine("summary", m.Summary)
		if wordCount(m.Summary) > SummaryWords || len(m.KeyFindings) > MaxFindings {
			t.Fatalf("caps exceeded: %+v", m)
		}
		for _, k := range m.KeyFindings {
			oneLine("finding", k)
			if k == "" || wordCount(k) > FindingWords {
				t.Fatalf("finding %q", k)
			}
		}
		for _, p := range m.FilesModified {
			if p == "" {
				t.Fatal("empty file path")
			}
		}
		// Whatever was parsed aggregates, and stays within the budget.
		in := inputs{Outputs: map[string][]byte{"r.md": md}}
		a, err := aggregateResearch([]Record{{WorkerID: "w", Status: checkpoint.WorkerCompleted, OutputPath: "r.md"}}, in)
		if err != nil || a.ContextTokens > ContextBudget {
			t.Fatalf("aggregate of a parsed report: %+v, %v", a, err)
		}
	})
}

func FuzzParsePlan(f *testing.F) {
	addFixtures(f, "plans/linear.md", "plans/diamond.md", "plans/fanout.md", "plans/cyclic.md", "plans/missing_dep.md")
	f.Fuzz(func(t *testing.T, md []byte) {
		phases, err := ParsePlan(md)
		if err != nil {
			if fail.Code(err) != fail.Invalid {
				t.Fatalf("error with code %d: %v", fail.Code(err), err)
			}
			return
		}
		waves, err := Waves(phases)
		if err != nil {
			if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "cycle") {
				t.Fatalf("waves of a valid plan failed otherwise than by a cycle: %v", err)
			}
			return
		}
		// Every phase is in exactly one wave, after all its dependencies,
		// and waves are sorted.
		wave := map[int]int{}
		for i, w := range waves {
			for j, n := range w {
				if _, dup := wave[n]; dup {
					t.Fatalf("phase %d twice in %v", n, waves)
				}
				if j > 0 && w[j-1] >= n {
					t.Fatalf("wave not sorted: %v", w)
				}
				wave[n] = i
			}
		}
		if len(wave) != len(phases) {
			t.Fatalf("%d phases, %d placed", len(phases), len(wave))
		}
		for _, p := range phases {
			for _, d := range p.Dependencies {
				if wave[d] >= wave[p.Number] {
					t.Fatalf("phase %d in wave %d but depends on %d in wave %d", p.Number, wave[p.Number], d, wave[d])
				}
			}
		}
		if e, err := EstimateWaves(phases, waves); err == nil && (e.ParallelMs < 0 || e.ParallelMs > e.SequentialMs || e.TimeSavingsPercent < 0 || e.TimeSavingsPercent > 100) {
			t.Fatalf("estimate %+v", e)
		}
	})
}

func FuzzParseSignals(f *testing.F) {
	f.Add([]byte("REPORT_CREATED: /a.md\n"))
	f.Add([]byte("text\nSUPERVISOR_COMPLETE: {\n \"a\": 1\n}\nREPORT_CREATED: x"))
	f.Add([]byte("SUPERVISOR_FAILED: {\"errors\": [\"e\"]} trailing\n`REPORT_CREATED: `"))
	f.Fuzz(func(t *testing.T, text []byte) {
		sigs, err := ParseSignals(text)
		if err != nil {
			if fail.Code(err) != fail.Invalid {
				t.Fatalf("error with code %d: %v", fail.Code(err), err)
			}
			return
		}
		if len(sigs) == 0 {
			t.Fatal("no signals and no error")
		}
		for _, s := range sigs {
			switch s.Signal {
			case ReportCreated:
				if s.Path == "" || !validText(s.Path) || s.Data != nil {
					t.Fatalf("bad report signal %+v", s)
				}
			case SupervisorComplete, SupervisorFailed:
				var obj map[string]any
				if s.Path != "" || json.Unmarshal(s.Data, &obj) != nil || strings.Contains(string(s.Data), "\n") {
					t.Fatalf("bad supervisor signal %+v", s)
				}
			default:
				t.Fatalf("unknown signal %+v", s)
			}
		}
		if _, err := json.Marshal(sigs); err != nil {
			t.Fatal(err)
		}
	})
}
