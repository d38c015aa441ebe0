package lint

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostile are inputs that once made lint take minutes (cubic in the
// nesting of $(, quadratic in the lines of a file): the shapes of issue
// 35, each at the size it was found at.
var hostile = []struct {
	name string
	md   func() string
}{
	// 16,000 nested $( in a 46 KiB command.
	{"nested", func() string { return nestedBlocks(1, 16000) }},
	// 20,000 ordinary blocks, 2.8 MB.
	{"blocks", func() string {
		var b strings.Builder
		b.WriteString("---\ndescription: d\n---\n")
		for i := range 20000 {
			fmt.Fprintf(&b, "\n## step %d\n\nSay what the step does.\n\n```bash\nout=$(flowstate state-get K_%d) && echo \"K_%d=$out\"\n```\n", i, i, i)
		}
		return b.String()
	}},
	// A 15 MB binary file.
	{"binary", func() string {
		data := make([]byte, 15<<20)
		r := rand.NewChaCha8([32]byte{35})
		_, _ = r.Read(data)
		return string(data)
	}},
	// Chains the parser reads in a loop, into trees as deep as they are
	// long; and a frontmatter of 100,000 continued lines.
	{"pipeline", func() string { return command("~~~bash\n" + strings.Repeat("a | ", 100000) + "a\n~~~\n") }},
	{"arithmetic", func() string { return command("~~~bash\necho $((" + strings.Repeat("1+", 200000) + "1))\n~~~\n") }},
	{"frontmatter", func() string { return "---\ndescription: d\n" + strings.Repeat("  more\n", 100000) + "---\n" }},
}

// nestedBlocks is a command of blocks bash blocks, each one echo of depth
// nested $( ... ).
func nestedBlocks(blocks, depth int) string {
	block := "~~~bash\necho " + strings.Repeat("$(", depth) + "x" + strings.Repeat(")", depth) + "\n~~~\n"
	return command(strings.Repeat(block, blocks))
}

// cpuTime is the CPU time the process has used: what lint costs, however
// busy the machine is with other work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCheckIsBounded: each hostile input lints within a bound far above
// the linear cost (0.2 s of CPU a MB, measured): half a second, plus two
// a MB. The old cubic and quadratic code took minutes on these; a
// watchdog ends the test when the bound is passed, rather than waiting.
func TestCheckIsBounded(t *testing.T) {
	for _, h := range hostile {
		md := h.md()
		bound := time.Duration(float64(2*time.Second)*float64(len(md))/(1<<20)) + time.Second/2
		start := cpuTime()
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
					if used := cpuTime() - start; used > bound {
						panic(fmt.Sprintf("lint of %s (%d KiB) still running after %v of CPU time, over its bound of %v", h.name, len(md)>>10, used, bound))
					}
				}
			}
		}()
		Check("commands/c.md", md)
		close(done)
		t.Logf("%s: %d KiB in %v of CPU time (bound %v)", h.name, len(md)>>10, cpuTime()-start, bound)
	}
}

// TestDepthBounds: a block nested as deep as a person would write it is
// checked; one nested past what lint follows is one finding, at once.
func TestDepthBounds(t *testing.T) {
	for _, c := range []struct {
		name, body string
		deep       bool
	}{
		{"50 nested $(", "echo " + strings.Repeat("$(", 50) + "x" + strings.Repeat(")", 50), false},
		{"50 nested ifs", strings.Repeat("if true; then ", 50) + "echo x" + strings.Repeat("; fi", 50), false},
		{"a pipeline of 200", strings.Repeat("a | ", 199) + "a", false},
		{"1,000 nested $(", "echo " + strings.Repeat("$(", 1000) + "x" + strings.Repeat(")", 1000), true},
		{"1,000 nested ifs", strings.Repeat("if true; then ", 1000) + "echo x" + strings.Repeat("; fi", 1000), true},
		{"a pipeline of 2,000", strings.Repeat("a | ", 1999) + "a", true},
		{"a sum of 2,000", "echo $((" + strings.Repeat("n+", 1999) + "1))", true},
	} {
		got := Check("commands/c.md", command("~~~bash\n"+c.body+"\n~~~\n"))
		deep := len(got) == 1 && strings.Contains(got[0].Message, "deeper than lint follows")
		if deep != c.deep || !c.deep && len(got) > 0 {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// BenchmarkCheckHostile: MB/s on each hostile input; linear code keeps it
// the same at any size.
func BenchmarkCheckHostile(b *testing.B) {
	for _, h := range hostile {
		md := h.md()
		b.Run(h.name, func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				Check("commands/c.md", md)
			}
		})
	}
}
