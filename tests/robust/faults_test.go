package robust

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Real faults: a lock file deleted while held, no HOME, a full disk, an
// I/O error, read-only files, a hook whose stdin stays open. The rule
// they check is docs/architecture.md's: a non-zero exit changes nothing,
// or exactly what its message says.

// TestLockFileRemovedWhileHeld: four writers increment one counter while
// the workflow's lock file is deleted over and over. Every increment
// that reported success is counted: before, a writer that created a new
// lock file while another held the deleted one got in beside it, and
// 120 increments left a counter of 85 to 88.
func TestLockFileRemovedWhileHeld(t *testing.T) {
	p, id := victim(t)
	lock := filepath.Join(p.wfDir(id), "lock")
	stop := make(chan struct{})
	var deleter sync.WaitGroup
	deleter.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = os.Remove(lock)
				time.Sleep(100 * time.Microsecond) // many times a command, without taking a core
			}
		}
	})
	const writers, each = 4, 30
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				r := p.run(args("checkpoint-set", "phase_data.demo.count", "--increment"))
				mu.Lock()
				if r.Code == 0 {
					acked++
				} else {
					t.Errorf("increment: %s", r)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	deleter.Wait()
	if got := strings.TrimSpace(p.ok("checkpoint-get", "phase_data.demo.count")); got != strconv.Itoa(acked) {
		t.Errorf("%d increments acknowledged with the lock file deleted throughout, counter is %s", acked, got)
	}
}
