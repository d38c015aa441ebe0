package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running stand-in on 127.0.0.1. Point Claude Code at it with
// ANTHROPIC_BASE_URL=URL.
type Server struct {
	URL string

	knobs  Knobs
	logDir string
	http   *httptest.Server
	seq    atomic.Int64 // numbers requests, and so the log files

	mu sync.Mutex
	// agentTypes maps the prompt of every Agent call the stand-in made to its
	// subagent_type: a subagent's requests carry its prompt and body but not
	// its name, and the persona is chosen by name.
	agentTypes  map[string]string
	testRuns    int
	classified  int
	served      map[string]int // Messages requests received per persona ("" = main thread)
	exchanges   []Exchange
	compacted   bool                // Drift.CompactAfter has triggered its compaction
	paraphrased bool                // Drift.ParaphraseArgs has garbled its Workflow call
	bodies      map[string]string   // an agent file's body -> its name, for a workflow script's agents
	scripted    []WorkflowAgent     // the agents workflow scripts started, as their first request came
	mainBytes   int                 // the size of every main-thread request body, summed
	skipper     *string             // the session whose main thread skips a block (Drift.SkipBlock)
	skipped     []string            // the bash blocks it skipped
	strayer     *string             // the conversation whose implementer writes outside its worktree (Knobs.Stray)
	async       map[string]bool     // tool ids of Agent calls Claude Code ran in the background
	unstarted   map[string]bool     // tool ids of Agent calls that failed before their agent ran
	bash        map[string]string   // tool id -> result of every Bash call with a result
	main        map[string]toolCall // tool id -> every main-thread call with a result
	written     int                 // bytes subagents wrote with Write
	feedback    []string            // every Stop hook reason the main thread was sent back with
	contexts    []string            // every hooks' context a compacted main thread got
}

// toolIDs numbers tool_use ids across every server of the process, so
// that a test can tell the calls of one run from another's.
var toolIDs atomic.Int64

// Exchange is one answered Messages request, for assertions and reports.
type Exchange struct {
	Seq      int64
	Subagent bool
	Workflow bool   // a subagent a workflow script started
	Agent    string // persona of the subagent ("" in the main thread)
	Text     string // final text; empty when the turn made tool calls
	Tools    []ToolUse
	Usage    Usage  // the tokens the answer reported
	Prompt   string // a subagent's prompt: which agent of its persona it is
}

// ToolUse is one tool call the stand-in made.
type ToolUse struct {
	ID    string // the tool_use id the answer gave the call
	Name  string
	Input json.RawMessage
}

// Start serves the stand-in on a free loopback port. Every request body, and
// every answer, is written to logDir (created if needed).
func Start(knobs Knobs, logDir string) (*Server, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{knobs: knobs, logDir: logDir, agentTypes: map[string]string{}, served: map[string]int{}, async: map[string]bool{}, unstarted: map[string]bool{}, bash: map[string]string{}, main: map[string]toolCall{},
		bodies: map[string]string{}}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	return s, nil
}

// Close stops the server; requests still waiting (SlowDelay) end with it.
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
}

// Exchanges returns the answered Messages requests in the order answered.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// Served is how many Messages requests the persona ("" for the main thread)
// has sent so far, including ones still waiting for their answer.
func (s *Server) Served(persona string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[persona]
}

// CountBashCalls counts how often program is invoked in the Bash commands the
// stand-in ran (each command position counts, e.g. `a && program x; program y` is 2).
func (s *Server) CountBashCalls(program string) int {
	invocation := regexp.MustCompile(`(?m)(^|[\s;&|(]|\$\()` + regexp.QuoteMeta(program) + `(\s|$|;|\))`)
	n := 0
	for _, e := range s.Exchanges() {
		for _, u := range e.Tools {
			var in bashInput
			if u.Name == "Bash" && json.Unmarshal(u.Input, &in) == nil {
				n += len(invocation.FindAllString(in.Command, -1))
			}
		}
	}
	return n
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	seq := s.seq.Add(1)
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		// HEAD probes, count_tokens, telemetry: answer harmlessly.
		s.log(fmt.Sprintf("%04d-%s-%s.txt", seq, r.Method, unsafeName.ReplaceAllString(r.URL.Path, "_")), body)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			_, _ = io.WriteString(w, `{"input_tokens": 1}`)
			return
		}
		_, _ = io.WriteString(w, `{}`)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		s.log(fmt.Sprintf("%04d-bad.request.json", seq), body)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	conv := parseConversation(req)
	s.mu.Lock()
	agent := ""
	switch {
	case conv.AgentFile != "":
		agent = conv.followedPersona()
	case conv.Workflow:
		agent = s.personaOfBody(conv.Program, conv.Cwd)
	case conv.Subagent:
		agent = personaOf(s.agentTypes[strings.TrimSpace(conv.Prompt)])
	}
	s.served[agent]++
	if !conv.Subagent {
		s.mainBytes += len(body)
	}
	s.observe(conv)
	if conv.Workflow {
		s.started(conv, agent, r.Header.Get("x-claude-code-agent-id"), seq)
	}
	s.mu.Unlock()
	name := fmt.Sprintf("%04d-main", seq)
	if conv.Subagent {
		name = fmt.Sprintf("%04d-sub-%s", seq, unsafeName.ReplaceAllString(orDefault(agent, "unknown"), "_"))
	}
	s.log(name+".request.json", body)

	if agent != "" && agent == s.knobs.SlowAgent {
		select {
		case <-time.After(s.knobs.SlowDelay):
		case <-r.Context().Done():
			return
		}
	}

	t := decide(thread{Conv: conv, Agent: agent, Knobs: s.knobs, TestRun: s.nextTestRun, Classification: s.nextClassification,
		Compact: s.compactOnce, Skip: s.skipOnce, Paraphrase: s.paraphraseOnce, StrayOnce: s.strayOnce})
	u := usageOf(seq, t)
	msg := t.message(fmt.Sprintf("msg_standin_%04d", seq), func() string {
		return fmt.Sprintf("toolu_standin_%d", toolIDs.Add(1))
	}, u)
	s.record(seq, conv, agent, t, u, msg)
	reply, _ := json.MarshalIndent(msg, "", "  ")
	s.log(name+".reply.json", reply)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
		return
	}
	_ = stream(w, msg)
}

// asyncResult starts what Claude Code answers an Agent call it runs in the
// background.
const asyncResult = "Async agent launched"

// observe notes what a request shows of Claude Code's side: Agent calls
// it ran in the background, Stop hook reasons, hooks' context after a
// compaction. Callers hold s.mu.
func (s *Server) observe(c conversation) {
	for _, call := range c.Calls {
		switch {
		case call.Name == "Agent" && strings.HasPrefix(call.Result, asyncResult):
			s.async[call.ID] = true
		case call.Name == "Agent" && call.IsError:
			s.unstarted[call.ID] = true
		case call.Name == "Bash" && call.HasResult:
			s.bash[call.ID] = call.Result
		}
	}
	if c.Subagent {
		return
	}
	for _, call := range c.Calls {
		if call.HasResult {
			s.main[call.ID] = call
		}
	}
	for _, f := range c.Feedback {
		if !slices.Contains(s.feedback, f.Text) {
			s.feedback = append(s.feedback, f.Text)
		}
	}
	if c.Compacted && !slices.Contains(s.contexts, c.Context) {
		s.contexts = append(s.contexts, c.Context)
	}
}

// Drift is how this stand-in's main thread deviates from the protocol.
func (s *Server) Drift() Drift { return s.knobs.Drift }

// Unstarted reports whether the Agent call with tool_use id failed before
// its agent ran (Claude Code could not make its worktree, say).
func (s *Server) Unstarted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unstarted[id]
}

// BackgroundAgents counts the Agent calls Claude Code ran in the
// background (it answered "Async agent launched").
func (s *Server) BackgroundAgents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.async)
}

// BashResults returns the results of the Bash calls the stand-in saw, in
// no particular order.
func (s *Server) BashResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.bash))
	for _, r := range s.bash {
		out = append(out, r)
	}
	return out
}

// MainWrites returns the main thread's Write calls that have a result,
// by tool id: the result, and whether it is an error (a hook's refusal).
func (s *Server) MainWrites() map[string]ToolResult { return s.MainResults("Write") }

// MainResults returns the main thread's calls of tool that have a
// result, by tool id.
func (s *Server) MainResults(tool string) map[string]ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ToolResult{}
	for id, call := range s.main {
		if call.Name == tool {
			out[id] = ToolResult{Text: call.Result, IsError: call.IsError}
		}
	}
	return out
}

// ToolResult is what Claude Code answered a tool call.
type ToolResult struct {
	Text    string
	IsError bool
}

// StopFeedback returns the Stop hook reasons the main thread got, and
// the hooks' context after each compaction.
func (s *Server) StopFeedback() (reasons, contexts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.feedback), slices.Clone(s.contexts)
}

// skipOnce lets the first session that reaches the block Drift.SkipBlock
// aims at skip it, and only that session: each answer replays the
// conversation, so it asks again at every later turn.
func (s *Server) skipOnce(session, block string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.skipper == nil {
		s.skipper = &session
	}
	if *s.skipper != session {
		return false
	}
	if !slices.Contains(s.skipped, block) {
		s.skipped = append(s.skipped, block)
	}
	return true
}

// strayOnce lets the first conversation that asks (known by its first
// call's id) write outside its worktree, and only that one: each answer
// replays the conversation, so it asks again at every later turn.
func (s *Server) strayOnce(conversation string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.strayer == nil && conversation != "" {
		s.strayer = &conversation
	}
	return s.strayer != nil && *s.strayer == conversation
}

// Skipped returns the bash blocks the main thread passed over
// (Drift.SkipBlock): one, once a session got to it.
func (s *Server) Skipped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.skipped)
}

// paraphraseOnce is true the first time it is called.
func (s *Server) paraphraseOnce() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.paraphrased
	s.paraphrased = true
	return first
}

// personaOfBody is the persona of a workflow script's agent: the name of
// the agent file whose body its system prompt begins with (the plugin's,
// then the project's .claude/agents), "" for none (an agent of no
// type). Claude Code names no agent type in the request; it gives the
// body, which the files are read for, once each. Callers hold s.mu.
func (s *Server) personaOfBody(body, cwd string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	if name, ok := s.bodies[body]; ok {
		return name
	}
	for _, dir := range []string{filepath.Join(s.knobs.PluginDir, "agents"), filepath.Join(cwd, ".claude", "agents")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			name, text := frontmatter(string(b))
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(f), ".md")
			}
			if _, seen := s.bodies[strings.TrimSpace(text)]; !seen {
				s.bodies[strings.TrimSpace(text)] = name
			}
		}
	}
	return s.bodies[body]
}

// WorkflowAgent is one agent a workflow script started, as the stand-in
// played it.
type WorkflowAgent struct {
	ID      string // Claude Code's id
	Persona string
	Prompt  string // its task, unframed
	Seq     int64  // its first answer
}

// started notes a workflow script's agent at its first request (one
// still waiting for its answer, under SlowAgent, included). Callers hold
// s.mu.
func (s *Server) started(c conversation, persona, id string, seq int64) {
	prompt := strings.TrimSpace(c.Prompt)
	for _, a := range s.scripted {
		if id != "" && a.ID == id || id == "" && a.Persona == persona && a.Prompt == prompt {
			return
		}
	}
	s.scripted = append(s.scripted, WorkflowAgent{ID: id, Persona: persona, Prompt: prompt, Seq: seq})
}

// WorkflowAgents lists the agents workflow scripts started, in the order
// they first asked.
func (s *Server) WorkflowAgents() []WorkflowAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.scripted)
}

// compactOnce is true the first time it is called.
func (s *Server) compactOnce() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.compacted
	s.compacted = true
	return first
}

func (s *Server) nextClassification() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.classified++
	return s.classified
}

func (s *Server) nextTestRun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.testRuns++
	return s.testRuns
}

func (s *Server) record(seq int64, conv conversation, agent string, t turn, u Usage, msg map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := Exchange{Seq: seq, Subagent: conv.Subagent, Workflow: conv.Workflow, Agent: agent, Usage: u}
	if conv.Subagent {
		e.Prompt = strings.TrimSpace(conv.Prompt)
	}
	if len(t.Tools) == 0 {
		e.Text = t.Text
	}
	blocks, _ := msg["content"].([]map[string]any)
	for i, u := range t.Tools {
		in, _ := json.Marshal(u.Input)
		id, _ := blocks[i]["id"].(string)
		e.Tools = append(e.Tools, ToolUse{ID: id, Name: u.Name, Input: in})
		if inv, ok := u.Input.(invocation); ok {
			s.agentTypes[strings.TrimSpace(inv.Prompt)] = inv.SubagentType
		}
	}
	s.exchanges = append(s.exchanges, e)
	if conv.Subagent {
		for _, u := range t.Tools {
			if w, ok := u.Input.(writeInput); ok {
				s.written += len(w.Content)
			}
		}
	}
}

// Context is what the main thread's conversation received from its tools,
// against what the agents wrote: the measure of how much a command costs
// the orchestrating model.
type Context struct {
	Calls     int // the main thread's tool calls
	Bash      int // bytes of bash block output
	Answers   int // bytes of the agents' final answers
	Frames    int // bytes Claude Code wraps around each agent's answer
	Artifacts int // bytes the agents wrote to files
}

// Received is every byte of tool results the main thread got.
func (c Context) Received() int { return c.Bash + c.Answers + c.Frames }

// MainInput is the size of every request the main thread sent, in bytes:
// what it read, turn after turn (its conversation grows with each), the
// measure of the input it is billed for.
func (s *Server) MainInput() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mainBytes
}

// Context measures the main thread so far.
func (s *Server) Context() Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Context{Artifacts: s.written}
	var answers []string
	for _, e := range s.exchanges {
		if e.Subagent && e.Text != "" {
			answers = append(answers, e.Text)
		} else if !e.Subagent {
			c.Calls += len(e.Tools)
		}
	}
	for _, call := range s.main {
		if call.Name == "Bash" {
			c.Bash += len(call.Result)
			continue
		}
		answer := 0
		for _, a := range answers {
			if len(a) > answer && strings.Contains(call.Result, a) {
				answer = len(a)
			}
		}
		c.Answers += answer
		c.Frames += len(call.Result) - answer
	}
	return c
}

func (s *Server) log(name string, data []byte) {
	_ = os.WriteFile(filepath.Join(s.logDir, name), data, 0o644)
}
