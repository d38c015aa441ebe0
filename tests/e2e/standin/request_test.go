package standin

import (
	"encoding/json"
	"testing"
)

// A request body in the shape Claude Code 2.1.328 sends for a subagent (trimmed).
const subagentRequest = `{
  "system": [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.ddf; cc_entrypoint=sdk-cli; cc_is_subagent=true;"},
    {"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK."},
    {"type": "text", "text": "BODY\n\nMessages from the agent that launched you — your task ...\nNotes: ..."}
  ],
  "messages": [
    {"role": "user", "content": [
      {"type": "text", "text": "<system-reminder>\ngit status\n</system-reminder>"},
      {"type": "text", "text": "PROMPT"}]},
    {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/proj\n - Is a git repository: true"},
    {"role": "assistant", "content": [
      {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "x"}},
      {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "y"}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "t1", "content": "A=1", "is_error": false},
      {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "Exit code 1\nboom"}], "is_error": true}]}
  ],
  "stream": true
}`

func TestParseConversationSubagent(t *testing.T) {
	var req request
	if err := json.Unmarshal([]byte(subagentRequest), &req); err != nil {
		t.Fatal(err)
	}
	c := parseConversation(req)
	if !c.Subagent || c.Program != "You are a Claude agent, built on Anthropic's Claude Agent SDK.\nBODY" || c.Prompt != "PROMPT" || c.Cwd != "/tmp/proj" {
		t.Fatalf("conversation = %+v", c)
	}
	if len(c.Calls) != 2 || c.Calls[0].Result != "A=1" || c.Calls[0].IsError || !c.Calls[1].IsError || c.Calls[1].Result != "Exit code 1\nboom" {
		t.Errorf("calls = %+v", c.Calls)
	}
}

func TestFirstUserTextCommand(t *testing.T) {
	bs := []block{
		{Type: "text", Text: "<system-reminder>\nx\n</system-reminder>"},
		{Type: "text", Text: "<command-message>flowstate:coordinate</command-message>\n<command-name>/flowstate:coordinate</command-name>\n"},
		{Type: "text", Text: "# Coordinate\n\n```bash\nflowstate init\n```\n"},
	}
	if got := firstUserText(bs); got != "# Coordinate\n\n```bash\nflowstate init\n```" {
		t.Errorf("firstUserText = %q", got)
	}
}
