package supervisor

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestParseRecords(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		code     int
		msg      string
	}{
		{name: "seed shape", in: `[{"worker_id":"w1","topic":"t","status":"completed","output_path":"/r.md","duration_ms":12000,"metadata":{"title":"T","summary":"s","key_findings":["f"],"extra":1}}]`, n: 1},
		{name: "all statuses", in: `[{"worker_id":"a","status":"completed"},{"worker_id":"b","status":"failed","error":"x"},{"worker_id":"c","status":"pending"},{"worker_id":"d","status":"running"}]`, n: 4},
		{name: "null metadata", in: `[{"worker_id":"a","status":"completed","metadata":null}]`, n: 1},
		{name: "empty", in: `[]`, n: 0},
		{name: "object not array", in: `{"worker_id":"a","status":"completed"}`, code: fail.Invalid, msg: "JSON array"},
		{name: "missing worker_id", in: `[{"status":"completed"}]`, code: fail.Invalid, msg: "worker_id"},
		{name: "blank worker_id", in: `[{"worker_id":"  ","status":"completed"}]`, code: fail.Invalid, msg: "worker_id"},
		{name: "newline in worker_id", in: `[{"worker_id":"a\nb","status":"completed"}]`, code: fail.Invalid, msg: "one line"},
		{name: "bad status", in: `[{"worker_id":"a","status":"done"}]`, code: fail.Invalid, msg: "completed, failed, pending, running"},
		{name: "unknown field", in: `[{"worker_id":"a","status":"completed","duration":5}]`, code: fail.Invalid, msg: "duration"},
		{name: "negative duration", in: `[{"worker_id":"a","status":"completed","duration_ms":-1}]`, code: fail.Invalid, msg: "duration_ms -1"},
		{name: "absurd duration", in: `[{"worker_id":"a","status":"completed","duration_ms":9223372036854775807}]`, code: fail.Invalid, msg: "not within"},
		{name: "metadata not object", in: `[{"worker_id":"a","status":"completed","metadata":[1]}]`, code: fail.Invalid, msg: "object"},
		{name: "metadata wrong type", in: `[{"worker_id":"a","status":"completed","metadata":{"summary":5}}]`, code: fail.Invalid, msg: "metadata"},
		{name: "metadata impossible counts", in: `[{"worker_id":"a","status":"completed","metadata":{"total_tests":1,"tests_passed":2}}]`, code: fail.Invalid, msg: "exceed"},
		{name: "duplicate id", in: `[{"worker_id":"a","status":"completed"},{"worker_id":"a","status":"failed"}]`, code: fail.Invalid, msg: "twice"},
		{name: "trailing data", in: `[] []`, code: fail.Invalid},
		{name: "not json", in: `REPORT_CREATED: x`, code: fail.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := ParseRecords([]byte(tt.in))
			wantCode(t, err, tt.code)
			if err == nil && len(recs) != tt.n {
				t.Errorf("%d records, want %d", len(recs), tt.n)
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q should mention %q", err, tt.msg)
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	r, err := ParseRecord([]byte(`{"worker_id":"w","track":"frontend","status":"completed","files_modified":["a.go"]}`))
	if err != nil || r.Label() != "frontend" || r.FilesModified[0] != "a.go" {
		t.Errorf("%+v %v", r, err)
	}
	_, err = ParseRecord([]byte(`[{"worker_id":"w","status":"completed"}]`))
	wantCode(t, err, fail.Invalid)
}

func ids(t *testing.T, workers []byte) []string {
	t.Helper()
	recs, err := ParseRecords(workers)
	if err != nil {
		t.Fatalf("upserted workers must parse: %v\n%s", err, workers)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.WorkerID+"="+r.Status)
	}
	return out
}

func TestUpsert(t *testing.T) {
	w, err := upsert(nil, Record{WorkerID: "a", Status: checkpoint.WorkerPending}, t0)
	if err != nil {
		t.Fatal(err)
	}
	w, _ = upsert(w, Record{WorkerID: "b", Status: checkpoint.WorkerPending}, t0)
	w, _ = upsert(w, Record{WorkerID: "a", Status: checkpoint.WorkerCompleted, OutputPath: "/r.md"}, t0)
	if got := ids(t, w); !reflect.DeepEqual(got, []string{"a=completed", "b=pending"}) {
		t.Errorf("got %v", got)
	}
	// Other elements are kept byte for byte, unknown fields included.
	w, err = upsert([]byte(`[{"worker_id":"x","status":"completed","note":"kept"}]`), Record{WorkerID: "y", Status: checkpoint.WorkerRunning}, t0)
	if err != nil || !strings.Contains(string(w), `"note":"kept"`) {
		t.Errorf("%s %v", w, err)
	}
	// A duplicate left by a hand edit is folded into the upserted record.
	w, _ = upsert([]byte(`[{"worker_id":"a","status":"pending"},{"worker_id":"a","status":"running"}]`), Record{WorkerID: "a", Status: checkpoint.WorkerFailed, Error: "e"}, t0)
	if got := ids(t, w); !reflect.DeepEqual(got, []string{"a=failed"}) {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{`{}`, `[1]`, `[{"worker_id":5}]`, `nope`} {
		_, err := upsert([]byte(bad), Record{WorkerID: "a", Status: checkpoint.WorkerPending}, t0)
		wantCode(t, err, fail.Invalid)
	}
	_, err = upsert([]byte(`null`), Record{WorkerID: "", Status: checkpoint.WorkerPending}, t0)
	wantCode(t, err, fail.Invalid)
}

// Eight workers recording at the same moment: UpsertTx serialises them
// with the workflow lock (simulated by the mutex); whatever order they win
// the lock in, each record is there exactly once, and a later update of the
// same worker replaces its earlier record.
func TestUpsertEightConcurrentWorkers(t *testing.T) {
	for trial := 0; trial < 20; trial++ {
		var (
			mu     sync.Mutex
			stored []byte
			wg     sync.WaitGroup
			errs   = make(chan error, 16)
		)
		record := func(r Record) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			next, err := upsert(stored, r, t0)
			if err != nil {
				errs <- err
				return
			}
			stored = next
		}
		for i := rand.Perm(8); len(i) > 0; i = i[1:] {
			wg.Add(1)
			go record(Record{WorkerID: fmt.Sprintf("worker_%d", i[0]), Status: checkpoint.WorkerCompleted, DurationMs: int64(i[0])})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		recs, err := ParseRecords(stored)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 8 {
			t.Fatalf("%d records, want 8: %s", len(recs), stored)
		}
		seen := map[string]int{}
		for _, r := range recs {
			seen[r.WorkerID]++
		}
		for i := 0; i < 8; i++ {
			if n := seen[fmt.Sprintf("worker_%d", i)]; n != 1 {
				t.Fatalf("worker_%d recorded %d times", i, n)
			}
		}
	}
}

func TestStatus(t *testing.T) {
	workers := []Record{
		{WorkerID: "a", Status: checkpoint.WorkerCompleted},
		{WorkerID: "b", Status: checkpoint.WorkerFailed},
		{WorkerID: "c", Status: checkpoint.WorkerRunning},
		{WorkerID: "d", Status: checkpoint.WorkerPending},
	}
	got := progressOf(workers, []string{"a", "e", "c", "e"})
	want := Progress{Completed: []string{"a"}, Failed: []string{"b"}, Pending: []string{"c", "d", "e"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	b, _ := json.Marshal(progressOf(nil, nil))
	if string(b) != `{"completed":[],"failed":[],"pending":[]}` {
		t.Errorf("empty lists print as [], not null: %s", b)
	}
}

func TestShouldSupervise(t *testing.T) {
	tests := []struct {
		kind Kind
		c    Counts
		want bool
	}{
		{Research, Counts{Topics: 3}, false},
		{Research, Counts{Topics: 4}, true},
		{Research, Counts{Tests: 100}, false},
		{Implementation, Counts{Domains: 2, Complexity: 9}, false},
		{Implementation, Counts{Domains: 3}, true},
		{Implementation, Counts{Complexity: 10}, true},
		{Testing, Counts{Tests: 19, TestTypes: 1}, false},
		{Testing, Counts{Tests: 20}, true},
		{Testing, Counts{TestTypes: 2}, true},
	}
	for _, tt := range tests {
		got, err := ShouldSupervise(tt.kind, tt.c)
		if err != nil || got != tt.want {
			t.Errorf("ShouldSupervise(%s, %+v) = %v, %v; want %v", tt.kind, tt.c, got, err, tt.want)
		}
	}
	_, err := ShouldSupervise(Research, Counts{Topics: -1})
	wantCode(t, err, fail.Usage)
	_, err = ShouldSupervise("docs", Counts{})
	wantCode(t, err, fail.Usage)
	for kind, want := range map[Kind][]string{Research: {"topics"}, Implementation: {"domains", "complexity"},
		Testing: {"tests", "test-types"}, "docs": nil} {
		if got := CountNames(kind); !reflect.DeepEqual(got, want) {
			t.Errorf("CountNames(%s) = %q, want %q", kind, got, want)
		}
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"research_supervisor", true},
		{"a", true},
		{"R-2_x", true},
		{"a" + strings.Repeat("b", 63), true},
		{"a" + strings.Repeat("b", 64), false},
		{"", false},
		{"0", false},
		{"_a", false},
		{"a.b", false},
		{"a b", false},
		{"a\n", false},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v, want ok %t", tt.name, err, tt.ok)
		}
		if err != nil && fail.Code(err) != fail.Usage {
			t.Errorf("CheckName(%q): exit %d, want usage", tt.name, fail.Code(err))
		}
	}
}

func TestToRun(t *testing.T) {
	tests := []struct {
		p    Progress
		want []string
	}{
		{Progress{}, []string{}},
		{Progress{Completed: []string{"a"}}, []string{}},
		{Progress{Failed: []string{"b", "c"}, Pending: []string{"d"}}, []string{"b", "c", "d"}},
		{Progress{Pending: []string{"d"}}, []string{"d"}},
	}
	for _, tt := range tests {
		if got := tt.p.ToRun(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v.ToRun() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// TestUpsertMeasuresDuration: a worker recorded running and then ended is
// given the time between as its duration, unless it brought its own.
func TestUpsertMeasuresDuration(t *testing.T) {
	start := t0.Format(time.RFC3339Nano)
	tests := []struct {
		name      string
		stored    string
		rec       Record
		wantMs    int64
		wantStart string
	}{
		{"running is stamped", ``, Record{WorkerID: "a", Status: checkpoint.WorkerRunning}, 0, start},
		{"in_progress is stamped", ``, Record{WorkerID: "a", Status: checkpoint.WorkerInProgress}, 0, start},
		{"running again keeps the first start", `[{"worker_id":"a","status":"running","started_at":"2026-11-24T09:59:00Z"}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerRunning}, 0, "2026-11-24T09:59:00Z"},
		{"ended after running", `[{"worker_id":"a","status":"in_progress","started_at":"2026-11-24T09:59:58.5Z"}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerCompleted}, 1500, "2026-11-24T09:59:58.5Z"},
		{"a failure is timed too", `[{"worker_id":"a","status":"running","started_at":"2026-11-24T09:59:00Z"}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerFailed, Error: "e"}, 60000, "2026-11-24T09:59:00Z"},
		{"its own duration wins", `[{"worker_id":"a","status":"running","started_at":"2026-11-24T09:59:00Z"}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerCompleted, DurationMs: 7}, 7, "2026-11-24T09:59:00Z"},
		{"its own start", ``, Record{WorkerID: "a", Status: checkpoint.WorkerCompleted, StartedAt: "2026-11-24T09:59:59Z"}, 1000, "2026-11-24T09:59:59Z"},
		{"never recorded running", `[{"worker_id":"a","status":"pending"}]`, Record{WorkerID: "a", Status: checkpoint.WorkerCompleted}, 0, ""},
		{"a finished run is not a start", `[{"worker_id":"a","status":"completed","started_at":"2026-11-24T09:00:00Z","duration_ms":5}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerCompleted}, 0, ""},
		{"a clock that went back", `[{"worker_id":"a","status":"running","started_at":"2026-11-24T11:00:00Z"}]`,
			Record{WorkerID: "a", Status: checkpoint.WorkerCompleted}, 0, "2026-11-24T11:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := upsert([]byte(tt.stored), tt.rec, t0)
			if err != nil {
				t.Fatal(err)
			}
			var got []Record
			if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 {
				t.Fatalf("%s: %v", out, err)
			}
			if got[0].DurationMs != tt.wantMs || got[0].StartedAt != tt.wantStart {
				t.Errorf("duration_ms %d started_at %q, want %d %q", got[0].DurationMs, got[0].StartedAt, tt.wantMs, tt.wantStart)
			}
		})
	}
	if _, err := ParseRecord([]byte(`{"worker_id":"a","status":"running","started_at":"yesterday"}`)); err == nil {
		t.Error("started_at that is no time: want it refused")
	}
}
