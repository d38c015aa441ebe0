package hooktest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestGeneralPurposeAgentRecorded: a worker launched as general-purpose
// and told to follow the agent's file is recorded like one launched by
// its own type: its launch (with the worker and its file), its start
// (whose payload names no agent, matched to the launch), its stop.
func TestGeneralPurposeAgentRecorded(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	prompt := "Read and follow the instructions in /plugins/flowstate/agents/research-specialist.md\n\nTopic: auth flows\nWrite your result to: " + output + "\nReturn exactly: REPORT_CREATED: " + output
	hook(t, project, "", "pre-tool-use", payload(map[string]any{"session_id": "s1", "cwd": project, "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "general-purpose", "description": "d", "prompt": prompt}}))
	start := hook(t, project, "", "subagent-start", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "gp1", "agent_type": "general-purpose"}))
	// Another general-purpose agent of the session, not launched by the command.
	hook(t, project, "", "subagent-start", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "gp2", "agent_type": "general-purpose"}))
	hook(t, project, "", "subagent-stop", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "gp1", "agent_type": "general-purpose",
		"last_assistant_message": "REPORT_CREATED: " + output}))
	if start.code != 0 || start.stdout != "" {
		t.Fatalf("subagent-start: %+v", start)
	}
	for kind, want := range map[string]string{"agent_launch": "research_1", "agent_start": "", "agent_stop": "research_1"} {
		evs := events(t, project, id, kind)
		if len(evs) != 1 || evs[0].Get("agent_type").String() != "research-specialist" || evs[0].Get("worker_id").String() != want {
			t.Errorf("%s events %v: want one of research-specialist for worker %q", kind, evs, want)
		}
	}
	if got := events(t, project, id, "agent_start"); len(got) == 1 && got[0].Get("agent_id").String() != "gp1" {
		t.Errorf("the start recorded is %s, want gp1's", got[0].Raw)
	}
}

// TestSupervisorStepsAreBound: a Bash call a subagent makes to run a
// sub-supervisor's step comes back with the agent's id exported before
// it, so the step knows the state the agent started in; any other Bash
// call, and the main thread's, is left alone.
func TestSupervisorStepsAreBound(t *testing.T) {
	project := newProject(t, "p")
	started(t, project, "s1", "research-only")
	bash := func(agentID, command string) result {
		fields := map[string]any{"session_id": "s1", "cwd": project, "tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "Run step 1"}}
		if agentID != "" {
			fields["agent_id"], fields["agent_type"] = agentID, "flowstate:sub-supervisor"
		}
		return hook(t, project, "", "pre-tool-use", payload(fields))
	}
	r := bash("a1b2c3", "flowstate phase-plan --supervisor")
	var out struct {
		HookSpecificOutput struct{ UpdatedInput map[string]string }
	}
	if json.Unmarshal([]byte(r.stdout), &out) != nil || out.HookSpecificOutput.UpdatedInput["command"] != "export FLOWSTATE_AGENT_ID=a1b2c3\nflowstate phase-plan --supervisor" ||
		out.HookSpecificOutput.UpdatedInput["description"] != "Run step 1" {
		t.Fatalf("a sub-supervisor's step: %+v", r)
	}
	cmd := exec.Command("bash", "-c", out.HookSpecificOutput.UpdatedInput["command"]+"; echo \"$FLOWSTATE_AGENT_ID\"")
	cmd.Env = []string{"PATH=/bin:/usr/bin"}
	if b, _ := cmd.Output(); !strings.HasSuffix(string(b), "a1b2c3\n") {
		t.Errorf("the command as given back does not export the id: %q", b)
	}
	// However the step names flowstate, and with its global flags first.
	for _, command := range []string{`"$FLOWSTATE_BIN" phase-plan --supervisor`, "flowstate --workflow w-1 phase-verify --supervisor"} {
		r := bash("a1b2c3", command)
		if json.Unmarshal([]byte(r.stdout), &out) != nil || out.HookSpecificOutput.UpdatedInput["command"] != "export FLOWSTATE_AGENT_ID=a1b2c3\n"+command {
			t.Errorf("%q: %+v, want it bound", command, r)
		}
	}
	for _, c := range []struct{ agent, command string }{
		{"", "flowstate phase-plan --supervisor"},
		{"a1b2c3", "ls -la"},
		{"a1b2c3", "flowstate phase-plan"},
		{"a1;rm -rf x", "flowstate phase-verify --supervisor"},
		{strings.Repeat("a", 129), "flowstate phase-verify --supervisor"},
	} {
		if r := bash(c.agent, c.command); r.code != 0 || r.stdout != "" {
			t.Errorf("%q by agent %q: %+v, want it left alone", c.command, c.agent, r)
		}
	}
}

// TestGeneralPurposeStopWithoutItsPrompt: a general-purpose worker whose
// stop carries neither a readable transcript nor a final answer (Claude
// Code had not written them out yet) is known by its recorded start, so
// its stop is recorded and no step waits for it as if it were still at
// work.
func TestGeneralPurposeStopWithoutItsPrompt(t *testing.T) {
	project := newProject(t, "p")
	id, output := started(t, project, "s1", "research-only")
	prompt := "Read and follow the instructions in /plugins/flowstate/agents/research-specialist.md\n\nTopic: auth flows\nWrite your result to: " + output
	hook(t, project, "", "pre-tool-use", payload(map[string]any{"session_id": "s1", "cwd": project, "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "general-purpose", "description": "d", "prompt": prompt}}))
	hook(t, project, "", "subagent-start", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "gp1", "agent_type": "general-purpose"}))
	hook(t, project, "", "subagent-stop", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "gp1", "agent_type": "general-purpose",
		"agent_transcript_path": project + "/not-written-yet.jsonl"}))
	// A general-purpose agent of the session the workflow never started stays unrecorded.
	hook(t, project, "", "subagent-stop", payload(map[string]any{"session_id": "s1", "cwd": project, "agent_id": "other", "agent_type": "general-purpose"}))
	stops := events(t, project, id, "agent_stop")
	if len(stops) != 1 || stops[0].Get("agent_id").String() != "gp1" || stops[0].Get("agent_type").String() != "research-specialist" {
		t.Errorf("stops recorded %v, want gp1's, as research-specialist", stops)
	}
}
