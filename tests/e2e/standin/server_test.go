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
