package robust

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// startupBudget bounds what flowstate's own packages allocate before main
// runs, in every process. A regexp compiled or a table filled at package
// level costs each bash block its build (a few KB and tens of µs apiece);
// such work belongs behind sync.OnceValue, done by the command that needs
// it. Allocations are counted, not timed, so the check is exact.
const startupBudget = 8 << 10

// TestStartupWork reads Go's init trace of `flowstate version`: the
// module's package initialisers together stay under startupBudget.
func TestStartupWork(t *testing.T) {
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		t.Fatalf("flowstate version: %v\n%s", err, trace.String())
	}
	total, seen := 0, 0
	sc := bufio.NewScanner(&trace)
	for sc.Scan() {
		// init github.com/flowstate-dev/flowstate/lib/app @1.3 ms, 0.008 ms clock, 592 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/flowstate-dev/flowstate/") {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("unexpected init trace line %q", sc.Text())
		}
		total += n
		seen++
		t.Logf("%s: %d bytes", f[1], n)
	}
	if seen == 0 {
		t.Fatalf("no init trace of flowstate's packages in:\n%s", trace.String())
	}
	if total > startupBudget {
		t.Errorf("flowstate's packages allocate %d bytes before main, over the %d budget: move package-level work behind sync.OnceValue", total, startupBudget)
	}
}
