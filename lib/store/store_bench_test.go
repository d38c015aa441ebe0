package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/machine"
)

// benchWorkflow creates a workflow in a temp project, the way sm-init
// does, holding keys state keys. Disk I/O (fsync included) is part of
// what these benchmarks measure: it is what each call pays.
func benchWorkflow(b *testing.B, keys int) *Workflow {
	b.Helper()
	dir := b.TempDir()
	p, err := FindProject(func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return dir
		}
		return ""
	}, dir)
	if err != nil {
		b.Fatal(err)
	}
	m := machine.Default()
	cp, err := checkpoint.New(checkpoint.Params{
		WorkflowID: "bench", Command: "bench", Description: "benchmark", Scope: "full-implementation",
		ProjectName: "bench", InitialState: m.Initial, TerminalState: "complete", Transitions: m.Transitions,
		Now: time.Now(),
	})
	if err != nil {
		b.Fatal(err)
	}
	w, err := p.Create("bench", cp, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	pairs := make([][2]string, keys)
	for i := range pairs {
		pairs[i] = [2]string{fmt.Sprintf("KEY_%05d", i), fmt.Sprintf("/home/user/project/specs/%03d/report-%d.md", i%100, i)}
	}
	if keys > 0 {
		if err := w.AppendState(pairs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	return w
}

func BenchmarkAppendState(b *testing.B) {
	w := benchWorkflow(b, 10)
	i := 0
	for b.Loop() {
		i++
		if err := w.AppendState([][2]string{{"COUNTER", fmt.Sprint(i)}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadState(b *testing.B) {
	for _, keys := range []int{10, 10000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			w := benchWorkflow(b, keys)
			for b.Loop() {
				st, err := w.LoadState()
				if err != nil || len(st.Values) != keys {
					b.Fatal(err, len(st.Values))
				}
			}
		})
	}
}

// BenchmarkUpdate is one locked checkpoint edit: lock, read, set,
// validate, atomic replace, event append.
func BenchmarkUpdate(b *testing.B) {
	w := benchWorkflow(b, 0)
	i := 0
	for b.Loop() {
		i++
		err := w.Update(func(tx *Tx) error {
			var err error
			tx.Checkpoint, err = checkpoint.Set(tx.Checkpoint, "phase_data.bench.n", []byte(fmt.Sprint(i)), tx.Now)
			tx.Event("bench", nil)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadCheckpoint(b *testing.B) {
	w := benchWorkflow(b, 0)
	for b.Loop() {
		if _, err := w.ReadCheckpoint(); err != nil {
			b.Fatal(err)
		}
	}
}
