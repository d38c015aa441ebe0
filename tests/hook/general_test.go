package hooktest

import (
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
