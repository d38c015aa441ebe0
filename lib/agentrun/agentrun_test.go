package agentrun

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// ev is an event at t0 plus sec seconds.
func ev(sec int, kind, session, agentID, agentType, worker string) Event {
	return Event{TS: t0.Add(time.Duration(sec) * time.Second), Event: kind, Session: session, AgentID: agentID, AgentType: agentType, WorkerID: worker}
}

func TestWorkerStatus(t *testing.T) {
	const s, rs = "sess", "research-specialist"
	now := t0.Add(100 * time.Second)
	tests := []struct {
		name   string
		events []Event
		worker string
		want   Status
	}{
		{"nothing recorded", nil, "research_1", NotLaunched},
		{"launched, started", []Event{ev(1, Launch, s, "", rs, "research_1"), ev(2, Start, s, "a1", rs, "")}, "research_1", Running},
		{"launched, start not yet seen", []Event{ev(1, Launch, s, "", rs, "research_1")}, "research_1", Running},
		{"stopped with its worker", []Event{ev(1, Launch, s, "", rs, "research_1"), ev(2, Start, s, "a1", rs, ""), ev(9, Stop, s, "a1", rs, "research_1")}, "research_1", Stopped},
		{"stop not attributed, no agent of the type left", []Event{ev(1, Launch, s, "", rs, "research_1"), ev(2, Start, s, "a1", rs, ""), ev(9, Stop, s, "a1", rs, "")}, "research_1", Stopped},
		{"stop not attributed, another agent still at work", []Event{
			ev(1, Launch, s, "", rs, "research_1"), ev(1, Launch, s, "", rs, "research_2"),
			ev(2, Start, s, "a1", rs, ""), ev(2, Start, s, "a2", rs, ""), ev(9, Stop, s, "a1", rs, "")}, "research_1", Running},
		{"other worker's stop", []Event{
			ev(1, Launch, s, "", rs, "research_1"), ev(1, Launch, s, "", rs, "research_2"),
			ev(2, Start, s, "a1", rs, ""), ev(2, Start, s, "a2", rs, ""), ev(9, Stop, s, "a2", rs, "research_2")}, "research_1", Running},
		{"start never seen, stop not attributed", []Event{ev(1, Launch, s, "", rs, "research_1"), ev(9, Stop, s, "a1", rs, "")}, "research_1", Stopped},
		{"launched before the bound", []Event{ev(-7200, Launch, s, "", rs, "research_1"), ev(-7199, Start, s, "a1", rs, "")}, "research_1", Stuck},
		{"another session's launch", []Event{ev(1, Launch, "old", "", rs, "research_1"), ev(2, Start, "old", "a1", rs, "")}, "research_1", NotLaunched},
		{"launched in an earlier state", []Event{ev(1, Launch, s, "", rs, "research_1"), {TS: t0.Add(5 * time.Second), Event: "transition"}}, "research_1", NotLaunched},
		{"launched before a rewind", []Event{ev(1, Launch, s, "", rs, "research_1"), {TS: t0.Add(5 * time.Second), Event: "rewind"}}, "research_1", NotLaunched},
		{"relaunched after a stop", []Event{
			ev(1, Launch, s, "", rs, "research_1"), ev(2, Start, s, "a1", rs, ""), ev(3, Stop, s, "a1", rs, "research_1"),
			ev(4, Launch, s, "", rs, "research_1"), ev(5, Start, s, "a2", rs, "")}, "research_1", Running},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Fold(tt.events, s).Worker(tt.worker, now, time.Hour)
			if got != tt.want {
				t.Errorf("Worker(%s) = %v, want %v", tt.worker, got, tt.want)
			}
		})
	}
}

// TestSettle: between the waves of a Claude Code workflow script, no
// agent of the session is at work, whatever stops were recorded.
func TestSettle(t *testing.T) {
	const s, rs = "sess", "research-specialist"
	now := t0.Add(100 * time.Second)
	for name, evs := range map[string][]Event{
		"started, no stop":      {ev(1, Launch, s, "", rs, "research_1"), ev(2, Start, s, "a1", rs, "")},
		"launched, never seen":  {ev(1, Launch, s, "", rs, "research_1")},
		"launched long ago":     {ev(-7200, Launch, s, "", rs, "research_1")},
		"stopped with a record": {ev(1, Launch, s, "", rs, "research_1"), ev(9, Stop, s, "a1", rs, "research_1")},
	} {
		r := Fold(evs, s).Settle()
		if got, _ := r.Worker("research_1", now, time.Hour); got != Stopped {
			t.Errorf("%s: settled Worker = %v, want stopped", name, got)
		}
		if r.AnyRunning(now, time.Hour, rs) {
			t.Errorf("%s: settled AnyRunning = true", name)
		}
		if got, _ := r.Worker("research_2", now, time.Hour); got != NotLaunched {
			t.Errorf("%s: a worker never launched is %v once settled, want not launched", name, got)
		}
	}
}

func TestAnyRunningAndDuration(t *testing.T) {
	const s = "sess"
	evs := []Event{
		ev(1, Launch, s, "", "research-sub-supervisor", ""),
		ev(2, Start, s, "sup", "research-sub-supervisor", ""),
		ev(3, Launch, s, "", "research-specialist", "research_1"),
		ev(4, Start, s, "w1", "research-specialist", ""),
		ev(34, Stop, s, "w1", "research-specialist", "research_1"),
	}
	r := Fold(evs, s)
	now := t0.Add(40 * time.Second)
	if !r.AnyRunning(now, time.Hour, "research-specialist", "research-sub-supervisor") {
		t.Error("the supervisor is at work: AnyRunning = false")
	}
	if r.AnyRunning(now, time.Hour, "research-specialist") {
		t.Error("every research-specialist stopped: AnyRunning = true")
	}
	if r.AnyRunning(now, 10*time.Second, "research-sub-supervisor") {
		t.Error("a supervisor at work for 38 s with a 10 s bound is stuck, not running")
	}
	if d := r.Duration("research_1"); d != 31*time.Second {
		t.Errorf("Duration = %s, want 31s (launch to stop)", d)
	}
	if d := r.Duration("research_2"); d != 0 {
		t.Errorf("Duration of an unknown worker = %s", d)
	}
	waves := Fold([]Event{
		ev(0, Launch, s, "", "implementation-executor", "phase_1"), ev(10, Stop, s, "a", "implementation-executor", "phase_1"),
		ev(11, Launch, s, "", "implementation-executor", "phase_2"), ev(11, Launch, s, "", "implementation-executor", "phase_3"),
		ev(25, Stop, s, "b", "implementation-executor", "phase_2"), ev(31, Stop, s, "c", "implementation-executor", "phase_3"),
	}, s)
	if got := waves.Span([]string{"phase_1", "phase_2", "phase_3"}); got != 31*time.Second {
		t.Errorf("Span of two waves = %s, want 31s (first launch to last stop)", got)
	}
	if got := waves.Span([]string{"phase_1", "phase_4"}); got != 0 {
		t.Errorf("Span with a worker never run = %s, want 0", got)
	}
}

func TestParseSkipsOtherLines(t *testing.T) {
	lines := []string{
		`{"ts":"2026-11-24T10:00:00Z","event":"init"}`,
		`{"ts":"2026-11-24T10:00:01Z","event":"agent_launch","session":"s","agent_type":"x","worker_id":"w"}`,
		`not json "agent_`,
		`{"ts":"2026-11-24T10:00:02Z","event":"transition","from":"a","to":"b"}`,
		`{"ts":"2026-11-24T10:00:03Z","event":"worker","worker_id":"w","status":"completed"}`,
		`{"ts":"2026-11-24T10:00:04Z","event":"agent_stop","session":"s","agent_id":"1","agent_type":"x"}`,
		`{"ts":"2026-11-24T10:00:04Z","event":"rewind","from":"b","to":"a"}`,
		`{"ts":"2026-11-24T10:00:04Z","event":"pause","state":"a"}`,
		`{"ts":"2026-11-24T10:00:05Z","event":"agent_st`,
	}
	got := Parse([]byte(strings.Join(lines, "\n")))
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Event)
	}
	if fmt.Sprint(kinds) != "[agent_launch transition agent_stop rewind]" {
		t.Errorf("Parse kept %v", kinds)
	}
}

func TestEntries(t *testing.T) {
	const s = "sess"
	evs := []Event{
		ev(1, Launch, s, "", "research-sub-supervisor", ""),
		ev(2, Start, s, "sup", "research-sub-supervisor", ""),
		ev(3, Launch, s, "", "research-specialist", "research_1"),
		ev(3, Launch, s, "", "research-specialist", "research_2"),
		ev(4, Start, s, "w1", "research-specialist", ""),
		ev(4, Start, s, "w2", "research-specialist", ""),
		ev(20, Stop, s, "w1", "research-specialist", "research_1"),
	}
	var got []string
	for _, e := range Fold(evs, s).Entries(t0.Add(30*time.Second), time.Hour) {
		got = append(got, fmt.Sprintf("%s/%s:%s:%s", e.AgentType, e.WorkerID, e.Status, e.Took))
	}
	want := "[research-sub-supervisor/:running:0s research-specialist/research_1:stopped:17s research-specialist/research_2:running:0s]"
	if fmt.Sprint(got) != want {
		t.Errorf("Entries = %v\nwant %s", got, want)
	}
}

// generic is an event of an agent launched as general-purpose.
func generic(e Event) Event { e.Generic = true; return e }

// TestGenericStart: a general-purpose agent's start names no agent; it
// answers the oldest generic launch of the state not yet started.
func TestGenericStart(t *testing.T) {
	const s, rs, sup = "sess", "research-specialist", "sub-supervisor"
	tests := []struct {
		name   string
		events []Event
		want   string
	}{
		{"no launch", nil, ""},
		{"a launch by its own type", []Event{ev(1, Launch, s, "", rs, "research_1")}, ""},
		{"one generic launch", []Event{generic(ev(1, Launch, s, "", rs, "research_1"))}, rs},
		{"its start seen", []Event{generic(ev(1, Launch, s, "", rs, "research_1")), generic(ev(2, Start, s, "a1", rs, ""))}, ""},
		{"two launched, one started", []Event{generic(ev(1, Launch, s, "", sup, "")), generic(ev(1, Launch, s, "", rs, "research_1")),
			generic(ev(2, Start, s, "a1", sup, ""))}, rs},
		{"launched in an earlier state", []Event{generic(ev(1, Launch, s, "", rs, "research_1")), {TS: t0.Add(3 * time.Second), Event: "transition"}}, ""},
	}
	for _, tt := range tests {
		if got := Fold(tt.events, s).GenericStart(); got != tt.want {
			t.Errorf("%s: GenericStart() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestBound: the state an agent started in is the current one until a
// transition or rewind.
func TestBound(t *testing.T) {
	const s = "sess"
	start := ev(1, Start, s, "sup1", "sub-supervisor", "")
	for _, tt := range []struct {
		name           string
		events         []Event
		found, current bool
	}{
		{"never started", []Event{ev(1, Start, s, "other", "x", "")}, false, false},
		{"started in this state", []Event{{Event: "transition"}, start}, true, true},
		{"started before a transition", []Event{start, {Event: "transition"}}, true, false},
		{"started before a rewind", []Event{start, {Event: "rewind"}}, true, false},
	} {
		if found, current := Bound(tt.events, "sup1"); found != tt.found || current != tt.current {
			t.Errorf("%s: Bound = %v, %v; want %v, %v", tt.name, found, current, tt.found, tt.current)
		}
	}
}

// TestStartsOf: every agent the session saw start, across states, once,
// in the order of their last starts; no other session's, no start
// without an id.
func TestStartsOf(t *testing.T) {
	const s = "sess"
	evs := []Event{
		ev(1, Start, s, "a1", "research-specialist", ""),
		ev(2, Start, "other", "b1", "research-specialist", ""),
		{Event: "transition"},
		ev(3, Start, s, "a2", "plan-architect", "plan_1"),
		ev(4, Start, s, "", "plan-architect", ""),
		ev(5, Stop, s, "a2", "plan-architect", "plan_1"),
		ev(6, Start, s, "a1", "research-specialist", "research_1"),
	}
	var got []string
	for _, e := range StartsOf(evs, s) {
		got = append(got, e.AgentID+":"+e.WorkerID)
	}
	if want := "a2:plan_1 a1:research_1"; strings.Join(got, " ") != want {
		t.Errorf("StartsOf = %v, want %s", got, want)
	}
}

// TestFailedLaunch: an Agent call that failed before its agent ran
// ends its worker's launch (nothing will be waited for) and says so; a
// worker's launches are counted.
func TestFailedLaunch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	evs := []Event{
		{TS: at(0), Event: "transition"},
		{TS: at(1), Event: Launch, Session: "s", AgentType: "impl", WorkerID: "phase_2"},
		{TS: at(1), Event: Launch, Session: "s", AgentType: "impl", WorkerID: "phase_3"},
		{TS: at(2), Event: Failed, Session: "s", AgentType: "impl", WorkerID: "phase_3"},
		{TS: at(2), Event: Start, Session: "s", AgentType: "impl", AgentID: "a1"},
	}
	r := Fold(evs, "s")
	if st, w := r.Worker("phase_3", at(3), time.Hour); st != Stopped || !w.NeverStarted || w.Launches != 1 {
		t.Errorf("phase_3: %v %+v, want stopped, never started, launched once", st, w)
	}
	if st, _ := r.Worker("phase_2", at(3), time.Hour); st != Running {
		t.Errorf("phase_2: %v, want running (its agent started, no stop yet)", st)
	}
	if r.AnyRunning(at(3), time.Hour, "impl") != true {
		t.Errorf("no impl agent running")
	}
	r = Fold(append(evs, Event{TS: at(4), Event: Launch, Session: "s", AgentType: "impl", WorkerID: "phase_3"}), "s")
	if st, w := r.Worker("phase_3", at(5), time.Hour); st != Running || w.NeverStarted || w.Launches != 2 {
		t.Errorf("phase_3 launched again: %v %+v, want running, launched twice", st, w)
	}
}
