package standin

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestServerStreamsSSE(t *testing.T) {
	s, err := Start(Knobs{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"stream": true, "system": [{"type":"text","text":"billing"}], "messages": [{"role": "user", "content": [
		{"type":"text","text":"<command-message>p:c</command-message>\n"},
		{"type":"text","text":"` + "```bash\\nflowstate init && flowstate next\\n```" + `"}]}]}`
	resp, err := http.Post(s.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var names []string
	var input string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, "input_json_delta") {
			var ev struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			input = ev.Delta.PartialJSON
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Errorf("events = %v, want %s", names, want)
	}
	if input != `{"command":"flowstate init \u0026\u0026 flowstate next","description":"Run step 1"}` {
		t.Errorf("tool input = %s", input)
	}
	if n := s.CountBashCalls("flowstate"); n != 2 {
		t.Errorf("CountBashCalls = %d, want 2", n)
	}
	logs, _ := os.ReadDir(s.logDir)
	if len(logs) != 2 {
		t.Errorf("log files = %d, want request and reply", len(logs))
	}
}

func TestServerAnswersOtherRequestsHarmlessly(t *testing.T) {
	s, err := Start(Knobs{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{"/v1/messages/count_tokens", "/api/event_logging/batch"} {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
	}
	resp, err := http.Head(s.URL + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %v %v", resp, err)
	}
}

// TestServerSkipsOnce: one session skips the block Drift.SkipBlock aims
// at, at every replay of its conversation; no other session does.
func TestServerSkipsOnce(t *testing.T) {
	s, err := Start(Knobs{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		session, block string
		want           bool
	}{{"a", "x", true}, {"a", "x", true}, {"b", "x", false}, {"b", "y", false}} {
		if got := s.skipOnce(c.session, c.block); got != c.want {
			t.Errorf("skipOnce(%q, %q) = %v, want %v", c.session, c.block, got, c.want)
		}
	}
	if got := s.Skipped(); len(got) != 1 || got[0] != "x" {
		t.Errorf("Skipped = %q, want [x]", got)
	}
}

// TestServerPersonaOfAFollower: a general-purpose subagent that has read
// its agent file is the persona the file names (the Agent call said
// only general-purpose), and writes as that persona.
func TestServerPersonaOfAFollower(t *testing.T) {
	s, err := Start(Knobs{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prompt := followPrefix + "/plug/agents/tester.md\n\nWrite the results to: /p/tests/results.json"
	s.agentTypes[prompt] = generalPurpose
	req := map[string]any{
		"system": []map[string]string{{"type": "text", "text": "x-anthropic-billing-header: cc_is_subagent=true;"}, {"type": "text", "text": gpSystem}},
		"messages": []map[string]any{
			{"role": "user", "content": prompt},
			{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "r1", "name": "Read", "input": map[string]string{"file_path": "/plug/agents/tester.md"}}}},
			{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "r1", "content": numbered("---\nname: test-specialist\n---\nTest.\n")}}},
		},
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	e := s.Exchanges()
	if len(e) != 1 || e[0].Agent != "test-specialist" || len(e[0].Tools) != 1 || !strings.Contains(string(e[0].Tools[0].Input), "tests_failed") {
		t.Errorf("exchanges = %+v, want test-specialist writing test results", e)
	}
}
