package robust

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/sjson"
)

// evalBlock runs a bash block that evals state-load (with the given
// flags) and then runs commands the way a block of a Claude Code command
// does; flowstate is $FS. It returns bash's result.
func evalBlock(p *project, flags, then string) result {
	script := `set -e; out=$("$FS" state-load ` + flags + `); eval "$out"; ` + then
	return p.run(call{Args: []string{"-c", script}, Env: []string{"FS=" + bin}})
}

// bashProject is a project whose runs are bash, not flowstate.
func bashProject(p *project) *project {
	q := *p
	q.bin = "bash"
	return &q
}

// dangerous are names the issue saw exported into bash, and others that
// run commands or load code the same way.
var dangerous = []string{
	"BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "PATH", "IFS", "PS4",
	"PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE", "CDPATH", "HOME", "GIT_SSH_COMMAND",
	"GIT_CONFIG_GLOBAL", "NODE_OPTIONS", "PYTHONPATH", "PERL5OPT", "GCONV_PATH", "EDITOR", "PAGER",
	"FLOWSTATE_BIN", "CLAUDE_CODE_SESSION_ID", "path", "status",
}

// TestReservedKeysNeverReachBash: a key that changes how the shell or
// the loader behave is refused by state-append (exit 4), and when a
// cloned repository's state file already holds one, state-load leaves
// it out with a warning: after the eval, the next `bash -c` runs no
// script BASH_ENV names, `set -x` runs nothing PS4 holds, commands are
// still found on PATH.
func TestReservedKeysNeverReachBash(t *testing.T) {
	p, id := victim(t)
	for _, k := range dangerous {
		refuse(t, p, args("state-append", k, "v"), 4, "reserved")
	}
	pwned := filepath.Join(p.Root, "tmp", "pwned")
	evil := filepath.Join(p.Root, "tmp", "evil.sh")
	if err := os.WriteFile(evil, []byte("touch "+pwned+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, k := range dangerous {
		v := evil
		switch k {
		case "PS4", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "NODE_OPTIONS", "PERL5OPT":
			v = "$(touch " + pwned + ")"
		case "SHELLOPTS":
			v = "xtrace"
		case "IFS":
			v = "/"
		}
		lines = append(lines, k+"="+v)
	}
	appendRaw(t, filepath.Join(p.wfDir(id), "state"), strings.Join(lines, "\n")+"\n")
	bp := bashProject(p)
	for _, flags := range []string{"", "--export"} {
		r := evalBlock(bp, flags, `set -x; bash -c true; sh -c true; ls / >/dev/null; git --version >/dev/null 2>&1 || true; echo "kept: $KEPT"`)
		if r.Code != 0 || !strings.Contains(r.Stdout, "kept: value with $(rm -rf /) in it") {
			t.Fatalf("state-load %s with reserved keys on disk broke the block: %s", flags, r)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("state-load %s: a stored value ran", flags)
		}
		for _, k := range dangerous {
			if !strings.Contains(r.Stderr, "warning: workflow victim state: "+k+" not loaded: a reserved name") {
				t.Errorf("state-load %s: no warning for %s in %q", flags, k, r.Stderr)
			}
		}
	}
	// Still data, still readable.
	if got := p.ok("state-get", "BASH_ENV"); got != evil {
		t.Errorf("state-get BASH_ENV = %q", got)
	}
}

// TestLargeValuesNeverBreakTheBlock: a value of 1 MB, or many of 60 KB,
// loaded into a block leave every later command of it working ("Argument
// list too long" is what an exported 1 MB value caused), and stay
// readable with state-get.
func TestLargeValuesNeverBreakTheBlock(t *testing.T) {
	p, _ := victim(t)
	big := strings.Repeat("x", 1<<20)
	p.okCall(call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader("BIG=" + big + "\n")})
	var many strings.Builder
	for i := range 40 {
		many.WriteString("MEDIUM_" + string(rune('A'+i%26)) + string(rune('A'+i/26)) + "=" + strings.Repeat("m", 60<<10) + "\n")
	}
	p.okCall(call{Args: []string{"state-append", "--stdin"}, Stdin: strings.NewReader(many.String())})
	bp := bashProject(p)
	for _, flags := range []string{"", "--export"} {
		r := evalBlock(bp, flags, `/bin/true && env >/dev/null && echo "ok ${#MEDIUM_AA} ${BIG:-unset}"`)
		if r.Code != 0 || !strings.Contains(r.Stdout, "ok 61440 unset") {
			t.Fatalf("state-load %s with large values: %s", flags, r)
		}
		if !strings.Contains(r.Stderr, "BIG not loaded") || !strings.Contains(r.Stderr, "flowstate state-get BIG") {
			t.Errorf("state-load %s: no warning for BIG that names state-get: %q", flags, r.Stderr)
		}
	}
	if got := p.ok("state-get", "BIG"); got != big {
		t.Errorf("state-get BIG returned %d bytes", len(got))
	}
}

// TestLoadLeavesTheEnvironmentAlone: without --export, a stored key that
// the shell exports with another value is not assigned (that would
// change the environment of every later command); with --export it is.
func TestLoadLeavesTheEnvironmentAlone(t *testing.T) {
	p, _ := victim(t)
	p.ok("state-append", "TOOL_MODE", "from-state")
	bp := bashProject(p)
	bp.setenv("TOOL_MODE=from-user")
	r := evalBlock(bp, "", `printenv TOOL_MODE`)
	if r.Code != 0 || r.Stdout != "from-user\n" || !strings.Contains(r.Stderr, "TOOL_MODE not loaded") {
		t.Errorf("plain state-load changed an exported variable: %s", r)
	}
	if r := evalBlock(bp, "--export", `printenv TOOL_MODE`); r.Code != 0 || r.Stdout != "from-state\n" {
		t.Errorf("state-load --export: %s", r)
	}
	if r := evalBlock(bp, "", `printenv KEPT || echo "not exported: $KEPT"`); !strings.Contains(r.Stdout, "not exported: value") {
		t.Errorf("plain state-load exported a value: %s", r)
	}
}

// TestInvalidUTF8IsRefused: JSON with bytes that are not UTF-8 is
// refused (exit 4) wherever it enters, and text arguments stored inside
// JSON are stored with U+FFFD for each bad byte: every JSON file
// flowstate writes stays valid UTF-8, which Python's json requires.
func TestInvalidUTF8IsRefused(t *testing.T) {
	p, id := victim(t)
	bad := "caf\xe9"
	refuse(t, p, args("checkpoint-set", "phase_data.x", `"`+bad+`"`), 4, "UTF-8")
	refuse(t, p, args("checkpoint-set", "--append", "phase_data.list", `"`+bad+`"`), 4, "UTF-8")
	refuse(t, p, args("log-append", "metrics", `{"who":"`+bad+`"}`), 4, "UTF-8")
	record := `{"worker_id":"w1","topic":"` + bad + `","status":"completed","output_path":"/tmp/r.md","duration_ms":5}`
	refuse(t, p, call{Args: []string{"supervisor-record", "--supervisor", "research_supervisor", "-"}, Stdin: strings.NewReader(record)}, 4, "UTF-8")
	doc, err := sjson.SetRawBytes(p.readFile(filepath.Join(p.wfDir(id), "checkpoint.json")), "phase_data.note", []byte(`"`+bad+`"`))
	if err != nil {
		t.Fatal(err)
	}
	refuse(t, p, call{Args: []string{"checkpoint-save"}, Stdin: strings.NewReader(string(doc))}, 4, "UTF-8")
	refuse(t, p, args("sm-init", "--workflow", "w2", "--description", "d", "--command", "c", "--scope", "research-only", "--topics", `["`+bad+`"]`), 4, "UTF-8")

	p.ok("sm-fail", "--error", "failed on "+bad)
	p.ok("sm-transition", "research", "--reason", "because "+bad)
	if got := p.ok("checkpoint-get", "error_state.last_error"); got != "failed on caf\uFFFD\n" {
		t.Errorf("last_error = %q, want the bad byte as U+FFFD", got)
	}
	err = filepath.WalkDir(p.stateDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b := p.readFile(path)
		if !utf8.Valid(b) {
			t.Errorf("%s is not valid UTF-8", path)
		}
		if strings.HasSuffix(path, ".jsonl") {
			checkJSONL(t, path, b)
		} else if !json.Valid(b) {
			t.Errorf("%s is not JSON", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNestingIsBounded: JSON nested deeper than 64 levels is refused
// (exit 4) where it enters, before the workflow's lock; a checkpoint
// already on disk that nests too deep is refused at once, not parsed for
// seconds under the lock while other writers time out.
func TestNestingIsBounded(t *testing.T) {
	p, id := victim(t)
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, v := range []string{nested(10000), nested(62)} { // 62 under phase_data.x.y: 65 levels
		refuse(t, p, args("checkpoint-set", "phase_data.x.y", v), 4, "64 levels")
	}
	refuse(t, p, args("log-append", "deep", nested(10000)), 4, "64 levels")
	record := `{"worker_id":"w1","status":"completed","output_path":"/tmp/r.md","duration_ms":5,"metadata":{"x":` + nested(10000) + `}}`
	refuse(t, p, call{Args: []string{"supervisor-record", "--supervisor", "research_supervisor", "-"}, Stdin: strings.NewReader(record)}, 4, "64 levels")
	path := filepath.Join(p.wfDir(id), "checkpoint.json")
	deep, err := sjson.SetRawBytes(p.readFile(path), "phase_data.deep", []byte(nested(10000)))
	if err != nil {
		t.Fatal(err)
	}
	refuse(t, p, call{Args: []string{"checkpoint-save"}, Stdin: strings.NewReader(string(deep))}, 4, "64 levels")
	p.ok("checkpoint-set", "phase_data.ok.v", nested(61))

	if err := os.WriteFile(path, deep, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"checkpoint-set", "phase_data.y", "{}"}, {"state-load"}, {"sm-transition", "plan"}} {
		refuse(t, p, args(c...), 4, "64 levels")
	}
	if !strings.Contains(p.ok("list"), "unreadable") {
		t.Error("list does not show the too-deep checkpoint as unreadable")
	}
}

// TestReportMetaIsBounded: report-meta on 8 MB of blank lines, on a
// single line of a million words and on millions of short lines costs
// bounded memory (each line of the old parser cost about 64 bytes, and
// continuation lines were concatenated one by one).
func TestReportMetaIsBounded(t *testing.T) {
	head := "# Report\n\n## Executive Summary\n\nThe summary.\n\n## Key Findings\n\n- first\n"
	for name, tt := range map[string]struct {
		body string
		code int
	}{
		"blank lines":   {strings.Repeat("\n", 8<<20), 0},
		"one long line": {strings.Repeat("word ", 2<<20), 0},
		"short lines":   {strings.Repeat("a\n", 4<<20), 4},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t)
			file := filepath.Join(p.Root, "tmp", "report.md")
			if err := os.WriteFile(file, []byte(head+tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			r := p.runWithin(args("report-meta", file))
			if r.Code != tt.code {
				t.Fatalf("report-meta: %s", r)
			}
			if r.MaxRSSKB > 96<<10 {
				t.Errorf("report-meta of %d MB: peak RSS %d MB", len(tt.body)>>20, r.MaxRSSKB>>10)
			}
			t.Logf("%d MB: exit %d in %v, peak RSS %d MB", len(tt.body)>>20, r.Code, r.Elapsed.Round(1e6), r.MaxRSSKB>>10)
		})
	}
}

// TestPlantedCheckpointNeverRunsInBash: the values state-load and the
// compat functions derive from a checkpoint (description, command, scope,
// completed states, topics, the last error) reach bash through eval too.
// A planted checkpoint holding command substitutions, backticks, quotes
// and newlines in each has none of them run, and the block goes on.
func TestPlantedCheckpointNeverRunsInBash(t *testing.T) {
	p, id := victim(t)
	pwned := filepath.Join(p.Root, "tmp", "pwned")
	evil := "$(touch " + pwned + ")`touch " + pwned + "`'\"\n; touch " + pwned + " #"
	path := filepath.Join(p.wfDir(id), "checkpoint.json")
	doc := p.readFile(path)
	for _, key := range []string{"command", "workflow_description", "state_machine.workflow_config.description",
		"state_machine.workflow_config.command", "state_machine.workflow_config.scope", "error_state.last_error",
		"state_machine.classification.research_topics.0", "state_machine.completed_states.0", "phase_data.research." + "x"} {
		var err error
		if doc, err = sjson.SetBytes(doc, key, evil); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	bp := bashProject(p)
	for _, block := range []string{
		`eval "$("$FS" state-load)"; eval "$("$FS" state-load --export)"; printf '%s' "$WORKFLOW_DESCRIPTION"`,
		`eval "$("$FS" compat)"; load_workflow_state victim; printf '%s' "$WORKFLOW_DESCRIPTION"`,
		`eval "$("$FS" compat)"; WORKFLOW_ID=victim; sm_load "` + path + `"; printf '%s' "$WORKFLOW_DESCRIPTION"`,
	} {
		r := bp.run(call{Args: []string{"-c", block}, Env: []string{"FS=" + bin, "FLOWSTATE_BIN=" + bin}})
		if r.Code != 0 || r.Stdout != evil {
			t.Errorf("%s: %s", block, r)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("%s: a value from the checkpoint ran", block)
		}
	}
}

// TestPlantedTextNeverReachesTheTerminal: what status, list and history
// print for people comes from a checkpoint and an event log a cloned
// repository can carry. With every string in both holding terminal
// escapes (clear the screen, set the title, a C1 CSI), the output holds
// no control character but newlines: no field can draw on the terminal.
func TestPlantedTextNeverReachesTheTerminal(t *testing.T) {
	p, id := victim(t)
	const esc = "A\x1b[2J\x1b]0;pwn\x07B\u009b31m\rC"
	path := filepath.Join(p.wfDir(id), "checkpoint.json")
	var doc map[string]any
	if err := json.Unmarshal(p.readFile(path), &doc); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{"schema_version": true, "workflow_id": true, "status": true, "checkpoint_id": true, "created_at": true, "classified_at": true}
	var poison func(v any) any
	poison = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !keep[k] {
					v[k] = poison(x)
				}
			}
			v[esc] = esc
			return v
		case []any:
			for i := range v {
				v[i] = poison(v[i])
			}
			return append(v, esc)
		case string:
			return esc
		}
		return v
	}
	doc = poison(doc).(map[string]any)
	delete(doc, esc) // no unknown top-level key: the schema refuses one
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var events strings.Builder
	for _, kind := range []string{"init", "transition", "error", "retry", "rewind", "gate", "approve", "reject", "pause", "unpause", "cancel", "finish", "worker", "agent_launch", "agent_start", "agent_stop", esc} {
		ev := map[string]any{"ts": "2026-01-02T03:04:05Z", "event": kind, "states": []string{esc}, "retry": 1, "max": 2}
		for _, k := range []string{"from", "to", "state", "error", "reason", "by", "note", "message", "status", "worker_id", "agent_type", "agent_id", "supervisor", "backup", "session_id"} {
			ev[k] = esc
		}
		line, _ := json.Marshal(ev)
		events.Write(append(line, '\n'))
	}
	appendRaw(t, filepath.Join(p.wfDir(id), "events.jsonl"), events.String())
	for _, c := range [][]string{{"status"}, {"list"}, {"history"}, {"sm-status"}} {
		r := p.run(args(c...))
		if r.Code != 0 {
			t.Errorf("%s: %s", c[0], r)
		}
		for _, out := range []string{r.Stdout, r.Stderr} {
			if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
				t.Errorf("%s (exit %d) prints a control character: %q", c[0], r.Code, out[max(0, i-40):min(len(out), i+40)])
			}
		}
	}
}
