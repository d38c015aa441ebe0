package orchestrate

import "time"

// Waiting bounds how long a step waits for agents still at work (a model
// launched them in the background, or moved on before they finished), and
// when an agent at work counts as stuck instead.
type Waiting struct {
	// For is how long a step waits before it answers with a NEXT that runs
	// it again; 0 does not wait. Keep it well under the Bash tool's
	// 2-minute timeout.
	For time.Duration
	// StuckAfter is how long an agent may be at work before it counts as
	// stuck (not waited for); 0 means DefaultStuckAfter.
	StuckAfter time.Duration
	// Poll is the time between two looks; 0 means 250 ms.
	Poll time.Duration
}

// Defaults of Waiting, also what the CLI uses when no flag or environment
// variable says otherwise.
const (
	DefaultWait       = 60 * time.Second
	DefaultStuckAfter = 30 * time.Minute
)

func (wt Waiting) stuckAfter() time.Duration {
	if wt.StuckAfter <= 0 {
		return DefaultStuckAfter
	}
	return wt.StuckAfter
}

// wait polls busy until it is false or wt.For has passed, and reports
// whether it is still busy. It holds no lock meanwhile.
func (wt Waiting) wait(busy func() bool) bool {
	poll := wt.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	deadline := time.Now().Add(wt.For)
	for busy() {
		if !time.Now().Before(deadline) {
			return true
		}
		time.Sleep(min(poll, time.Until(deadline)))
	}
	return false
}
