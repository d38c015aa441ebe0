package usage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The testdata transcripts were written by Claude Code 2.1.328 in an
// end-to-end run against the stand-in model (tests/e2e), trimmed of the
// request bodies, with each message's usage set to k, 2k, 100k and 10k
// tokens (input, output, cache read, cache write) for the k-th distinct
// message: a sum tells which messages were counted, and how often.

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// k is the usage of k messages numbered 1..n summed: k = n(n+1)/2.
func k(sum int64) Usage {
	return Usage{Input: sum, Output: 2 * sum, CacheRead: 100 * sum, CacheWrite: 10 * sum}
}

func TestScanAgent(t *testing.T) {
	a, err := ScanAgent(open(t, "agent-supervisor.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Three answers, the first in two lines (two Agent calls): counted once.
	// Ended: the time of its last answer.
	// Shell: one of its calls is Bash.
	want := Agent{Usage: k(1 + 2 + 3), Model: "stand-in", Requests: 3, ToolUses: 3, Complete: true,
		Ended: time.Date(2026, 11, 27, 7, 32, 57, 359e6, time.UTC), Shell: true}
	if a != want {
		t.Errorf("ScanAgent = %+v, want %+v", a, want)
	}
	if got := a.WithFinal(Usage{Input: 99}); got != want {
		t.Errorf("a complete transcript took the last request again: %+v", got)
	}
}

// At SubagentStop, and sometimes at PostToolUse, the agent's final answer
// is not in its transcript yet: the last request's usage from PostToolUse
// stands in for it.
func TestScanAgentUnfinished(t *testing.T) {
	a, err := ScanAgent(open(t, "agent-unfinished.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Complete || a.Requests != 1 || a.Usage != k(1) || a.Shell || !a.Ended.Equal(time.Date(2026, 11, 27, 7, 32, 55, 333e6, time.UTC)) {
		t.Fatalf("ScanAgent = %+v, want one request, not complete", a)
	}
	last := Usage{Input: 5, Output: 7}
	got := a.WithFinal(last)
	if got.Usage != k(1).Add(last) || got.Requests != 2 || !got.Complete {
		t.Errorf("WithFinal = %+v", got)
	}
}

func TestScanMainRealTranscript(t *testing.T) {
	f := open(t, "main.jsonl")
	m, err := ScanMain(f, Cursor{}, Window{}, func(time.Time) string { return "initialize" })
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Spent) != 1 || m.Spent[0] != (Spent{State: "initialize", Model: "stand-in", Usage: k(21), Requests: 6}) {
		t.Errorf("Spent = %+v, want the six main-thread answers once each", m.Spent)
	}
	var agents []string
	for _, a := range m.Agents {
		agents = append(agents, fmt.Sprintf("%s %s %d %v %v", a.Type, a.Model, a.ToolUses, a.DurationMs > 0, a.Last))
	}
	want := []string{
		"fixture:writer claude-opus-5-5 1 true {100 20 300 40}",
		"fixture:writer claude-opus-5-5 1 true {100 20 300 40}",
		"fixture:supervisor claude-opus-5-5 3 true {100 20 300 40}",
	}
	if strings.Join(agents, "\n") != strings.Join(want, "\n") {
		t.Errorf("agent results:\n%s\nwant\n%s", strings.Join(agents, "\n"), strings.Join(want, "\n"))
	}
	st, _ := f.Stat()
	if m.Next.Offset != st.Size() {
		t.Errorf("Next.Offset = %d, want the file's size %d", m.Next.Offset, st.Size())
	}
}

// transcript writes the lines of a session: "P hh:mm" a prompt, "A hh:mm
// id n" an answer (usage k(n)), "R hh:mm id" an Agent result.
func transcript(lines ...string) []byte {
	day := "2026-05-01T"
	var b bytes.Buffer
	for _, l := range lines {
		f := strings.Fields(l)
		ts := day + f[1] + ":00Z"
		var v any
		switch f[0] {
		case "P":
			v = map[string]any{"type": "user", "timestamp": ts, "isSidechain": false, "message": map[string]any{"role": "user", "content": "do it"}}
		case "A":
			var n int64
			fmt.Sscan(f[3], &n)
			v = map[string]any{"type": "assistant", "timestamp": ts, "isSidechain": false, "message": map[string]any{
				"id": f[2], "model": "m", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "x"}},
				"usage": map[string]any{"input_tokens": n, "output_tokens": 2 * n, "cache_read_input_tokens": 100 * n, "cache_creation_input_tokens": 10 * n}}}
		case "R":
			v = map[string]any{"type": "user", "timestamp": ts, "isSidechain": false,
				"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "x"}}},
				"toolUseResult": map[string]any{"agentId": f[2], "agentType": "flowstate:research-specialist", "status": "completed", "totalDurationMs": 1000}}
		}
		line, _ := json.Marshal(v)
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

func at(hm string) time.Time {
	t, _ := time.Parse(time.RFC3339, "2026-05-01T"+hm+":00Z")
	return t
}

func TestScanMainWindow(t *testing.T) {
	session := transcript(
		"P 09:00", "A 09:01 a 1", // a turn before the workflow
		"P 10:00", "A 10:01 b 2", "R 10:02 x", "A 10:05 c 3", // the turn that created it at 10:03
		"P 11:00", "A 11:01 d 4", // a later turn: it finished at 11:02
		"P 12:00", "A 12:01 e 5", "R 12:02 y", // after it finished
	)
	stateAt := func(t time.Time) string {
		if t.Before(at("10:04")) {
			return "initialize"
		}
		return "research"
	}
	tests := []struct {
		name   string
		win    Window
		spent  string
		agents string
	}{
		{"running", Window{From: at("10:03")}, "initialize:{2 4 200 20}/1 research:{12 24 1200 120}/3", "x y"},
		{"finished", Window{From: at("10:03"), Until: at("11:02")}, "initialize:{2 4 200 20}/1 research:{7 14 700 70}/2", "x"},
		{"finished before the later turn", Window{From: at("10:03"), Until: at("10:30")}, "initialize:{2 4 200 20}/1 research:{3 6 300 30}/1", "x"},
		{"open from the start", Window{}, "initialize:{3 6 300 30}/2 research:{12 24 1200 120}/3", "x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ScanMain(bytes.NewReader(session), Cursor{}, tt.win, stateAt)
			if err != nil {
				t.Fatal(err)
			}
			if got := spentString(m.Spent); got != tt.spent {
				t.Errorf("spent %s, want %s", got, tt.spent)
			}
			var ids []string
			for _, a := range m.Agents {
				ids = append(ids, a.ID)
			}
			if strings.Join(ids, " ") != tt.agents {
				t.Errorf("agents %v, want %s", ids, tt.agents)
			}
		})
	}
}

func spentString(ss []Spent) string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s:%v/%d", s.State, s.Usage, s.Requests))
	}
	return strings.Join(out, " ")
}

// A scan goes on from where the last one stopped: nothing is counted
// twice, a line still being written is left for the next scan, and a turn
// a Stop hook sent back goes on without a prompt.
func TestScanMainResumes(t *testing.T) {
	first := transcript("P 10:00", "A 10:01 a 1")
	more := transcript("A 10:02 b 2", "P 11:00", "A 11:01 c 3")
	partial := []byte(`{"type":"assistant","timestamp":"2026-05-01T11:02:00Z","message":{"id":"d","usage":{"input_tokens":1000`)
	all := append(append(append([]byte{}, first...), more...), partial...)
	state := func(time.Time) string { return "s" }
	win := Window{From: at("09:00"), Until: at("10:30")}

	m1, err := ScanMain(bytes.NewReader(first), Cursor{}, win, state)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ScanMain(bytes.NewReader(all[m1.Next.Offset:]), m1.Next, win, state)
	if err != nil {
		t.Fatal(err)
	}
	if got := spentString(m1.Spent) + " + " + spentString(m2.Spent); got != "s:{1 2 100 10}/1 + s:{2 4 200 20}/1" {
		t.Errorf("spent %s; want a then b (the turn after 10:30 is not the workflow's)", got)
	}
	if m2.Next.Offset != int64(len(first)+len(more)) {
		t.Errorf("offset %d, want %d: the torn line is read next time", m2.Next.Offset, len(first)+len(more))
	}
}

// A line longer than the reader's buffer is read whole; one past maxLine
// is skipped, and the lines after it still count.
func TestEachLineLong(t *testing.T) {
	long := `{"type":"assistant","pad":"` + strings.Repeat("x", 200<<10) + `","message":{"id":"a","usage":{"input_tokens":3}}}` + "\n"
	huge := `{"pad":"` + strings.Repeat("y", maxLine+10) + "\"}\n"
	a, err := ScanAgent(strings.NewReader(long + huge + long))
	if err != nil {
		t.Fatal(err)
	}
	if a.Requests != 1 || a.Usage.Input != 3 {
		t.Errorf("ScanAgent = %+v", a)
	}
}

func TestPastMain(t *testing.T) {
	events := strings.Join([]string{
		`{"ts":"2026-05-01T10:03:00Z","event":"init"}`,
		`{"ts":"2026-05-01T10:04:00Z","event":"transition","from":"initialize","to":"research"}`,
		`{"ts":"2026-05-01T10:05:00Z","event":"agent_usage","session":"s1","agent_id":"x"}`,
		`{"ts":"2026-05-01T10:06:00Z","event":"main_usage","session":"s1","cursor":{"offset":120,"turn_start":"2026-05-01T10:00:00Z"}}`,
		`{"ts":"2026-05-01T10:07:00Z","event":"main_usage","session":"s2","cursor":{"offset":9}}`,
		`{"ts":"2026-05-01T10:08:00Z","event":"agent_start","session":"s2","agent_id":"z"}`,
		`{"ts":"2026-05-01T10:09:00Z","event":"rewind","from":"research","to":"initialize"}`,
		`{"ts":"2026-05-01T10:10:00Z","event":"finish","state":"initialize"}`,
	}, "\n")
	p := PastMain([]byte(events), "s1", "s1", "initialize")
	if !p.Window.From.Equal(at("10:03")) || p.Cursor.Offset != 120 || !p.Last.Equal(at("10:06")) || !p.Finished.Equal(at("10:10")) || !p.Measured["x"] {
		t.Errorf("PastMain(s1) = %+v", p)
	}
	for hm, want := range map[string]string{"09:00": "initialize", "10:04": "research", "10:08": "research", "10:09": "initialize"} {
		if got := p.StateAt(at(hm)); got != want {
			t.Errorf("StateAt(%s) = %s, want %s", hm, got, want)
		}
	}
	// Another session counts from its first event in the workflow.
	if p := PastMain([]byte(events), "s2", "s1", "initialize"); !p.Window.From.Equal(at("10:07")) || p.Cursor.Offset != 9 {
		t.Errorf("PastMain(s2) = %+v", p)
	}
}

func TestPrices(t *testing.T) {
	p, err := ParseSettings([]byte(`{"prices": {"currency": "EUR", "per_million_tokens": {
		"claude-opus-5-5": {"input": 15, "output": 75, "cache_read": 1.5, "cache_write": 18.75},
		"claude-*": {"input": 1},
		"claude-haiku-*": {"input": 2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	u := Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 40_000}
	for model, want := range map[string]float64{"claude-opus-5-5": 15 + 7.5 + 3 + 0.75, "claude-haiku-5-5": 2, "claude-sonnet-5": 1} {
		if got, ok := p.Cost(model, u); !ok || got != want {
			t.Errorf("Cost(%s) = %v %v, want %v", model, got, ok, want)
		}
	}
	if _, ok := p.Cost("gpt", u); ok {
		t.Errorf("a model without a price has a cost")
	}
	if got := p.Money(12.3456); got != "12.35 EUR" {
		t.Errorf("Money = %q", got)
	}
	if p, err := ParseSettings([]byte(`{"other": 1}`)); p != nil || err != nil {
		t.Errorf("settings without prices: %v %v", p, err)
	}
	for _, bad := range []string{`{"prices": {"per_million_tokens": {"m": {"input": -1}}}}`, `{"prices": `} {
		if _, err := ParseSettings([]byte(bad)); err == nil {
			t.Errorf("ParseSettings(%s) took it", bad)
		}
	}
	var none *Prices
	if _, ok := none.Cost("m", u); ok {
		t.Errorf("no table, yet a cost")
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12345: "12.3k", 123456: "123k", 4_560_000: "4.56M", 123_400_000: "123M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestFromFields(t *testing.T) {
	u := Usage{1, 2, 3, 4}
	b, _ := json.Marshal(u)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&m)
	if got := FromFields(m); got != u {
		t.Errorf("FromFields(json.Number) = %v", got)
	}
	_ = json.Unmarshal(b, &m)
	if got := FromFields(m); got != u {
		t.Errorf("FromFields(float64) = %v", got)
	}
}
