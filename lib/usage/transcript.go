package usage

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// Claude Code 2.1.328 writes a transcript as JSON lines. An assistant line
// is one content block of a model answer:
//
//	{"type":"assistant","isSidechain":false,"timestamp":"...","message":{"id":"msg_..","model":"..",
//	 "stop_reason":"tool_use","content":[{"type":"tool_use",..}],"usage":{"input_tokens":..,
//	 "output_tokens":..,"cache_read_input_tokens":..,"cache_creation_input_tokens":..}}}
//
// An answer of several blocks is several lines with the same message id and
// usage. A user line either starts a turn (the person's prompt, a slash
// command) or carries tool results; the result of an Agent call has
// toolUseResult, the same object PostToolUse hands a hook.

// maxLine bounds one transcript line held in memory; longer lines (a
// request body Claude Code logs) are skipped, never one that holds usage.
const maxLine = 16 << 20

// MaxTranscript bounds what is read of one transcript.
const MaxTranscript = 512 << 20

// Agent is what an agent's transcript says it spent.
type Agent struct {
	Usage    Usage
	Model    string
	Requests int // model requests: distinct messages
	ToolUses int
	// Complete is true when the last message ended the agent's work (it
	// did not ask for a tool): the final answer is in the file.
	Complete bool
	// Ended is the time of the latest answer the transcript holds; zero
	// when none carries one.
	Ended time.Time
	// Shell: the agent ran shell commands (a Bash call), which can write
	// outside a worktree it was given.
	Shell bool
}

// WithFinal adds last, the usage of the agent's last request as
// PostToolUse reports it, when the transcript ends before the final
// answer: Claude Code writes that line about when the hooks run.
func (a Agent) WithFinal(last Usage) Agent {
	if a.Complete || last.Zero() {
		return a
	}
	a.Usage = a.Usage.Add(last)
	a.Requests++
	a.Complete = true
	return a
}

// ScanAgent sums an agent's transcript.
func ScanAgent(r io.Reader) (Agent, error) {
	var a Agent
	var msgs messages
	tools := map[string]bool{}
	_, err := eachLine(r, func(line []byte) {
		if lineType(line) != "assistant" {
			return
		}
		m := parseMessage(line)
		msgs.add(m)
		for _, id := range m.tools {
			tools[id] = true
		}
		a.Shell = a.Shell || m.shell
	})
	for _, m := range msgs.list {
		a.Usage = a.Usage.Add(m.usage)
		if m.model != "" {
			a.Model = m.model
		}
		if m.ts.After(a.Ended) {
			a.Ended = m.ts
		}
	}
	a.Requests, a.ToolUses = len(msgs.list), len(tools)
	if n := len(msgs.list); n > 0 {
		a.Complete = msgs.list[n-1].stop != "tool_use"
	}
	return a, err
}

// message is one model answer of a transcript.
type message struct {
	id, model, stop string
	ts              time.Time
	usage           Usage
	tools           []string // ids of its tool calls
	shell           bool     // one of them is Bash
}

func parseMessage(line []byte) message {
	m := gjson.GetBytes(line, "message")
	out := message{
		id: m.Get("id").String(), model: m.Get("model").String(), stop: m.Get("stop_reason").String(),
		ts: timestamp(line), usage: apiUsage(m.Get("usage")),
	}
	if out.model == "" || out.model == "<synthetic>" {
		out.model = gjson.GetBytes(line, "requestedModel").String()
	}
	for _, b := range m.Get("content").Array() {
		if b.Get("type").String() == "tool_use" {
			out.tools = append(out.tools, b.Get("id").String())
			out.shell = out.shell || b.Get("name").String() == "Bash"
		}
	}
	return out
}

// messages collects answers once each: the lines of one answer carry its
// usage again, the last one the final output count.
type messages struct {
	list []message
	at   map[string]int
}

func (ms *messages) add(m message) {
	if ms.at == nil {
		ms.at = map[string]int{}
	}
	if i, ok := ms.at[m.id]; ok && m.id != "" {
		m.tools = append(ms.list[i].tools, m.tools...)
		ms.list[i] = m
		return
	}
	ms.at[m.id] = len(ms.list)
	ms.list = append(ms.list, m)
}

func lineType(line []byte) string { return gjson.GetBytes(line, "type").String() }

func timestamp(line []byte) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, gjson.GetBytes(line, "timestamp").String())
	return t
}

// eachLine calls fn with every complete line of r (without its newline)
// and returns the bytes those lines took: a last line still being written
// is not read, so a later scan from there sees it whole.
func eachLine(r io.Reader, fn func(line []byte)) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var done, cur int64 // bytes of the complete lines, of the line being read
	var long []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		cur += int64(len(chunk))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping && len(long)+len(chunk) <= maxLine {
				long = append(long, chunk...)
			} else {
				skipping, long = true, nil
			}
			continue
		case err == io.EOF:
			return done, nil
		case err != nil:
			return done, err
		}
		done, cur = done+cur, 0
		line := chunk
		if long != nil {
			line = append(long, chunk...)
		}
		if !skipping {
			fn(bytes.TrimRight(line, "\r\n"))
		}
		long, skipping = nil, false
	}
}

// MaxPromptHead bounds what is read of a transcript for its prompt: its
// first line holds it, a few kilobytes.
const MaxPromptHead = 256 << 10

// Prompt is the prompt an agent was started with: the first line of its
// transcript, as Claude Code 2.1.328 writes it
// ({"type":"user","message":{"content":...}}, the content a string or
// text blocks); ok is false when head holds none. A workflow script's
// agent's prompt is the task the script computed, out of the frame
// Claude Code puts it in (protocol.ComputedTask).
func Prompt(head []byte) (prompt string, ok bool) {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	content := gjson.GetBytes(line, "message.content")
	if content.Type == gjson.String {
		if task, ok := protocol.ComputedTask(content.String()); ok {
			return task, true
		}
		return content.String(), true
	}
	text := ""
	for _, b := range content.Array() {
		if task, ok := protocol.ComputedTask(b.Get("text").String()); ok {
			return task, true
		}
		text += b.Get("text").String() + "\n"
	}
	return text, text != ""
}
