package standin

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// turn is the model's answer to one request: tool calls (stop_reason
// tool_use) or, when there are none, a final text (stop_reason end_turn).
type turn struct {
	Text  string
	Tools []toolUse
	// InputTokens is the usage the answer reports; a large one makes
	// Claude Code compact the conversation.
	InputTokens int
}

type toolUse struct {
	Name  string
	Input any
}

type bashInput struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

type readInput struct {
	FilePath string `json:"file_path"`
}

type editInput struct {
	FilePath  string `json:"file_path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// thread is everything one decision depends on.
type thread struct {
	Conv  conversation
	Agent string // persona of a subagent, "" in the main thread
	Knobs Knobs
	// TestRun is called once per test-results file the stand-in is about to
	// write and returns its 1-based ordinal (FailTestRuns counts these).
	TestRun func() int
	// Classification is called once per classification file the stand-in
	// is about to write and returns its 1-based ordinal.
	Classification func() int
	// Compact reports, once per server, that this answer is the one to
	// trigger a compaction (Drift.CompactAfter).
	Compact func() bool
	// Skip is asked whether the bash block Drift.SkipBlock aims at is
	// skipped in this conversation: once per server, so the first
	// conversation that gets there is the one (nil: always).
	Skip func(session, block string) bool
	// Paraphrase reports, once per server, that this Workflow call is
	// the one whose args the model garbles (Drift.ParaphraseArgs).
	Paraphrase func() bool
	// StrayOnce reports, once per server, that this implementer's
	// conversation (its first call's id) is the one to write outside its
	// worktree (Knobs.Stray).
	StrayOnce func(conversation string) bool
}

// waiting is what a main thread that launched a workflow says as it ends
// its turn to wait for Claude Code's notification.
const waiting = "The workflow runs in the background; I will go on when Claude Code notifies me that it has ended."

// unavailable are what Claude Code answers a Workflow call when the tool
// or the saved workflow is not there (2.1.328): the command goes on at
// its ## steps section.
var unavailable = []string{"No such tool available", "is disabled", "not found", "not available"}

// compactingTokens is a usage that makes Claude Code 2.1.328 compact the
// conversation before its next request (199,000 does not).
const compactingTokens = 990000

// underWay is what a main thread that ends its turn early says.
const underWay = "The workflow is under way; the remaining phases will continue from here."

// sectionRef finds the section a Stop hook's reason or a hook's context
// sends the model to: `"## phase"`.
var sectionRef = regexp.MustCompile(`"## ([^"]+)"`)

// decide replays the conversation against the program to find the current
// step, and returns the next turn.
func decide(th thread) turn {
	c := th.Conv
	if c.AgentFile != "" && len(c.Calls) == 0 {
		// Told to follow a file: a general-purpose agent reads it first.
		return turn{Tools: []toolUse{{"Read", readInput{c.AgentFile}}}}
	}
	prog, err := programOf(c)
	if err != nil {
		return turn{Text: "stand-in cannot follow this program: " + err.Error()}
	}
	if c.Subagent {
		first := ""
		if len(c.Calls) > 0 {
			first = c.Calls[0].ID // the stray write comes after the report: a call is on record by then
		}
		stray := func() bool { return th.StrayOnce != nil && first != "" && th.StrayOnce(first) }
		prog.Steps = append(prog.Steps, th.Knobs.workerSteps(th.Agent, topicOf(c.Prompt), stray)...)
	}
	if c.Summary {
		return turn{Text: "<analysis>The stand-in keeps nothing.</analysis>\n<summary>A flowstate command was running; the hooks say where it stands.</summary>"}
	}
	env := map[string]string{}
	if c.Subagent {
		merge(env, c.Prompt)
	}
	skipWrites := c.Subagent && th.Knobs.MissingWorker != "" && strings.Contains(c.Prompt, th.Knobs.MissingWorker)
	// A sub-supervisor runs its blocks twice and launches its workers as
	// general-purpose too; the other drifts are the main thread's.
	drift := Drift{Twice: th.Knobs.Drift.Twice, GeneralPurpose: th.Knobs.Drift.GeneralPurpose}
	if !c.Subagent {
		drift = th.Knobs.Drift
	}
	lastOutput, signal := "", ""
	brief := "" // the file a subagent read first, as the Read showed it
	h := 0      // next unconsumed call in the history
	if c.AgentFile != "" {
		// The first call read the agent file; the program is that file.
		if _, stop := consume(c.Calls, &h, "Read"); stop != "" {
			return turn{Text: stop}
		}
	}
	// afterAgents: the last step run was a task block's agents;
	// skipped: the block Drift.SkipBlock aims at has been passed over.
	afterAgents, skipped := false, false
	since := 0 // calls since the turn began or the model was sent back
	// issue is the turn that makes the next call, unless the model ends its
	// turn early instead.
	issue := func(t turn, mayStop bool) turn {
		if mayStop && drift.StopEvery > 0 && since >= drift.StopEvery {
			return turn{Text: underWay}
		}
		if drift.CompactAfter > 0 && h >= drift.CompactAfter && th.Compact != nil && th.Compact() {
			t.InputTokens = compactingTokens
		}
		return t
	}
	pc, fb := 0, 0
	if c.Compacted {
		// Every value printed before is gone; the hooks' context names the
		// section whose first block needs none of them, or says the command
		// is over: the model then reports what it last saw.
		target, ok := jumpTarget(prog, c.Context)
		switch {
		case ok:
			pc = target
		case c.Context != "" && len(c.Kept) > 0:
			last := c.Kept[len(c.Kept)-1]
			if last.IsError {
				return turn{Text: stopped(last)}
			}
			return turn{Text: strings.TrimSpace(last.Result)}
		case c.Context != "":
			return turn{Text: c.Context}
		default:
			return turn{Text: "Stopped: the conversation was compacted and nothing says where the command stands."}
		}
	}
	// sentBack reports whether the model ended its turn here and the
	// Stop hook sent it back, and if so goes where the hook's reason
	// says. It is asked where a turn can end: before a step's call and at
	// the program's end, never before a step that makes no call (a
	// skipped block), which the model passed before it stopped.
	sentBack := func() bool {
		if fb == len(c.Feedback) || c.Feedback[fb].AfterCalls != h {
			return false
		}
		if target, ok := jumpTarget(prog, c.Feedback[fb].Text); ok {
			pc = target
		}
		fb++
		since = 0
		return true
	}
steps:
	for {
		if pc >= len(prog.Steps) {
			if sentBack() {
				continue
			}
			break
		}
		st := prog.Steps[pc]
		switch st.Kind {
		case stepBash:
			if !c.Subagent && !c.Compacted && !skipped && drift.SkipBlock.aims(st.Text, afterAgents) && (th.Skip == nil || th.Skip(c.Session, st.Text)) {
				// The model passes over this block and goes on with the
				// next step it sees.
				skipped, afterAgents = true, false
				pc++
				continue
			}
			if sentBack() {
				continue
			}
			afterAgents = false
			run := turn{Tools: []toolUse{{"Bash", bashInput{st.Text, fmt.Sprintf("Run step %d", pc+1)}}}}
			if h == len(c.Calls) {
				return issue(run, true)
			}
			call, stop := consume(c.Calls, &h, "Bash")
			since++
			if drift.Twice {
				// The model runs the block again, as if its output looked odd.
				if h == len(c.Calls) {
					return issue(run, false)
				}
				call, stop = consume(c.Calls, &h, "Bash")
				since++
			}
			if stop != "" {
				return turn{Text: stop}
			}
			merge(env, call.Result)
			lastOutput = call.Result
			if s := lastSignal(call.Result); s != "" {
				signal = s
			}
			next, jumps := nextOf(call.Result)
			switch {
			case !jumps:
				pc++
			case next == "done":
				pc = len(prog.Steps)
			default:
				target, ok := prog.Sections[next]
				if !ok {
					return turn{Text: fmt.Sprintf("Stopped: NEXT=%s names no section \"## %s\".", next, next)}
				}
				pc = target
			}
		case stepTask:
			calls, err := st.Task.expand(env)
			if reference.MatchString(substitute(st.Task.ForEach, env)) || err == nil && unnamed(calls) {
				// No block before printed the agent to launch or how
				// many (a skipped block would have): the model cannot
				// launch them, so it passes over the block.
				pc++
				continue
			}
			if err != nil {
				return turn{Text: "Stopped: " + err.Error()}
			}
			if len(calls) > 0 && sentBack() {
				continue
			}
			if h == len(c.Calls) && len(calls) > 0 {
				var tools []toolUse
				for _, inv := range calls {
					if drift.Background {
						// As a model that copies the block without its flags.
						inv.Background, inv.Isolation = nil, ""
					}
					if drift.GeneralPurpose {
						if inv, err = th.asGeneralPurpose(inv); err != nil {
							return turn{Text: "stand-in cannot follow this program: " + err.Error()}
						}
					}
					tools = append(tools, toolUse{"Agent", inv})
				}
				return issue(turn{Tools: tools}, true)
			}
			for range calls {
				// An agent's answer decides nothing, a failed call's
				// neither (Claude Code could not start it): the next
				// block checks the files.
				if call := c.Calls[h]; call.Name != "Agent" || !call.HasResult {
					return turn{Text: fmt.Sprintf("stand-in lost its place: expected an Agent result, the conversation has %s", call.Name)}
				}
				h++
				since++
			}
			// A task block that launched nobody (## work's other block,
			// its count 0) leaves the last step run as it was.
			afterAgents = afterAgents || len(calls) > 0
			pc++
			if !drift.SelfWrite {
				continue
			}
			for _, wr := range th.selfWrites(calls) {
				if sentBack() {
					continue steps
				}
				if h == len(c.Calls) {
					return issue(turn{Tools: []toolUse{{"Write", wr}}}, true)
				}
				// Refused or not, the model goes on to its next block.
				if call := c.Calls[h]; call.Name != "Write" || !call.HasResult {
					return turn{Text: fmt.Sprintf("stand-in lost its place: expected a Write result, the conversation has %s", call.Name)}
				}
				h++
				since++
			}
		case stepLaunch:
			if sentBack() {
				continue
			}
			if h == len(c.Calls) {
				return issue(turn{Tools: []toolUse{{"Workflow", th.launch(st.Launch, env)}}}, true)
			}
			call := c.Calls[h]
			h++
			since++
			switch {
			case call.Name != "Workflow" || !call.HasResult:
				return turn{Text: fmt.Sprintf("stand-in lost its place: expected a Workflow result, the conversation has %s", call.Name)}
			case call.IsError:
				target, ok := jumpTarget(prog, call.Result)
				if !ok && slices.ContainsFunc(unavailable, func(s string) bool { return strings.Contains(call.Result, s) }) {
					target, ok = prog.Sections["steps"]
				}
				if !ok {
					return turn{Text: stopped(call)}
				}
				pc = target
				continue
			case !c.notifiedSince(h):
				// Launched in the background: wait for its notification.
				return issue(turn{Text: waiting}, false)
			}
			pc++
		case stepEdit:
			// A missing worker's edits are made all the same: half
			// work, left without its report.
			if sentBack() {
				continue
			}
			path := absolute(c.Cwd, st.Text)
			if h == len(c.Calls) {
				return issue(turn{Tools: []toolUse{{"Read", readInput{path}}}}, true)
			}
			read, stop := consume(c.Calls, &h, "Read")
			if stop != "" {
				return turn{Text: stop}
			}
			if h == len(c.Calls) {
				old, new, ok := st.Edit.pick(read.Result)
				if !ok {
					return turn{Text: fmt.Sprintf("Stopped: %s holds none of the texts to change.", st.Text)}
				}
				return issue(turn{Tools: []toolUse{{"Edit", editInput{path, old, new}}}}, true)
			}
			if _, stop := consume(c.Calls, &h, "Edit"); stop != "" {
				return turn{Text: stop}
			}
			pc++
		case stepRead:
			if h == len(c.Calls) {
				return issue(turn{Tools: []toolUse{{"Read", readInput{absolute(c.Cwd, substitute(st.Text, env))}}}}, true)
			}
			// A brief that cannot be read leaves the agent to its own
			// format, as a real one would go on.
			if call := c.Calls[h]; call.Name != "Read" || !call.HasResult {
				return turn{Text: fmt.Sprintf("stand-in lost its place: expected a Read result, the conversation has %s", call.Name)}
			} else if !call.IsError {
				brief = fileText(call.Result)
			}
			h++
			pc++
		case stepWrite:
			if skipWrites {
				pc++
				continue
			}
			if sentBack() {
				continue
			}
			if h == len(c.Calls) {
				return issue(turn{Tools: []toolUse{{"Write", th.write(prog, pc, env, brief)}}}, true)
			}
			if _, stop := consume(c.Calls, &h, "Write"); stop != "" {
				return turn{Text: stop}
			}
			pc++
		}
	}
	if c.Subagent && c.offers("StructuredOutput") {
		return structured(c, h)
	}
	return turn{Text: th.final(prog, env, lastOutput, signal)}
}

// structured ends a subagent offered StructuredOutput (a workflow
// script's agent with a schema): with that call, whose input is the
// first line of its task, as flowstate's step agent is told; again after
// a refusal, at most three times in all.
func structured(c conversation, h int) turn {
	tries := c.Calls[h:]
	switch {
	case len(tries) > 0 && !tries[len(tries)-1].IsError:
		return turn{Text: "Done."}
	case len(tries) >= 3:
		return turn{Text: "Stopped: the StructuredOutput call was refused three times."}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(c.Prompt), "\n")
	return turn{Tools: []toolUse{{"StructuredOutput", map[string]string{"step": line}}}}
}

// launch is a workflow block's Workflow call with env's values: args a
// JSON object where the value is one, garbled once per server under
// Drift.ParaphraseArgs (the launch id cut short, as a model that copies
// it carelessly does).
func (th thread) launch(l protocol.Launch, env map[string]string) map[string]any {
	in := map[string]any{"name": substitute(l.Name, env)}
	raw := substitute(l.Args, env)
	var args map[string]any
	if json.Unmarshal([]byte(raw), &args) != nil {
		in["args"] = raw
		return in
	}
	if th.Knobs.Drift.ParaphraseArgs && th.Paraphrase != nil && th.Paraphrase() {
		if id, ok := args["launch"].(string); ok {
			args["launch"] = id[:len(id)/2]
		}
	}
	in["args"] = args
	return in
}

// unnamed reports whether a call's agent type still holds a ${KEY}
// nothing printed.
func unnamed(calls []invocation) bool {
	for _, inv := range calls {
		if reference.MatchString(inv.SubagentType) {
			return true
		}
	}
	return false
}

// jumpTarget is the step a text sends the model to: the section it names
// as "## name".
func jumpTarget(prog program, text string) (int, bool) {
	m := sectionRef.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	target, ok := prog.Sections[m[1]]
	return target, ok
}

// programOf is the main thread's command, or a subagent's prompt followed by
// its agent body: the prompt's files are written first, then the body's steps
// (which may verify them) run.
func programOf(c conversation) (program, error) {
	if !c.Subagent {
		p, err := parseProgram(c.Program)
		// Only subagents read and write files; prose in a command is
		// never a step.
		var steps []step
		for _, s := range p.Steps {
			if s.Kind != stepWrite && s.Kind != stepRead {
				steps = append(steps, s)
			}
		}
		p.Steps = steps
		return p, err
	}
	prompt, err := parseProgram(c.Prompt)
	if err != nil {
		return prompt, fmt.Errorf("prompt: %w", err)
	}
	body, err := parseProgram(c.Program)
	if err != nil {
		return body, fmt.Errorf("agent body: %w", err)
	}
	return prompt.then(body), nil
}

// consume takes the next call from the history; a failed or unexpected call
// yields the text that ends the turn.
func consume(calls []toolCall, h *int, want string) (toolCall, string) {
	call := calls[*h]
	*h++
	switch {
	case call.Name != want:
		return call, fmt.Sprintf("stand-in lost its place: expected a %s call, the conversation has %s", want, call.Name)
	case !call.HasResult:
		return call, fmt.Sprintf("stand-in lost its place: %s call %s has no result", want, call.ID)
	case call.IsError:
		return call, stopped(call)
	}
	return call, ""
}

// stopped is the answer of a model whose step failed: the protocol says
// to report the error and stop.
func stopped(call toolCall) string {
	return fmt.Sprintf("Stopped: the %s step failed, so the command stops here.\n\n%s", call.Name, call.Result)
}

func merge(env map[string]string, out string) {
	for _, kv := range protocol.KeyValues(out) {
		env[kv[0]] = kv[1]
	}
}

// nextOf reports the NEXT value printed by this one step, if any.
func nextOf(out string) (string, bool) {
	next, ok := "", false
	for _, kv := range protocol.KeyValues(out) {
		if kv[0] == "NEXT" {
			next, ok = strings.TrimSpace(kv[1]), true
		}
	}
	return next, ok
}

func (th thread) write(prog program, pc int, env map[string]string, brief string) writeInput {
	path := substitute(prog.Steps[pc].Text, env)
	var all []string
	for _, s := range prog.Steps {
		if s.Kind == stepWrite {
			all = append(all, projectRelative(th.Conv.Cwd, substitute(s.Text, env)))
		}
	}
	w := writeContext{Persona: th.Agent, Path: path, Prompt: th.Conv.Prompt, Siblings: all, Knobs: th.Knobs, Brief: brief}
	switch {
	case th.Agent == "test-specialist" && filepath.Ext(path) == ".json":
		w.TestRun = th.TestRun()
	case th.Agent == "workflow-classifier" && filepath.Ext(path) == ".json" && th.Classification != nil:
		w.Classification = th.Classification()
	}
	return writeInput{FilePath: absolute(th.Conv.Cwd, path), Content: w.content()}
}

// selfWrites are the files the workers of calls were to write and, by
// Knobs.MissingWorker, did not: what a main thread that does a missing
// worker's job itself writes, as the worker would have.
func (th thread) selfWrites(calls []invocation) []writeInput {
	var out []writeInput
	for _, inv := range calls {
		if th.Knobs.MissingWorker == "" || !strings.Contains(inv.Prompt, th.Knobs.MissingWorker) {
			continue
		}
		paths := protocol.WriteTargets(inv.Prompt)
		for i, path := range paths {
			paths[i] = projectRelative(th.Conv.Cwd, path)
		}
		for _, path := range paths {
			w := writeContext{Persona: personaOf(inv.SubagentType), Path: path, Prompt: inv.Prompt, Siblings: paths, Knobs: th.Knobs}
			out = append(out, writeInput{FilePath: absolute(th.Conv.Cwd, path), Content: w.content()})
		}
	}
	return out
}

// final is the answer when the program is finished.
func (th thread) final(prog program, env map[string]string, lastOutput, signal string) string {
	if !th.Conv.Subagent {
		if out := strings.TrimSpace(lastOutput); out != "" {
			return out
		}
		return "Done."
	}
	switch {
	case signal != "":
		return signal
	case th.Agent == "workflow-classifier":
		return th.Knobs.classification()
	case prog.Return != "":
		return substitute(prog.Return, env)
	}
	return "Done."
}

func absolute(cwd, path string) string {
	if filepath.IsAbs(path) || cwd == "" {
		return path
	}
	return filepath.Join(cwd, path)
}

func projectRelative(cwd, path string) string {
	if rel, err := filepath.Rel(cwd, absolute(cwd, path)); err == nil && cwd != "" {
		return rel
	}
	return path
}
