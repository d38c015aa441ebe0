package install

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/hook"
)

// ours are flowstate's handler commands for each event, as addHooks
// writes them, in order.
var ours = func() map[string][]string {
	m := map[string][]string{}
	for _, r := range hookEvents() {
		m[r.Event] = append(m[r.Event], HookCommand(r.Arg))
	}
	return m
}()

// eventNames are flowstate's hook events in the order install adds them.
func eventNames() []string { return events() }

// allOurs is the members of a "hooks" object holding exactly flowstate's
// groups for every event, with extra groups (raw JSON, by event) before
// ours, as addHooks leaves them.
func allOurs(before map[string]string) string {
	var parts []string
	for _, event := range events() {
		var groups []string
		if b, ok := before[event]; ok {
			groups = append(groups, b)
		}
		for _, arg := range argsOf(event) {
			groups = append(groups, string(groupJSON(arg)))
		}
		parts = append(parts, `"`+event+`":[`+strings.Join(groups, ",")+`]`)
	}
	return strings.Join(parts, ",")
}

// userStart and userEnd are a user's own hooks on the events flowstate
// hooks too.
const (
	userStart = `{"matcher":"startup|resume","hooks":[{"type":"command","command":"echo 'export MY_VAR=1' >> \"$CLAUDE_ENV_FILE\""}]}`
	userEnd   = `{"hooks":[{"type":"command","command":"$HOME/bin/log-session-end","timeout":5}]}`
)

// older is settings written by an older flowstate: other flags, a timeout
// on SessionEnd, one handler alone in its group and one sharing a group
// with the user's, and a user's event after them.
const older = `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/bin/flowstate hook session-start --quiet"
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/bin/flowstate hook session-end",
            "timeout": 2
          },
          {
            "type": "command",
            "command": "date >> /tmp/ended"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "check-bash"
          }
        ]
      }
    ]
  }
}
`

// fixtures are settings files as users have them. clean is what
// removeHooks must give for the file with flowstate's hooks added; ""
// means the fixture itself, byte for byte.
var fixtures = []struct {
	name, settings, clean string
}{
	{name: "missing file", settings: "", clean: "{}\n"}, // install deletes the file it created instead
	{name: "empty object", settings: "{}\n"},
	{name: "no final newline", settings: "{\n  \"model\": \"sonnet\"\n}"},
	{name: "compact", settings: `{"zzz":1,   "aaa":{"nested":[1,2,{"k":null}]},` + "\n\t" + `"model":"sonnet", "unknownKey": {"x": true}}`},
	{name: "schema permissions model", settings: `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "claude-opus-4",
  "permissions": {
    "allow": [
      "Bash(go test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": [
      "Bash(curl:*)"
    ],
    "defaultMode": "acceptEdits"
  },
  "env": {
    "FOO": "bar"
  }
}
`},
	{name: "unicode and escapes", settings: `{
  "statusLine": {
    "type": "command",
    "command": "echo '✓ héllo 世界 🚀'"
  },
  "env": {
    "GREETING": "caf\u00e9 \"quoted\" back\\slash",
    "EMPTY": ""
  },
  "companyAnnouncements": [
    "Ünïcödé — dashes – and “quotes”",
    "line\nbreak\ttab"
  ]
}
`},
	{name: "user hooks on the same events", settings: `{
  "hooks": {
    "SessionStart": [
      ` + userStart + `
    ],
    "SessionEnd": [
      ` + userEnd + `
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "check-bash"
          }
        ]
      }
    ]
  }
}
`},
	{name: "empty event list left by the user", settings: `{"hooks":{"SessionStart":[]},"model":"sonnet"}`,
		clean: `{"model":"sonnet"}`},
	{name: "hooks of an older flowstate", settings: older, clean: `{
  "hooks": {
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "date >> /tmp/ended"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "check-bash"
          }
        ]
      }
    ]
  }
}
`}}

// mustEdit runs an edit that must succeed and returns valid JSON.
func mustEdit(t *testing.T, name string, edit func([]byte) ([]byte, error), in []byte) []byte {
	t.Helper()
	out, err := edit(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !json.Valid(out) {
		t.Fatalf("%s gave invalid JSON:\n%s", name, out)
	}
	return out
}

// TestAddIsIdempotentAndRemoveUndoesIt: added twice is added once, the
// result holds exactly flowstate's hooks, and removing them gives back
// the user's file byte for byte.
func TestAddIsIdempotentAndRemoveUndoesIt(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			orig := []byte(f.settings)
			added := mustEdit(t, "addHooks", addHooks, orig)
			if again := mustEdit(t, "addHooks again", addHooks, added); string(again) != string(added) {
				t.Errorf("second add changed the file:\n%s\nwant\n%s", again, added)
			}
			if m := missingHooks(added); len(m) > 0 {
				t.Errorf("after add, missing %v in\n%s", m, added)
			}
			want := f.clean
			if want == "" {
				want = f.settings
			}
			if got := mustEdit(t, "removeHooks", removeHooks, added); string(got) != want {
				t.Errorf("remove(add(x)):\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestUserHooksKeptFirst: the user's groups on flowstate's events stay as
// they were and run before flowstate's, whose group is the last.
func TestUserHooksKeptFirst(t *testing.T) {
	settings := `{"hooks":{"SessionStart":[` + userStart + `],"SessionEnd":[` + userEnd + `]}}`
	added := mustEdit(t, "addHooks", addHooks, []byte(settings))
	for ev, user := range map[string]string{"SessionStart": userStart, "SessionEnd": userEnd} {
		groups := gjson.GetBytes(added, "hooks."+ev).Array()
		if len(groups) != 2 {
			t.Fatalf("%s has %d groups, want the user's and flowstate's:\n%s", ev, len(groups), added)
		}
		if !sameJSON(groups[0].Raw, user) {
			t.Errorf("%s: first group is %s, want the user's %s", ev, groups[0].Raw, user)
		}
		if cmd := groups[1].Get("hooks.0.command").String(); cmd != ours[ev][0] {
			t.Errorf("%s: last group runs %q, want %q", ev, cmd, ours[ev][0])
		}
	}
}

// TestOlderHooksReplaced: an older flowstate's handlers give way to the
// current ones in place: a user's handler that shared their group stays,
// and the events keep their order in the file.
func TestOlderHooksReplaced(t *testing.T) {
	added := mustEdit(t, "addHooks", addHooks, []byte(older))
	var events []string
	commands := map[string][]string{}
	gjson.GetBytes(added, "hooks").ForEach(func(ev, groups gjson.Result) bool {
		events = append(events, ev.String())
		for _, c := range groups.Get("#.hooks.#.command|@flatten").Array() {
			commands[ev.String()] = append(commands[ev.String()], c.String())
		}
		return true
	})
	want := map[string][]string{}
	for ev, cmds := range ours {
		want[ev] = cmds
	}
	want["SessionEnd"] = append([]string{"date >> /tmp/ended"}, ours["SessionEnd"]...)
	want["PreToolUse"] = append([]string{"check-bash"}, ours["PreToolUse"]...)
	if !slices.Equal(events, eventNames()) || !reflect.DeepEqual(commands, want) {
		t.Errorf("events %q with commands %q, want %q in\n%s", events, commands, want, added)
	}
}

// TestReinstallWritesNothing: settings that already hold exactly
// flowstate's hooks come back as they are, wherever the user moved them
// and however the file is laid out, so a reinstall does not touch it.
func TestReinstallWritesNothing(t *testing.T) {
	start, end := string(groupJSON("session-start")), string(groupJSON("session-end"))
	rest := strings.TrimPrefix(allOurs(nil), `"SessionStart":[`+start+`],"SessionEnd":[`+end+`]`)
	for _, settings := range []string{
		`{"hooks":{"SessionStart":[` + start + `,` + userStart + `],"SessionEnd":[` + end + `]` + rest + `}}`,
		`{"hooks":{"SessionEnd":[` + end + `],"SessionStart":[` + start + `]` + rest + `}}` + "\n\n",
		`{ "hooks" : { "SessionStart" : [ ` + start + ` ] , "SessionEnd" : [ ` + end + ` ] ` + rest + ` } }  `,
	} {
		if got := mustEdit(t, "addHooks", addHooks, []byte(settings)); string(got) != settings {
			t.Errorf("addHooks changed\n%q\nto\n%q", settings, got)
		}
	}
}

// TestMissingHooks names the events whose hook is not exactly install's;
// a group is compared as a value, so key order and layout do not count.
func TestMissingHooks(t *testing.T) {
	start, end := string(groupJSON("session-start")), string(groupJSON("session-end"))
	rest := strings.TrimPrefix(allOurs(nil), `"SessionStart":[`+start+`],"SessionEnd":[`+end+`]`)
	both := eventNames()
	for _, c := range []struct {
		name, settings string
		want           []string
	}{
		{"no file", "", both},
		{"no hooks", `{"model":"sonnet"}`, both},
		{"all", `{"hooks":{` + allOurs(nil) + `}}`, nil},
		{"after the user's", `{"hooks":{` + allOurs(map[string]string{"SessionStart": userStart, "SessionEnd": userEnd}) + `}}`, nil},
		{"only start", `{"hooks":{"SessionStart":[` + start + `]}}`, both[1:]},
		{"reordered keys and layout", `{"hooks":{"SessionEnd":[{"hooks":[{"command":` + jsonString(ours["SessionEnd"][0]) + `,
			"type":"command"}]}],"SessionStart":[` + start + `]` + rest + `}}`, nil},
		{"twice", `{"hooks":{"SessionStart":[` + start + `,` + start + `],"SessionEnd":[` + end + `]` + rest + `}}`, []string{"SessionStart"}},
		{"other timeout", `{"hooks":{"SessionStart":[` + strings.Replace(start, `"timeout":30`, `"timeout":5`, 1) + `],"SessionEnd":[` + end + `]` + rest + `}}`, []string{"SessionStart"}},
		{"sharing a group with the user's", `{"hooks":{"SessionStart":[` + start + `],"SessionEnd":[{"hooks":[` + gjson.Get(end, "hooks.0").Raw + `,{"type":"command","command":"x"}]}]` + rest + `}}`, []string{"SessionEnd"}},
		{"with a matcher", `{"hooks":{"SessionStart":[` + strings.Replace(start, `{`, `{"matcher":"startup",`, 1) + `],"SessionEnd":[` + end + `]` + rest + `}}`, []string{"SessionStart"}},
	} {
		if got := missingHooks([]byte(c.settings)); !slices.Equal(got, c.want) {
			t.Errorf("%s: missingHooks = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRefusedSettings: a file Claude Code cannot read either, or whose
// hooks are not where install writes, is refused by both edits with a
// message saying what to fix; nothing is guessed.
func TestRefusedSettings(t *testing.T) {
	for _, c := range []struct{ name, settings, msg string }{
		{"not JSON", `{"model": "sonnet",}`, "not valid JSON"},
		{"truncated", `{"hooks": {`, "not valid JSON"},
		{"an array", `[]`, "not a JSON object"},
		{"a string", `"settings"`, "not a JSON object"},
		{"hooks a string", `{"hooks": "none"}`, `"hooks" is not an object`},
		{"hooks an array", `{"hooks": []}`, `"hooks" is not an object`},
		{"hooks null", `{"hooks": null}`, `"hooks" is not an object`},
		{"event an object", `{"hooks": {"SessionEnd": {}}}`, "hooks.SessionEnd is not an array"},
	} {
		for name, edit := range map[string]func([]byte) ([]byte, error){"addHooks": addHooks, "removeHooks": removeHooks} {
			out, err := edit([]byte(c.settings))
			if err == nil || fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), c.msg) || out != nil {
				t.Errorf("%s: %s = %q, %v; want an invalid-input error saying %q", c.name, name, out, err, c.msg)
			}
		}
	}
}

// TestLayout: a file in Claude Code's layout is re-indented like it, any
// other layout is kept as the user wrote it, and the final newline
// follows the original.
func TestLayout(t *testing.T) {
	hooks := `"hooks":{` + allOurs(nil) + `}`
	indented := func(s string) string {
		var b bytes.Buffer
		_ = json.Indent(&b, []byte(s), "", "  ") // the cases' own JSON
		return b.String()
	}
	for _, c := range []struct{ name, settings, want string }{
		{"missing file", "", indented(`{`+hooks+`}`) + "\n"},
		{"standard", "{\n  \"model\": \"x\"\n}\n", indented(`{"model":"x",`+hooks+`}`) + "\n"},
		{"standard without newline", "{\n  \"model\": \"x\"\n}", indented(`{"model":"x",` + hooks + `}`)},
		{"compact", `{"model":"x"}`, `{"model":"x",` + hooks + `}`},
		{"compact with newline", "{\"model\":\"x\"}\n", `{"model":"x",` + hooks + "}\n"},
	} {
		if got := mustEdit(t, c.name, addHooks, []byte(c.settings)); string(got) != c.want {
			t.Errorf("%s: addHooks =\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

func sameJSON(a, b string) bool {
	var va, vb any
	return json.Unmarshal([]byte(a), &va) == nil && json.Unmarshal([]byte(b), &vb) == nil && reflect.DeepEqual(va, vb)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// TestHasOurs: whether settings already hold flowstate's hooks (so
// install takes no backup) follows the rule removeOurs and exactlyOurs
// follow: a handler under flowstate's events whose command has ourMarker.
func TestHasOurs(t *testing.T) {
	start := string(groupJSON(hook.SessionStart))
	for _, c := range []struct {
		name, settings string
		want           bool
	}{
		{"no file", "", false},
		{"the user's only", `{"hooks":{"SessionStart":[` + userStart + `],"SessionEnd":[` + userEnd + `]}}`, false},
		{"ours after the user's", `{"hooks":{"SessionStart":[` + userStart + `,` + start + `]}}`, true},
		{"an older one of ours", older, true},
		{"mentioned in another key", `{"env":{"X":".claude/bin/flowstate hook session-start"}}`, false},
		{"without the marker's slash", `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":".claude/bin/flowstate hook session-start"}]}]}}`, false},
	} {
		if got := hasOurs([]byte(c.settings)); got != c.want {
			t.Errorf("%s: hasOurs = %v, want %v", c.name, got, c.want)
		}
		if c.settings == "" {
			continue // removeHooks writes "{}" for no file
		}
		removed, err := removeHooks([]byte(c.settings))
		if changed := !bytes.Equal(removed, []byte(c.settings)); err != nil || changed != c.want {
			t.Errorf("%s: hasOurs = %v, but removeHooks changed the settings: %v (%v)", c.name, c.want, changed, err)
		}
	}
}
