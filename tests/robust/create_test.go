package robust

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// initArgs starts workflow id.
func initArgs(id string) []string {
	return []string{"sm-init", "--workflow", id, "--description", "d", "--command", "c", "--scope", "research-only"}
}

// listed returns what `flowstate list --json` shows, failing the test on
// an unreadable workflow: a workflow is there whole or not at all.
func listed(t *testing.T, p *project) []string {
	t.Helper()
	var all []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(p.ok("list", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range all {
		if w.Status == "unreadable" {
			t.Fatalf("list shows %s as unreadable: a half-made workflow", w.ID)
		}
		ids = append(ids, w.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestRefusedInitLeavesNothing: sm-init refused for an invalid session
// id (exit 4) writes nothing at all, not even the state directory.
func TestRefusedInitLeavesNothing(t *testing.T) {
	p := newProject(t)
	for _, session := range []string{"../escape", "a b", strings.Repeat("s", 200), ".hidden"} {
		refuse(t, p, call{Args: initArgs("w1"), Env: []string{"CLAUDE_CODE_SESSION_ID=" + session}}, 4, "CLAUDE_CODE_SESSION_ID")
	}
}

// TestFailedInitLeavesNothing: sm-init failing half-way (here a file
// size limit makes a write fail with EFBIG, as a full disk would with
// ENOSPC) removes what it built: list shows nothing, and the next sm-init
// of the same id works.
func TestFailedInitLeavesNothing(t *testing.T) {
	p := newProject(t)
	long := strings.Repeat("a long description ", 600) // a checkpoint over 8 KiB
	p.wrap(`ulimit -f 8 && exec "$flowstate" "$@"`)
	r := p.run(args("sm-init", "--workflow", "w1", "--description", long, "--command", "c", "--scope", "research-only"))
	wantRefusal(t, "sm-init under a file size limit", r, 1, "nothing was created")
	p.bin = bin
	if ids := listed(t, p); len(ids) != 0 {
		t.Fatalf("a failed sm-init left %q", ids)
	}
	if entries, _ := os.ReadDir(p.stateDir() + "/workflows"); len(entries) != 0 {
		t.Errorf("a failed sm-init left %v in workflows/", entries)
	}
	p.ok("sm-init", "--workflow", "w1", "--description", long, "--command", "c", "--scope", "research-only")
}

// TestKilledInitIsInvisibleAndSwept SIGKILLs sm-init at random moments:
// list never shows a half-made workflow, and the next sm-init clears
// what a killed one left.
func TestKilledInitIsInvisibleAndSwept(t *testing.T) {
	kills := 40
	if testing.Short() {
		kills = 10
	}
	p := newProject(t)
	p.setenv("CLAUDE_CODE_SESSION_ID=s1")
	start := time.Now()
	p.ok(initArgs("calibrate")...)
	window := max(3*time.Millisecond, time.Since(start)*3/2)
	made := 0
	for i := range kills {
		killAfter(p, args(initArgs("w"+string(rune('a'+i%26))+string(rune('a'+i/26)))...), time.Duration(rand.Int64N(int64(window))))
		made = len(listed(t, p))
	}
	p.ok(initArgs("last")...)
	if n := len(listed(t, p)); n != made+1 {
		t.Errorf("list shows %d workflows after the last sm-init, want %d", n, made+1)
	}
	entries, err := os.ReadDir(p.stateDir() + "/workflows")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s is left after a successful sm-init", e.Name())
		}
	}
	t.Logf("%d kills within %v: %d workflows made whole, the rest not at all", kills, window.Round(time.Microsecond), made-1)
}
