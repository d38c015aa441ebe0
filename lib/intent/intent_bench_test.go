package intent

import "testing"

// BenchmarkClassify classifies each description of the labelled set once
// per iteration; ns/op is per description. The word tables are built
// before the timer starts (BenchmarkLexicon measures that once-per-process cost).
func BenchmarkClassify(b *testing.B) {
	set := loadLabelled(&testing.T{})
	Classify("warm up the tables")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, l := range set {
			Classify(l.Description)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(set)), "ns/description")
}

// BenchmarkLexicon builds the word tables: the cost the first
// classification in a process pays.
func BenchmarkLexicon(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newLexicon()
	}
}
