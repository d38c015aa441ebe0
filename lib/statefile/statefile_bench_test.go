package statefile

import (
	"fmt"
	"strings"
	"testing"
)

// benchSizes are the key counts of a small and a large workflow state.
var benchSizes = []int{10, 1000, 10000}

func benchValues(n int) map[string]string {
	v := make(map[string]string, n)
	for i := range n {
		v[fmt.Sprintf("KEY_%05d", i)] = fmt.Sprintf("/home/user/project/specs/%03d_topic/reports/%d.md", i%100, i)
	}
	return v
}

func BenchmarkQuote(b *testing.B) {
	for name, s := range map[string]string{
		"plain":   "/home/user/project/specs/001_auth/plans/001-plan.md",
		"hostile": "it's $(rm -rf ~) `id`\nline two\ttab \x01 ünïcode",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				_ = Quote(s)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, n := range benchSizes {
		data := Compact(benchValues(n))
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if st := Parse(data); len(st.Values) != n {
					b.Fatal(len(st.Values))
				}
			}
		})
	}
}

// BenchmarkParseAppended parses a file that has grown by appends up to
// the compaction threshold: the worst case a reader meets.
func BenchmarkParseAppended(b *testing.B) {
	base := Compact(benchValues(100))
	var buf strings.Builder
	buf.Write(base)
	for i := 0; int64(buf.Len()) <= 2*int64(len(base))+4096; i++ {
		buf.Write(EncodeLine(fmt.Sprintf("KEY_%05d", i%100), fmt.Sprint("value ", i)))
		buf.WriteByte('\n')
	}
	data := []byte(buf.String())
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_ = Parse(data)
	}
}

func BenchmarkCompact(b *testing.B) {
	for _, n := range benchSizes {
		v := benchValues(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Compact(v)
			}
		})
	}
}

func BenchmarkExportLines(b *testing.B) {
	for _, n := range benchSizes {
		v := benchValues(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = exportLines(v)
			}
		})
	}
}

// BenchmarkLoadExport is state-load's own work: parse a compacted file,
// add the state machine's derived keys, render the exports.
func BenchmarkLoadExport(b *testing.B) {
	for _, n := range benchSizes {
		data := Compact(benchValues(n))
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st := Parse(data)
				for _, k := range []string{"WORKFLOW_ID", "CURRENT_STATE", "COMPLETED_STATES", "TERMINAL_STATE"} {
					st.Set(k, "x")
				}
				_ = st.exportLines()
			}
		})
	}
}
