package checkpoint

import (
	"fmt"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/intent"
)

// benchDoc is a realistic checkpoint of about 4 KB: the full fixture (a
// coordinate workflow in implement, four research workers) without its
// second supervisor and some worker metadata, in the package's layout.
func benchDoc(b *testing.B) []byte {
	b.Helper()
	doc := readFixture(b, "valid/v2.1-full.json")
	for _, p := range []string{
		"supervisor_state.implementation_supervisor",
		"supervisor_state.research_supervisor.aggregated_metadata",
		"supervisor_state.research_supervisor.workers.0.metadata",
		"supervisor_state.research_supervisor.workers.1.metadata",
	} {
		var err error
		if doc, err = sjson.DeleteBytes(doc, p); err != nil {
			b.Fatal(err)
		}
	}
	doc = format(doc)
	if err := Validate(doc); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	return doc
}

func BenchmarkValidate(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if err := Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMigrateAlready21(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if _, _, err := Migrate(doc, intent.Scope); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if _, ok, err := Get(doc, "supervisor_state.research_supervisor.workers.3.status"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkSet(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if _, err := Set(doc, "phase_data.implement.current_phase", []byte(`4`), t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIncrement(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if _, _, err := Increment(doc, "error_state.retry_count", 1, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkViewOf(b *testing.B) {
	doc := benchDoc(b)
	for i := 0; i < b.N; i++ {
		if v := ViewOf(doc); v.CurrentState == "" {
			b.Fatal("no current state")
		}
	}
}

// BenchmarkHeadOfBulk: HeadOf costs the same with 10,000 keys of phase
// data as without (state-load runs it in every block).
func BenchmarkHeadOfBulk(b *testing.B) {
	doc := benchDoc(b)
	bulk := []byte(`{`)
	for i := range 10000 {
		if i > 0 {
			bulk = append(bulk, ',')
		}
		bulk = fmt.Appendf(bulk, `"k%d": "/home/user/project/specs/%03d/report-%d.md"`, i, i%100, i)
	}
	doc = mustSetRaw(b, doc, PhaseData("bulk"), string(append(bulk, '}')))
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := HeadOf(doc); v.CurrentState == "" {
			b.Fatal("no current state")
		}
	}
}
