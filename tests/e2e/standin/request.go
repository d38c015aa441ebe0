package standin

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// request is the part of a Messages API request body the stand-in reads.
type request struct {
	System   json.RawMessage `json:"system"`
	Messages []message       `json:"messages"`
	Stream   bool            `json:"stream"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Metadata struct {
		// UserID is JSON that Claude Code 2.1.328 fills with, among
		// others, the session_id.
		UserID string `json:"user_id"`
	} `json:"metadata"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// block is any content block; which fields are set depends on Type.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// blocks decodes content that the API allows to be either a plain string or a
// list of blocks.
func blocks(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// texts joins the text of all text blocks in raw.
func texts(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolCall is one tool_use the assistant made earlier in the conversation,
// paired with its tool_result.
type toolCall struct {
	ID        string
	Name      string
	Input     json.RawMessage
	Result    string
	IsError   bool
	HasResult bool
}

// conversation is what the stand-in derives from one request.
type conversation struct {
	Subagent bool
	// Program is the text to follow: the expanded command (main thread) or the
	// agent body (subagent).
	Program string
	// Prompt is a subagent's task, the first user message; empty in the main thread.
	Prompt string
	// Cwd is the session's working directory, used to make Write paths absolute.
	Cwd   string
	Calls []toolCall
	// Feedback is every "Stop hook feedback" the main thread got after it
	// ended its turn, in order.
	Feedback []feedback
	// Summary: the request asks for the summary of a compaction.
	Summary bool
	// Compacted: the conversation was compacted; Program is then the command
	// body Claude Code re-injects, and Context the hooks' additional context.
	Compacted bool
	Context   string
	// Kept are the calls Claude Code keeps from before the compaction.
	Kept []toolCall
	// Session is the Claude Code session the request is part of.
	Session string
	// AgentFile is the agent file a subagent's prompt tells it to read
	// and follow (Drift.GeneralPurpose), "" if none; Prompt is then the
	// rest of its prompt, and Program the file's body once its first
	// call has read it. AgentName is the name the file gives.
	AgentFile string
	AgentName string
	// Workflow: a subagent a workflow script started (Claude Code frames
	// its task, which Prompt holds unframed, and gives its body before a
	// note of its own).
	Workflow bool
	// Offered are the tools the request offers.
	Offered []string
	// Notified are the numbers of calls made before each of Claude Code's
	// task notifications (a background workflow ended) in the
	// conversation.
	Notified []int
}

// offers reports whether the request offers the tool.
func (c conversation) offers(tool string) bool { return slices.Contains(c.Offered, tool) }

// notifiedSince reports whether a task notification came after the
// first n calls.
func (c conversation) notifiedSince(n int) bool {
	return slices.ContainsFunc(c.Notified, func(at int) bool { return at >= n })
}

// feedback is a Stop hook's reason, given after the first AfterCalls calls.
type feedback struct {
	AfterCalls int
	Text       string
}

// subagentMarker is in the billing header, the first system block, of every
// request a subagent makes (Claude Code 2.1.328).
const subagentMarker = "cc_is_subagent=true"

// harnessNotes starts the text Claude Code appends to an agent body in a
// subagent's system prompt; the body is what comes before it. A
// workflow script's agent gets workflowNote first.
const (
	harnessNotes = "\n\nMessages from the agent that launched you"
	workflowNote = "\n\n---\n\nNOTE: You are running inside a workflow script"
)

// taskNotification marks Claude Code's notice that a background task
// (a workflow) ended: in a user message's <system-reminder>, or in a
// message of role system.
const taskNotification = "<task-notification>"

// What Claude Code 2.1.328 says around a Stop hook's block and a
// compaction (docs/architecture.md, "Hooks").
const (
	stopFeedback   = "Stop hook feedback:"
	summaryRequest = "Respond with TEXT ONLY"
	continued      = "This session is being continued from a previous conversation"
	hookContext    = "SessionStart hook additional context: "
)

// reinjected is the command body Claude Code puts back after a
// compaction: "### Skill: NAME\nPath: ...\n\n" then the body, up to
// the next part of the system message.
var reinjected = regexp.MustCompile(`(?s)### Skill: [^\n]+\nPath: [^\n]+\n\n(.*?)(?:\n\nThe following deferred tools|\n\nAvailable agent types|\n### Skill: |$)`)

var cwdLine = regexp.MustCompile(`(?m)^ - Primary working directory: (.+)$`)

func parseConversation(req request) conversation {
	system := blocks(req.System)
	var c conversation
	if len(system) > 0 && strings.Contains(system[0].Text, subagentMarker) {
		c.Subagent = true
		var body []string
		for _, b := range system[1:] {
			body = append(body, b.Text)
		}
		c.Program, _, _ = strings.Cut(strings.Join(body, "\n"), harnessNotes)
		for _, b := range system[1:] {
			// A workflow script's agent: its body opens the block the
			// note ends.
			if before, _, ok := strings.Cut(b.Text, workflowNote); ok {
				c.Program = before
			}
		}
	}
	for _, t := range req.Tools {
		c.Offered = append(c.Offered, t.Name)
	}
	results := map[string]block{}
	firstUser := true
	var systemText []string
	for i, m := range req.Messages {
		bs := blocks(m.Content)
		switch m.Role {
		case "user":
			text := texts(m.Content)
			if firstUser {
				firstUser = false
				task := firstUserText(bs)
				switch {
				case c.Subagent:
					c.Prompt = task
					if unframed, ok := protocol.ComputedTask(task); ok {
						c.Prompt, c.Workflow = unframed, true
					}
				case strings.Contains(text, continued):
					c.Compacted = true
				default:
					c.Program = task
				}
			}
			if !c.Subagent && i == len(req.Messages)-1 && strings.Contains(text, summaryRequest) {
				c.Summary = true
			}
			if _, after, ok := strings.Cut(text, stopFeedback); ok && !c.Subagent {
				c.Feedback = append(c.Feedback, feedback{AfterCalls: len(c.Calls), Text: strings.TrimSpace(after)})
			}
			if i > 0 && strings.Contains(text, taskNotification) {
				c.Notified = append(c.Notified, len(c.Calls))
			}
			for _, b := range bs {
				if b.Type == "tool_result" {
					results[b.ToolUseID] = b
				}
			}
		case "assistant":
			for _, b := range bs {
				if b.Type == "tool_use" {
					c.Calls = append(c.Calls, toolCall{ID: b.ID, Name: b.Name, Input: b.Input})
				}
			}
		case "system":
			text := texts(m.Content)
			if strings.Contains(text, taskNotification) {
				c.Notified = append(c.Notified, len(c.Calls))
			}
			if m := cwdLine.FindStringSubmatch(text); m != nil && c.Cwd == "" {
				c.Cwd = strings.TrimSpace(m[1])
			}
			if c.Compacted && reinjected.MatchString(text) {
				// Claude Code keeps the last calls from before the
				// compaction ahead of the re-injected command; what the
				// model does now starts after it.
				c.Kept, c.Calls, c.Feedback = c.Calls, nil, nil
			}
			systemText = append(systemText, text)
		}
	}
	if c.Compacted {
		all := strings.Join(systemText, "\n")
		if m := reinjected.FindStringSubmatch(all); m != nil {
			c.Program = strings.TrimSpace(m[1])
		}
		if _, after, ok := strings.Cut(all, hookContext); ok {
			c.Context, _, _ = strings.Cut(after, "\n\n")
		}
	}
	for _, calls := range [][]toolCall{c.Calls, c.Kept} {
		for i := range calls {
			if r, ok := results[calls[i].ID]; ok {
				calls[i].HasResult = true
				calls[i].IsError = r.IsError
				calls[i].Result = texts(r.Content)
			}
		}
	}
	c.Session = gjson.Get(req.Metadata.UserID, "session_id").String()
	if c.Subagent {
		c.follow()
	}
	return c
}

// firstUserText is the task in the first user message: for a slash command the
// expanded body after the <command-message> block, otherwise all text; the
// <system-reminder> blocks Claude Code adds are never part of it.
func firstUserText(bs []block) string {
	var all, afterCommand []string
	seenCommand := false
	for _, b := range bs {
		if b.Type != "text" || strings.HasPrefix(b.Text, "<system-reminder>") {
			continue
		}
		if strings.HasPrefix(b.Text, "<command-message>") {
			seenCommand = true
			continue
		}
		all = append(all, b.Text)
		if seenCommand {
			afterCommand = append(afterCommand, b.Text)
		}
	}
	if seenCommand {
		return strings.TrimSpace(strings.Join(afterCommand, "\n"))
	}
	return strings.TrimSpace(strings.Join(all, "\n"))
}
