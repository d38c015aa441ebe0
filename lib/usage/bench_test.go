package usage

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// BenchmarkScanMain reads a main transcript of about 10 MB (the real
// CLI's lines, repeated), as a Stop hook does the first time in a long
// session; later Stops read only what came since.
func BenchmarkScanMain(b *testing.B) {
	one, err := os.ReadFile("testdata/main.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	big := bytes.Repeat(one, (10<<20)/len(one))
	b.SetBytes(int64(len(big)))
	state := func(time.Time) string { return "s" }
	for b.Loop() {
		if _, err := ScanMain(bytes.NewReader(big), Cursor{}, Window{}, state); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanAgent reads an agent's transcript, as PostToolUse does.
func BenchmarkScanAgent(b *testing.B) {
	one, err := os.ReadFile("testdata/agent-supervisor.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	big := bytes.Repeat(one, (1<<20)/len(one))
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if _, err := ScanAgent(bytes.NewReader(big)); err != nil {
			b.Fatal(err)
		}
	}
}
