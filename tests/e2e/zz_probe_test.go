//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/tests/e2e/standin"
)

func TestZZProbe(t *testing.T) {
	s := flowstateScenario(t, standin.Drift{}, standin.Knobs{Classification: classification("research-only", "Auth patterns", "Session storage", "Token x")})
	dir := "/tmp/probe/out"
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(s.Plugin, "hooks", "hooks.json")
	b, _ := os.ReadFile(path)
	script := `p=$(mktemp -p ` + dir + ` start.XXXX); cat > $p; date +%s.%N >> $p; tp=$(sed -n 's/.*"transcript_path":"\([^"]*\)\.jsonl".*/\1/p' $p); id=$(sed -n 's/.*"agent_id":"\([^"]*\)".*/\1/p' $p); echo "TRANSCRIPT $tp/subagents/agent-$id.jsonl" >> $p; head -c 600 "$tp/subagents/agent-$id.jsonl" >> $p 2>&1; true`
	b, _ = sjson.SetBytes(b, "hooks.SubagentStart.-1", map[string]any{"hooks": []map[string]any{{"type": "command", "command": script}}})
	slow := `p=$(mktemp -p ` + dir + ` pre.XXXX); cat > $p; date +%s.%N >> $p; if grep -q 'Topic: Auth patterns' $p; then sleep 4; fi; true`
	b, _ = sjson.SetBytes(b, "hooks.PreToolUse.-1", map[string]any{"matcher": "Agent", "hooks": []map[string]any{{"type": "command", "command": slow}}})
	os.WriteFile(path, b, 0o644)
	s.run("/flowstate:coordinate research how logins and sessions work")
	w := s.onlyWorkflow()
	ev, _ := os.ReadFile(filepath.Join(s.stateDir(), "workflows", w.ID, "events.jsonl"))
	os.WriteFile("/tmp/probe/events.jsonl", ev, 0o644)
}
