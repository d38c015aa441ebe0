package playback

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/protocol"
)

func TestRunner(t *testing.T) {
	md := "## start\n\n```bash\necho N=2; echo T_1=a; echo T_2=b\n```\n\n```bash\necho NEXT=work\n```\n\n```bash\nexit 1\n```\n\n" +
		"## work\n\n```task\nTask {\n  subagent_type: w\n  description: d\n  for_each: i in 1..${N}\n  prompt: |\n    ${T_i}\n    Return exactly: OK ${T_i}\n}\n```\n\n" +
		"```bash\necho out; echo NEXT=done\n```\n\n```bash\nexit 1\n```\n"
	d, err := protocol.Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	var batches [][]string
	answer := func(calls []protocol.Invocation) ([]string, error) {
		var prompts, answers []string
		for _, c := range calls {
			first, _, _ := strings.Cut(c.Prompt, "\n")
			prompts = append(prompts, first)
			answers = append(answers, "OK "+first)
		}
		batches = append(batches, prompts)
		return answers, nil
	}
	r := NewRunner("cmd.md", d, t.TempDir(), []string{"PATH=/usr/bin:/bin"}, answer)
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Trace, " "); got != "start/bash start/bash work/task work/bash" {
		t.Errorf("trace %s", got)
	}
	if fmt.Sprint(batches) != "[[a b]]" || r.Stdout != "out\nNEXT=done\n" {
		t.Errorf("batches %v, stdout %q", batches, r.Stdout)
	}

	wrong := NewRunner("cmd.md", d, t.TempDir(), nil, func(calls []protocol.Invocation) ([]string, error) {
		return make([]string, len(calls)), nil
	})
	if err := wrong.Run(); err == nil || !strings.Contains(err.Error(), `asked for "OK a"`) {
		t.Errorf("an answer other than the Return line: %v", err)
	}

	loop, _ := protocol.Parse("## a\n```bash\necho NEXT=a\n```\n")
	if err := NewRunner("loop.md", loop, t.TempDir(), nil, nil).Run(); err == nil || !strings.Contains(err.Error(), "never ends") {
		t.Errorf("endless loop: %v", err)
	}
	fail, _ := protocol.Parse("```bash\necho A=1; echo oops >&2; exit 3\n```\n")
	if r := NewRunner("fail.md", fail, t.TempDir(), nil, nil); r.Run() == nil || !strings.Contains(r.Err.Error(), "exit status 3: oops") || r.Stderr != "oops\n" {
		t.Errorf("failing block: %v, stderr %q", r.Err, r.Stderr)
	}
	jump, _ := protocol.Parse("```bash\necho NEXT=nowhere\n```\n")
	if err := NewRunner("jump.md", jump, t.TempDir(), nil, nil).Run(); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("jump to no section: %v", err)
	}
}
