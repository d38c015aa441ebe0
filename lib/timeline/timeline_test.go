package timeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/usage"
)

var t0 = time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)

// log writes events.jsonl: each line's "at" is seconds after t0.
func log(lines ...map[string]any) []byte {
	var b strings.Builder
	for _, l := range lines {
		m := map[string]any{"ts": t0.Add(time.Duration(l["at"].(float64) * float64(time.Second))).Format(time.RFC3339Nano)}
		for k, v := range l {
			if k != "at" {
				m[k] = v
			}
		}
		j, _ := json.Marshal(m)
		b.Write(append(j, '\n'))
	}
	return []byte(b.String())
}

func ev(at float64, kind string, kv ...any) map[string]any {
	m := map[string]any{"at": at, "event": kind}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func tok(n int64) map[string]any {
	return map[string]any{"input_tokens": n, "output_tokens": 2 * n, "cache_read_tokens": 10 * n, "cache_write_tokens": 3 * n}
}

// worker is one worker's run: launch, start, stop, usage, record.
func worker(from, to float64, id, kind, worker, status string, n int64) []map[string]any {
	return []map[string]any{
		ev(from, "agent_launch", "session", "s", "agent_type", kind, "worker_id", worker),
		ev(from+0.1, "agent_start", "session", "s", "agent_id", id, "agent_type", kind, "transcript", "/t/"+id),
		ev(to, "agent_stop", "session", "s", "agent_id", id, "agent_type", kind, "worker_id", worker),
		ev(to+0.1, usage.AgentEvent, "session", "s", "agent_id", id, "agent_type", kind, "worker_id", worker, "model", "m1", "usage", tok(n), "requests", 3, "tool_uses", 4, "duration_ms", (to-from)*1000, "status", "completed"),
		ev(to+0.2, "worker", "state", "x", "worker_id", worker, "status", status),
	}
}

func run(t *testing.T, status string, now float64, lines ...[]map[string]any) Timeline {
	t.Helper()
	var all []map[string]any
	for _, l := range lines {
		all = append(all, l...)
	}
	doc := fmt.Sprintf(`{"command":"coordinate","status":%q,"workflow_description":"d","phase_data":{"implement":{"partial_failures":["impl_2"]}},`+
		`"supervisor_state":{"s":{"workers":[{"worker_id":"r1","status":"completed","output_path":"specs/r1.md"},{"worker_id":"impl_2","status":"failed","error":"no report"}]}},`+
		`"rewinds":[{"supervisor_state":{"s":{"workers":[{"worker_id":"t1","status":"completed","output_path":"specs/t1.md"}]}}}]}`, status)
	return Build(Input{ID: "wf", Checkpoint: []byte(doc), Events: log(all...), Initial: "initialize", Now: t0.Add(time.Duration(now * float64(time.Second))), StuckAfter: time.Hour})
}

func TestBuild(t *testing.T) {
	tl := run(t, "complete", 500,
		[]map[string]any{ev(0, "init"),
			// The classifier, seen only by its usage, before the workflow existed.
			ev(2, usage.AgentEvent, "session", "s", "agent_id", "c1", "agent_type", "workflow-classifier", "model", "m2", "usage", tok(1), "requests", 2, "duration_ms", 5000, "status", "completed"),
			ev(3, "transition", "from", "initialize", "to", "research")},
		worker(4, 40, "a1", "research-specialist", "r1", "completed", 10),
		worker(5, 30, "a2", "research-specialist", "r2", "completed", 20),
		worker(31, 50, "a3", "research-specialist", "r3", "completed", 30), // in the lane r2 left, a second wave
		[]map[string]any{ev(60, "transition", "from", "research", "to", "implement"),
			ev(61, "gate", "state", "implement", "message", "Approve"), ev(90, "approve", "state", "implement", "by", "ann")},
		worker(91, 120, "a4", "implementation-executor", "impl_2", "failed", 5),
		worker(121, 150, "a5", "implementation-executor", "impl_2", "completed", 6), // run again
		[]map[string]any{ev(151, "transition", "from", "implement", "to", "test")},
		worker(152, 160, "a6", "test-specialist", "t1", "completed", 7),
		[]map[string]any{ev(161, "error", "state", "test", "error", "2 failed"), ev(162, "retry", "state", "test", "retry", 1, "max", 2),
			ev(170, "rewind", "from", "test", "to", "test", "states", []string{"test"}, "reason", "bad fixture", "by", "ann")},
		worker(171, 180, "a7", "test-specialist", "t1", "completed", 8),
		[]map[string]any{ev(200, usage.MainEvent, "session", "s", "state", "research", "model", "m1", "usage", tok(100), "requests", 9),
			ev(201, usage.MainEvent, "session", "s", "state", "test", "model", "m1", "usage", tok(50), "requests", 4),
			ev(210, "finish", "state", "test", "status", "complete")},
	)
	var got []string
	for _, a := range tl.Agents {
		got = append(got, fmt.Sprintf("%s %s %s %s lane%d wave%d try%d rewound=%v %v", a.ID, a.Worker, a.State, a.Status, a.Lane, a.Wave, a.Attempt, a.Rewound, a.Usage.Total()))
	}
	want := []string{
		"c1  initialize stopped lane0 wave1 try0 rewound=false 16",
		"a1 r1 research done lane0 wave1 try1 rewound=false 160",
		"a2 r2 research done lane1 wave1 try1 rewound=false 320",
		"a3 r3 research done lane1 wave2 try1 rewound=false 480",
		"a4 impl_2 implement failed lane0 wave1 try1 rewound=false 80",
		"a5 impl_2 implement done lane0 wave2 try2 rewound=false 96",
		"a6 t1 test done lane0 wave1 try1 rewound=true 112",
		"a7 t1 test done lane0 wave1 try2 rewound=false 128",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("agents:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !tl.Start.Equal(t0.Add(-3*time.Second)) || !tl.End.Equal(t0.Add(210*time.Second)) || tl.Active || tl.Lanes != 2 {
		t.Errorf("start %v end %v active %v lanes %d", tl.Start, tl.End, tl.Active, tl.Lanes)
	}
	var states []string
	for _, s := range tl.States {
		states = append(states, fmt.Sprintf("%s/%v/r%v/f%v/p%v", s.Name, s.End.Sub(s.Start).Seconds(), s.Rewound, s.Failed, s.Partial))
	}
	if got := strings.Join(states, " "); got != "initialize/3/rfalse/ffalse/pfalse research/57/rfalse/ffalse/pfalse implement/91/rfalse/ffalse/ptrue test/19/rtrue/ftrue/pfalse test/40/rfalse/ffalse/pfalse" {
		t.Errorf("states %s", got)
	}
	if len(tl.Waits) != 1 || tl.Waits[0].End.Sub(tl.Waits[0].Start) != 29*time.Second || tl.Waits[0].Outcome != "approve" || tl.Waits[0].By != "ann" {
		t.Errorf("waits %+v", tl.Waits)
	}
	var marks []string
	for _, m := range tl.Marks {
		marks = append(marks, m.Kind+":"+m.Text)
	}
	if got := strings.Join(marks, ", "); got != "error:2 failed, retry:retry 1 of 2, rewind:test → test: bad fixture" {
		t.Errorf("marks %s", got)
	}
	if tl.Agents[1].Artifact != "specs/r1.md" || tl.Agents[6].Artifact != "specs/t1.md" || tl.Agents[4].Error != "no report" {
		t.Errorf("artifacts and errors from the records: %+v", tl.Agents)
	}
	var spent []string
	for _, s := range tl.Spent() {
		spent = append(spent, fmt.Sprintf("%s:%d", s.State, s.Usage.Total()))
	}
	// The rewound test run still counts: thrown-away work was spent.
	if got := strings.Join(spent, " "); got != "initialize:16 research:2560 implement:176 test:1040" {
		t.Errorf("spent per state %s", got)
	}
	if tl.Total().Total() != 16+2560+176+1040 {
		t.Errorf("total %d", tl.Total().Total())
	}
	prices := &usage.Prices{Currency: "EUR", PerM: map[string]usage.Rate{"m1": {Input: 1e6}}}
	perState, total, ok := tl.Cost(prices)
	if ok || total != 10+20+30+5+6+7+8+100+50 || perState["test"] != 65 {
		t.Errorf("cost: %v %v %v (m2 has no price)", perState, total, ok)
	}
	d := tl.Document(prices)
	if d.Tokens.Total != tl.Total().Total() || *d.Cost != total || *d.CostComplete || d.Currency != "EUR" || len(d.Agents) != 8 || d.Agents[0].Tokens == nil || d.Ended == nil {
		t.Errorf("document %+v", d)
	}
}

// A running workflow: agents at work now, stuck past the bound, and a
// workflow that ended with an agent never seen stopping.
func TestStatuses(t *testing.T) {
	start := []map[string]any{ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "research"),
		ev(2, "agent_launch", "session", "s", "agent_type", "r", "worker_id", "w1"),
		ev(2.5, "agent_start", "session", "s", "agent_id", "a1", "agent_type", "r", "transcript", "/t/a1.jsonl")}
	tl := run(t, "in_progress", 60, start)
	if a := tl.Agents[0]; a.Status != Running || !a.End.IsZero() || a.Transcript != "/t/a1.jsonl" || !tl.States[1].Current {
		t.Errorf("running: %+v", a)
	}
	if a := run(t, "in_progress", 7200, start).Agents[0]; a.Status != Stuck {
		t.Errorf("after two hours: %s", a.Status)
	}
	if a := run(t, "cancelled", 60, start, []map[string]any{ev(30, "cancel", "state", "research", "by", "ann"), ev(30, "finish", "state", "research", "status", "cancelled")}).Agents[0]; a.Status != Lost || !a.End.Equal(t0.Add(30*time.Second)) {
		t.Errorf("cancelled: %+v", a)
	}
}

// TestSettle: an agent's status when its worker recorded none.
func TestSettle(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name          string
		agent         Agent
		active        bool
		stuckAfter    time.Duration
		status        string
		endsAtTheRuns bool
	}{
		{"recorded", Agent{Status: Done, Start: t0}, true, time.Minute, Done, false},
		{"stopped", Agent{Start: t0, End: t0.Add(time.Second)}, true, time.Minute, Stopped, false},
		{"over", Agent{Start: t0}, false, time.Minute, Lost, true},
		{"stuck", Agent{Start: t0}, true, time.Minute, Stuck, false},
		{"no bound", Agent{Start: t0}, true, 0, Running, false},
		{"running", Agent{Start: now.Add(-time.Second)}, true, time.Minute, Running, false},
	} {
		b := builder{t: &Timeline{Active: tc.active, End: now}, in: Input{Now: now, StuckAfter: tc.stuckAfter}}
		a := tc.agent
		b.settle(&a)
		if a.Status != tc.status || a.End.Equal(now) != tc.endsAtTheRuns {
			t.Errorf("%s: %s, ends %v; want %s", tc.name, a.Status, a.End, tc.status)
		}
	}
}

// TestStartWithoutEvents: a run whose log has no dated event starts when
// its checkpoint was created, else at its end; never at the zero time,
// which made its span centuries long.
func TestStartWithoutEvents(t *testing.T) {
	now := t0.Add(time.Hour)
	for created, want := range map[string]time.Time{
		`"created_at": "2026-04-01T10:00:00Z", `: time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC),
		``:                                       now,
		`"created_at": "yesterday", `:            now,
		`"created_at": "2999-01-01T00:00:00Z", `: now,
	} {
		tl := Build(Input{ID: "w", Checkpoint: []byte(`{` + created + `"status": "in_progress"}`), Events: []byte("torn\n"), Initial: "initialize", Now: now})
		if !tl.Start.Equal(want) || !tl.End.Equal(now) {
			t.Errorf("%s: %s to %s, want %s to %s", created, tl.Start, tl.End, want, now)
		}
	}
}

// TestRetryRewindKeepsItsState: a retry of accepted failures (a rewind of
// kind "retry", sm.RetakeIn) keeps what the state it goes back to
// recorded: that state's agents are not taken back and keep the
// checkpoint's records; the states after it are taken back as by any
// rewind, their records in the rewind's.
func TestRetryRewindKeepsItsState(t *testing.T) {
	tl := run(t, "in_progress", 300,
		[]map[string]any{ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "implement")},
		worker(2, 20, "a1", "implementation-executor", "r1", "completed", 1),
		worker(3, 30, "a2", "implementation-executor", "impl_2", "failed", 2),
		[]map[string]any{ev(40, "transition", "from", "implement", "to", "test")},
		worker(41, 50, "a3", "test-specialist", "t1", "completed", 3),
		[]map[string]any{ev(60, "rewind", "from", "test", "to", "implement", "kind", "retry", "states", []string{"implement", "test"}, "by", "ann")},
	)
	var got []string
	for _, a := range tl.Agents {
		got = append(got, fmt.Sprintf("%s %s rewound=%v artifact=%s error=%s", a.ID, a.State, a.Rewound, a.Artifact, a.Error))
	}
	want := []string{
		"a1 implement rewound=false artifact=specs/r1.md error=",
		"a2 implement rewound=false artifact= error=no report",
		"a3 test rewound=true artifact=specs/t1.md error=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("agents:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var states []string
	for _, s := range tl.States {
		states = append(states, fmt.Sprintf("%s/r%v", s.Name, s.Rewound))
	}
	if got := strings.Join(states, " "); got != "initialize/rfalse implement/rfalse test/rtrue implement/rfalse" {
		t.Errorf("states %s", got)
	}
}

// permutations lists every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// TestParallelStartsInAnyOrder: three workers launched in one message
// whose agents start in every order, one of them writing nothing (its
// worker recorded failed). Each agent is shown under the worker its own
// stop names, with that worker's artifact and status: the order of the
// starts says nothing of which launch each answers.
func TestParallelStartsInAnyOrder(t *testing.T) {
	workers := []string{"research_1", "research_2", "research_3"}
	for _, perm := range permutations(3) {
		lines := []map[string]any{ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "research")}
		for i, w := range workers {
			lines = append(lines, ev(2+0.01*float64(i), "agent_launch", "session", "s", "agent_type", "research-specialist", "worker_id", w))
		}
		for n, i := range perm {
			lines = append(lines, ev(2.5+float64(n), "agent_start", "session", "s", "agent_id", fmt.Sprintf("a%d", i), "agent_type", "research-specialist"))
		}
		for i, w := range workers {
			at := 10 + float64(i)
			lines = append(lines, ev(at, "agent_stop", "session", "s", "agent_id", fmt.Sprintf("a%d", i), "agent_type", "research-specialist", "worker_id", w),
				ev(at+0.1, usage.AgentEvent, "session", "s", "agent_id", fmt.Sprintf("a%d", i), "agent_type", "research-specialist", "worker_id", w, "model", "m1", "usage", tok(int64(i+1)), "requests", 1, "duration_ms", 1000, "status", "completed"))
		}
		status := map[string]string{"research_1": "completed", "research_2": "failed", "research_3": "completed"}
		for _, w := range workers {
			lines = append(lines, ev(20, "worker", "state", "research", "worker_id", w, "status", status[w]))
		}
		lines = append(lines, ev(21, "transition", "from", "research", "to", "complete"))
		doc := `{"status":"complete","supervisor_state":{"s":{"workers":[` +
			`{"worker_id":"research_1","status":"completed","output_path":"r/1.md"},` +
			`{"worker_id":"research_2","status":"failed","error":"wrote no report at r/2.md"},` +
			`{"worker_id":"research_3","status":"completed","output_path":"r/3.md"}]}}}`
		tl := Build(Input{ID: "wf", Checkpoint: []byte(doc), Events: log(lines...), Initial: "initialize", Now: t0.Add(time.Hour)})
		var got []string
		for _, a := range tl.Agents {
			got = append(got, fmt.Sprintf("%s %s %s %s%s %d", a.ID, a.Worker, a.Status, a.Artifact, a.Error, a.Usage.Total()))
		}
		want := map[string]string{"a0": "a0 research_1 done r/1.md 16", "a1": "a1 research_2 failed wrote no report at r/2.md 32", "a2": "a2 research_3 done r/3.md 48"}
		var wantAll []string
		for _, i := range perm {
			wantAll = append(wantAll, want[fmt.Sprintf("a%d", i)])
		}
		if strings.Join(got, "\n") != strings.Join(wantAll, "\n") {
			t.Errorf("starts in order %v:\n%s\nwant\n%s", perm, strings.Join(got, "\n"), strings.Join(wantAll, "\n"))
		}
	}
}

// TestPairingWhileAtWork: agents at work, whose stops are not recorded
// yet. One agent started and one launch left of its kind: it is that
// launch's. Two started, none named (or one unnamed, two launches left):
// which is which is not known, and no worker is claimed, unless the
// caller read their prompts (Input.Workers). A launch whose agent was not seen starting is a bar of
// its own. A general-purpose agent is named by the type its stop gives.
func TestPairingWhileAtWork(t *testing.T) {
	base := []map[string]any{ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "research"),
		ev(2, "agent_launch", "session", "s", "agent_type", "r", "worker_id", "w1"),
		ev(2.01, "agent_launch", "session", "s", "agent_type", "r", "worker_id", "w2"),
		ev(2.02, "agent_launch", "session", "s", "agent_type", "r", "worker_id", "w3"),
		ev(3, "agent_start", "session", "s", "agent_id", "a3", "agent_type", "r"),
		ev(3.1, "agent_start", "session", "s", "agent_id", "a1", "agent_type", "r")}
	show := func(tl Timeline) string {
		var out []string
		for _, a := range tl.Agents {
			out = append(out, fmt.Sprintf("%s:%s:%s", a.ID, a.Worker, a.Status))
		}
		return strings.Join(out, " ")
	}
	build := func(workers map[string]string, more ...map[string]any) Timeline {
		return Build(Input{ID: "wf", Checkpoint: []byte(`{"status":"in_progress"}`), Events: log(append(append([]map[string]any{}, base...), more...)...),
			Initial: "initialize", Now: t0.Add(time.Minute), StuckAfter: time.Hour, Workers: workers})
	}
	for _, tc := range []struct {
		name string
		tl   Timeline
		want string
	}{
		{"two unnamed", build(nil), ":w3:running a3::running a1::running"},
		{"prompts read", build(map[string]string{"a3": "w3", "a1": "w1"}), ":w2:running a3:w3:running a1:w1:running"},
		{"one named, one left", build(nil, ev(9, "agent_stop", "session", "s", "agent_id", "a3", "agent_type", "r", "worker_id", "w2"),
			ev(9.5, "agent_start", "session", "s", "agent_id", "a2", "agent_type", "r")),
			"a3:w2:stopped a1::running a2::running"},
		{"one named, two launches left", build(map[string]string{"a3": "w3"}), ":w2:running a3:w3:running a1::running"},
	} {
		if got := show(tc.tl); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	generic := Build(Input{ID: "wf", Checkpoint: []byte(`{"status":"in_progress"}`), Initial: "initialize", Now: t0.Add(time.Minute), Events: log(
		ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "research"),
		ev(2, "agent_launch", "session", "s", "agent_type", "doc-writer", "worker_id", "d1", "generic", true),
		ev(2.01, "agent_launch", "session", "s", "agent_type", "research-specialist", "worker_id", "r1", "generic", true),
		// The start guessed its type from the first generic launch; the stop knows it from the prompt.
		ev(3, "agent_start", "session", "s", "agent_id", "g2", "agent_type", "doc-writer", "generic", true),
		ev(3.1, "agent_start", "session", "s", "agent_id", "g1", "agent_type", "research-specialist", "generic", true),
		ev(8, "agent_stop", "session", "s", "agent_id", "g2", "agent_type", "research-specialist", "worker_id", "r1"),
		ev(9, "agent_stop", "session", "s", "agent_id", "g1", "agent_type", "doc-writer", "worker_id", "d1"))})
	var got []string
	for _, a := range generic.Agents {
		got = append(got, a.ID+":"+a.Type+":"+a.Worker)
	}
	if strings.Join(got, " ") != "g2:research-specialist:r1 g1:doc-writer:d1" {
		t.Errorf("general-purpose agents: %v", got)
	}
}

// TestFinishedRunEnds: a finished run ends when it ended: at its
// sm-finish, at the transition into its terminal state (no sm-finish),
// at a cancel; its last stay (the terminal state) takes no time; and its
// duration is the same whenever it is looked at.
func TestFinishedRunEnds(t *testing.T) {
	route := []map[string]any{ev(0, "init"), ev(1, "transition", "from", "initialize", "to", "research"),
		ev(2, "agent_launch", "session", "s", "agent_type", "r", "worker_id", "w1"),
		ev(2.5, "agent_start", "session", "s", "agent_id", "a1", "agent_type", "r"),
		ev(9, "agent_stop", "session", "s", "agent_id", "a1", "agent_type", "r", "worker_id", "w1")}
	for _, tc := range []struct {
		name   string
		status string
		more   []map[string]any
		end    float64
	}{
		{"by transition", "complete", []map[string]any{ev(12, "transition", "from", "research", "to", "complete"),
			ev(14, usage.MainEvent, "session", "s", "state", "complete", "model", "m1", "usage", tok(1), "requests", 1)}, 12},
		{"by sm-finish", "complete", []map[string]any{ev(12, "finish", "state", "research", "status", "complete")}, 12},
		{"by a cancel", "cancelled", []map[string]any{ev(11, "cancel", "state", "research", "by", "ann")}, 11},
		{"no lifecycle event", "complete", nil, 9},
	} {
		var durations []int64
		for _, now := range []float64{60, 3600, 86400} {
			doc := fmt.Sprintf(`{"status":%q}`, tc.status)
			in := Input{ID: "wf", Checkpoint: []byte(doc), Initial: "initialize", Now: t0.Add(time.Duration(now) * time.Second)}
			if tc.name != "no lifecycle event" {
				in.Events = log(append(append([]map[string]any{}, route...), tc.more...)...)
			} else {
				in.Events = log(route[2:]...)
			}
			tl := Build(in)
			if !tl.End.Equal(t0.Add(time.Duration(tc.end * float64(time.Second)))) {
				t.Errorf("%s, looked at after %vs: ends %v, want +%vs", tc.name, now, tl.End.Sub(t0), tc.end)
			}
			durations = append(durations, tl.Document(nil).DurationMs)
			if last := tl.States; tc.name == "by transition" && (last[len(last)-1].Name != "complete" || !last[len(last)-1].End.Equal(last[len(last)-1].Start)) {
				t.Errorf("%s: the terminal state is a stay of %v, want none", tc.name, last[len(last)-1].End.Sub(last[len(last)-1].Start))
			}
		}
		if durations[0] != durations[1] || durations[1] != durations[2] {
			t.Errorf("%s: duration_ms %v changes with the time it is looked at", tc.name, durations)
		}
	}
}
