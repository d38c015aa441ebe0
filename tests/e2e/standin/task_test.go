package standin

import (
	"reflect"
	"testing"
)

const taskBlock = `Task {
  subagent_type: flowstate:research-specialist
  description: Research ${TOPIC_i}
  for_each: i in 1..${WORKER_COUNT}
  prompt: |
    Research the topic: ${TOPIC_i}

    Write the report to: ${REPORT_PATH_i}
    Return exactly: REPORT_CREATED: ${REPORT_PATH_i} (${i} of ${WORKER_COUNT}, ${UNKNOWN})
}`

func TestTaskExpand(t *testing.T) {
	tk, err := parseTask(taskBlock)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WORKER_COUNT": "2", "TOPIC_1": "Auth", "TOPIC_2": "Sessions", "REPORT_PATH_1": "r/1.md", "REPORT_PATH_2": "r/2.md"}
	got, err := tk.expand(env)
	if err != nil {
		t.Fatal(err)
	}
	want := []invocation{
		{SubagentType: "flowstate:research-specialist", Description: "Research Auth",
			Prompt: "Research the topic: Auth\n\nWrite the report to: r/1.md\nReturn exactly: REPORT_CREATED: r/1.md (1 of 2, ${UNKNOWN})"},
		{SubagentType: "flowstate:research-specialist", Description: "Research Sessions",
			Prompt: "Research the topic: Sessions\n\nWrite the report to: r/2.md\nReturn exactly: REPORT_CREATED: r/2.md (2 of 2, ${UNKNOWN})"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expand =\n%+v\nwant\n%+v", got, want)
	}
}

func TestTaskExpandCounts(t *testing.T) {
	tk, err := parseTask(taskBlock)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tk.expand(map[string]string{"WORKER_COUNT": "0"}); err != nil || len(got) != 0 {
		t.Errorf("N=0: %v, %v; want no invocations", got, err)
	}
	if _, err := tk.expand(map[string]string{}); err == nil {
		t.Error("unknown N: want an error")
	}
}

func TestTaskSingleLinePrompt(t *testing.T) {
	tk, err := parseTask("Task {\n  subagent_type: a:b\n  description: d\n  prompt: do it\n}")
	if err != nil || tk.Prompt != "do it" || tk.ForEach != "" {
		t.Fatalf("parseTask = %+v, %v", tk, err)
	}
	if got, _ := tk.expand(nil); len(got) != 1 || got[0].Background != nil {
		t.Errorf("expand = %+v, want one invocation that leaves run_in_background out", got)
	}
	tk, err = parseTask("Task {\n  subagent_type: a:b\n  description: d\n  run_in_background: false\n  prompt: do it\n}")
	if got, _ := tk.expand(nil); err != nil || len(got) != 1 || got[0].Background == nil || *got[0].Background {
		t.Errorf("expand = %+v, %v; want one foreground invocation", got, err)
	}
}

func TestTaskErrors(t *testing.T) {
	for _, body := range []string{"", "Task {\n  prompt: p\n}", "Task {\n  subagent_type: a\n  colour: red\n  prompt: p\n}"} {
		if _, err := parseTask(body); err == nil {
			t.Errorf("parseTask(%q): want an error", body)
		}
	}
}
