package status

import (
	"strings"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/machine"
)

// t0 is when every workflow here starts; at(s) is s seconds later.
var t0 = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

// events renders events.jsonl lines the way the store writes them.
func events(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func ev(ts time.Time, event, rest string) string {
	line := `{"ts":"` + ts.Format(time.RFC3339Nano) + `","event":"` + event + `"`
	if rest != "" {
		line += "," + rest
	}
	return line + "}"
}

func to(seconds float64, state string) string {
	return ev(at(seconds), "transition", `"to":"`+state+`"`)
}

// checkpointDoc is a full-implementation workflow at current, having left
// completed, with extra top-level members (error_state, …) spliced in.
func checkpointDoc(status, current, completed, extra string) string {
	doc := `{"command":"coordinate","status":"` + status + `","workflow_description":"Add login",` +
		`"state_machine":{"current_state":"` + current + `","completed_states":[` + completed + `],` +
		`"workflow_config":{"scope":"full-implementation"}}`
	if extra != "" {
		doc += "," + extra
	}
	return doc + "}"
}

const header = "wf-1  coordinate · full-implementation · in_progress\nAdd login\n\n"

// TestRender renders workflows whole: every line is the view people see.
func TestRender(t *testing.T) {
	for _, c := range []struct {
		name       string
		checkpoint string
		events     string
		now        time.Time
		want       string
	}{{
		name:       "each mark, durations from events, a failing state",
		checkpoint: checkpointDoc("in_progress", "test", `"initialize","research","plan","implement"`, `"error_state":{"failed_state":"test","last_error":"TestLogin failed","retries":{"test":1}}`),
		events: events(ev(at(0), "init", ""), to(5, "research"), to(95, "plan"), to(120, "implement"), to(2*3600+300, "test"),
			ev(at(2*3600+360), "error", `"state":"test","error":"TestLogin failed"`)),
		now: at(2*3600 + 390),
		want: header +
			"✗ failing in test: TestLogin failed\n  next: once its command has stopped, see to what the error says and continue with /flowstate:workflow-resume\n" +
			"\n" +
			"  ✓ initialize  5.0s\n" +
			"  ✓ research    1m30s\n" +
			"  ✓ plan        25.0s\n" +
			"  ✓ implement   2h03m\n" +
			"  ✗ test        1m30s so far\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nerrors\n" +
			"  failing in test: TestLogin failed\n" +
			"  retries used: test 1\n" +
			"  2025-06-01 12:06:00  error in test: TestLogin failed\n",
	}, {
		name:       "a detour through debug shows where it happened",
		checkpoint: checkpointDoc("in_progress", "debug", `"initialize","research","plan","implement","test"`, `"error_state":{"failed_state":"test","last_error":"TestLogin failed","retries":{"test":1}}`),
		events: events(ev(at(0), "init", ""), to(1, "research"), to(2, "plan"), to(3, "implement"), to(4, "test"),
			ev(at(9), "retry", `"state":"test","retry":1,"max":2`), to(10, "debug")),
		now: at(12.5),
		want: header +
			"✗ recovering in debug from an error in test: TestLogin failed\n↻ 1 retry on the way (retries used: test 1)\n  next: flowstate history lists them\n" +
			"\n" +
			"  ✓ initialize  1.0s\n" +
			"  ✓ research    1.0s\n" +
			"  ✓ plan        1.0s\n" +
			"  ✓ implement   1.0s\n" +
			"  ✓ test        6.0s\n" +
			"  ▶ debug       2.5s so far\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nerrors\n" +
			"  failing in test: TestLogin failed\n" +
			"  retries used: test 1\n" +
			"  2025-06-01 10:00:09  retry 1 of 2 of test\n",
	}, {
		name:       "back in test after debug, failing again",
		checkpoint: checkpointDoc("in_progress", "test", `"initialize","research","plan","implement","test","debug"`, `"error_state":{"failed_state":"test","last_error":"still failing","retries":{"test":2}}`),
		events:     events(ev(at(0), "init", ""), to(1, "research"), to(2, "plan"), to(3, "implement"), to(4, "test"), to(10, "debug"), to(20, "test")),
		now:        at(23),
		want: header +
			"✗ failing in test: still failing\n  next: once its command has stopped, see to what the error says and continue with /flowstate:workflow-resume\n" +
			"\n" +
			"  ✓ initialize  1.0s\n" +
			"  ✓ research    1.0s\n" +
			"  ✓ plan        1.0s\n" +
			"  ✓ implement   1.0s\n" +
			"  ✗ test        9.0s so far\n" +
			"  ✓ debug       10.0s\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nerrors\n" +
			"  failing in test: still failing\n" +
			"  retries used: test 2\n",
	}, {
		name:       "back in test after debug, the fix under test",
		checkpoint: checkpointDoc("in_progress", "test", `"initialize","research","plan","implement","test","debug"`, ""),
		now:        at(1),
		want: header +
			"  ✓ initialize\n" +
			"  ✓ research\n" +
			"  ✓ plan\n" +
			"  ✓ implement\n" +
			"  ▶ test\n" +
			"  ✓ debug\n" +
			"  · document\n" +
			"  · complete\n",
	}, {
		name:       "a torn last line and damaged lines are skipped",
		checkpoint: checkpointDoc("in_progress", "implement", `"initialize","research","plan"`, ""),
		events: events(ev(at(0), "init", ""), "not json", to(4, "research"), "", `{"ts":"bad","event":"transition","to":"plan"}`,
			to(64, "plan")) + `{"ts":"2025-06-01T10:05:00Z","event":"transition","to":"implem`,
		now: at(400),
		// The transition into implement is lost with the torn line: plan
		// was never seen left, and implement never entered.
		want: header +
			"  ✓ initialize  4.0s\n" +
			"  ✓ research    1m00s\n" +
			"  ✓ plan\n" +
			"  ▶ implement\n" +
			"  · test\n" +
			"  · document\n" +
			"  · complete\n",
	}, {
		name:       "no events: no durations",
		checkpoint: checkpointDoc("in_progress", "initialize", "", ""),
		now:        at(10),
		want: header +
			"  ▶ initialize\n" +
			"  · research\n" +
			"  · plan\n" +
			"  · implement\n" +
			"  · test\n" +
			"  · document\n" +
			"  · complete\n",
	}, {
		name:       "finished: nothing runs any more",
		checkpoint: strings.Replace(checkpointDoc("complete", "complete", `"initialize","implement","test","complete"`, ""), "full-implementation", "test-and-debug", 1),
		events:     events(ev(at(0), "init", ""), to(1, "implement"), to(3, "test"), to(6, "complete")),
		now:        at(3600),
		want: "wf-1  coordinate · test-and-debug · complete\nAdd login\n\n" +
			"  ✓ initialize  1.0s\n" +
			"  ✓ implement   2.0s\n" +
			"  ✓ test        3.0s\n" +
			"  ✓ complete\n",
	}, {
		name: "agents of the current state: at work, stuck, stopped, recorded",
		checkpoint: checkpointDoc("in_progress", "research", `"initialize"`, `"session_id":"s1","supervisor_state":{"research_supervisor":{"workers":[`+
			`{"worker_id":"research_1","status":"completed"},{"worker_id":"research_2","status":"failed"}]}}`),
		events: events(ev(at(0), "init", ""), to(1, "research"),
			ev(at(2), "agent_launch", `"session":"s1","agent_type":"research-specialist","worker_id":"research_1"`),
			ev(at(2), "agent_launch", `"session":"s1","agent_type":"research-specialist","worker_id":"research_2"`),
			ev(at(2), "agent_launch", `"session":"s1","agent_type":"research-specialist","worker_id":"research_3"`),
			ev(at(2), "agent_start", `"session":"s1","agent_type":"research-specialist","agent_id":"a1"`),
			ev(at(2), "agent_start", `"session":"s1","agent_type":"research-specialist","agent_id":"a2"`),
			ev(at(2), "agent_start", `"session":"s1","agent_type":"research-specialist","agent_id":"a3"`),
			ev(at(32), "agent_stop", `"session":"s1","agent_type":"research-specialist","agent_id":"a1","worker_id":"research_1"`),
			ev(at(33), "agent_stop", `"session":"s1","agent_type":"research-specialist","agent_id":"a2","worker_id":"research_2"`),
			ev(at(100), "agent_launch", `"session":"s1","agent_type":"research-specialist","worker_id":"research_4"`),
			ev(at(100), "agent_launch", `"session":"old","agent_type":"research-specialist","worker_id":"research_9"`)),
		now: at(110),
		want: header +
			"✗ 1 worker failed: research_2\n  next: run it again with /flowstate:workflow-resume\n" +
			"\n" +
			"  ✓ initialize  1.0s\n" +
			"  ▶ research    1m49s so far\n" +
			"  · plan\n" +
			"  · implement\n" +
			"  · test\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nagents in research\n" +
			"  ✓ research-specialist research_1  done after 30.0s\n" +
			"  ✗ research-specialist research_2  failed after 31.0s\n" +
			"  ✗ research-specialist research_3  stuck: at work for 1m48s, more than 1m00s\n" +
			"  ▶ research-specialist research_4  running 10.0s\n" +
			"\nsupervisors\n" +
			"  research_supervisor  2 workers: 1 completed, 1 failed\n" +
			"    ✓ research_1  completed\n" +
			"    ✗ research_2  failed\n",
	}, {
		name: "supervisors: workers by status, label, duration, output, error",
		checkpoint: checkpointDoc("in_progress", "research", `"initialize"`, `"supervisor_state":{"research":{"workers":[`+
			`{"worker_id":"w1","topic":"Auth patterns","status":"completed","output_path":"reports/001.md","duration_ms":12300},`+
			`{"worker_id":"w2","track":"Sessions","status":"failed","error":"timed out\nafter 30s"},`+
			`{"worker_id":"w3","stage":"Tokens","track":"T","status":"running"},`+
			`{"worker_id":"w4","status":"pending"},`+
			`{"status":"pending"}]},`+
			`"implement":{"workers":[]}}`),
		now: at(1),
		want: header +
			"✗ 1 worker failed: Sessions (timed out after 30s)\n  next: run it again with /flowstate:workflow-resume\n" +
			"\n" +
			"  ✓ initialize\n" +
			"  ▶ research\n" +
			"  · plan\n" +
			"  · implement\n" +
			"  · test\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nsupervisors\n" +
			"  research  5 workers: 1 completed, 1 failed, 1 running, 2 pending\n" +
			"    ✓ Auth patterns  completed  12.3s  reports/001.md\n" +
			"    ✗ Sessions       failed  timed out after 30s\n" +
			"    ▶ T              running\n" +
			"    · w4             pending\n" +
			"    · ?              pending\n" +
			"  implement  0 workers\n",
	}, {
		name: "free text cannot draw on the terminal",
		checkpoint: `{"command":"co\u001b[2Jmmand","status":"in_progress","workflow_description":"line one\nline\ttwo\u0007\u009b31m\u0080",` +
			`"state_machine":{"current_state":"initialize","workflow_config":{"scope":"research-only"}},` +
			`"error_state":{"failed_state":"initialize","last_error":"bad\r\u001b[1Aworse"},` +
			`"supervisor_state":{"s":{"workers":[{"topic":"t\u001b]0;title\u0007","status":"failed","error":"\u007fgone"}]}}}`,
		events: events(ev(at(0), "error", `"state":"initialize","error":"e\u001bc"`)),
		now:    at(1),
		want: "wf-1  co?[2Jmmand · research-only · in_progress\n" +
			"line one line two??31m?\n\n" +
			"✗ failing in initialize: bad ?[1Aworse\n  next: once its command has stopped, see to what the error says and continue with /flowstate:workflow-resume\n" +
			"✗ 1 worker failed: t?]0;title? (?gone)\n  next: run it again with /flowstate:workflow-resume\n" +
			"\n" +
			"  ✗ initialize\n" +
			"  · research\n" +
			"\nsupervisors\n" +
			"  s  1 worker: 1 failed\n" +
			"    ✗ t?]0;title?  failed  ?gone\n" +
			"\nerrors\n" +
			"  failing in initialize: bad ?[1Aworse\n" +
			"  2025-06-01 10:00:00  error in initialize: e?c\n",
	}, {
		name:       "only the last five errors and retries, after a count of the rest",
		checkpoint: checkpointDoc("in_progress", "initialize", "", ""),
		events: events(ev(at(1), "error", `"state":"a","error":"1"`), ev(at(2), "retry", `"state":"a","retry":1,"max":3`),
			ev(at(3), "error", `"state":"a","error":"3"`), ev(at(4), "transition", `"to":"initialize"`), ev(at(5), "retry", `"state":"a","retry":2,"max":3`),
			ev(at(6), "error", `"state":"a","error":"6"`), ev(at(7), "retry", `"state":"a","retry":3,"max":3`), ev(at(8), "error", `"state":"a","error":"8"`)),
		now: at(9),
		want: header +
			"↻ 4 errors and 3 retries on the way\n  next: flowstate history lists them\n" +
			"\n" +
			"  ▶ initialize  5.0s so far\n" +
			"  · research\n" +
			"  · plan\n" +
			"  · implement\n" +
			"  · test\n" +
			"  · document\n" +
			"  · complete\n" +
			"\nerrors\n" +
			"  … 2 earlier\n" +
			"  2025-06-01 10:00:03  error in a: 3\n" +
			"  2025-06-01 10:00:05  retry 2 of 3 of a\n" +
			"  2025-06-01 10:00:06  error in a: 6\n" +
			"  2025-06-01 10:00:07  retry 3 of 3 of a\n" +
			"  2025-06-01 10:00:08  error in a: 8\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			got := Render(Input{ID: "wf-1", Checkpoint: []byte(c.checkpoint), Events: []byte(c.events), Machine: machine.Default(), Now: c.now, StuckAfter: time.Minute})
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestColour: colour only when asked for, on the id and the marks and
// errors, each span reset; without it, no escape byte at all.
func TestColour(t *testing.T) {
	in := Input{
		ID: "wf-1",
		Checkpoint: []byte(checkpointDoc("in_progress", "plan", `"initialize","research"`, `"error_state":{"failed_state":"research","last_error":"boom"},`+
			`"supervisor_state":{"research":{"workers":[{"topic":"a","status":"completed"},{"topic":"b","status":"failed","error":"x"},{"topic":"c","status":"running"},{"topic":"d"}]}}`)),
		Machine: machine.Default(),
		Now:     t0,
	}
	plain := Render(in)
	if strings.Contains(plain, "\x1b") {
		t.Errorf("escape bytes without colour:\n%q", plain)
	}
	in.Color = true
	got := Render(in)
	for _, want := range []string{
		"\x1b[1mwf-1\x1b[0m  coordinate",
		"  \x1b[32m✓\x1b[0m research\n",
		"  \x1b[33m▶\x1b[0m plan\n",
		"  \x1b[2m·\x1b[0m implement\n",
		"    \x1b[32m✓\x1b[0m a  completed\n",
		"    \x1b[31m✗\x1b[0m b  failed  \x1b[31mx\x1b[0m\n",
		"    \x1b[33m▶\x1b[0m c  running\n",
		"    \x1b[2m·\x1b[0m d",
		"  \x1b[31mfailing\x1b[0m in research: boom\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("coloured view lacks %q:\n%q", want, got)
		}
	}
	if strip := strings.NewReplacer(green, "", yellow, "", red, "", dim, "", bold, "", reset, "").Replace(got); strip != plain {
		t.Errorf("colour changed more than colour:\n%s\nwant\n%s", strip, plain)
	}
}

// TestDuration: seconds with a tenth under a minute, then minutes and
// seconds, then hours and minutes; a clock step back shows as 0s.
func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "0s",
		-1:                                    "0s", // not "-0.0s"
		0:                                     "0.0s",
		1234 * time.Millisecond:               "1.2s",
		59*time.Second + 940*time.Millisecond: "59.9s",
		time.Minute:                           "1m00s",
		59*time.Minute + 59*time.Second:       "59m59s",
		time.Hour:                             "1h00m",
		25*time.Hour + 61*time.Second:         "25h01m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
