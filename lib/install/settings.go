package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/hook"
)

// hookEvents are the Claude Code events flowstate hooks (lib/hook names
// them and says how each is run).
var hookEvents = sync.OnceValue(hook.Registrations)

// hookNames names the hooked events for messages: "SessionStart, ...".
func hookNames() string {
	return strings.Join(events(), ", ")
}

// events are the hooked events, each once, in the registrations' order.
func events() []string {
	var out []string
	for _, r := range hookEvents() {
		if !slices.Contains(out, r.Event) {
			out = append(out, r.Event)
		}
	}
	return out
}

// argsOf are the hook arguments registered for event: one group each.
func argsOf(event string) []string {
	var out []string
	for _, r := range hookEvents() {
		if r.Event == event {
			out = append(out, r.Arg)
		}
	}
	return out
}

// binRel is where a project install puts the binary.
const binRel = ".claude/bin/flowstate"

// ourMarker identifies flowstate's handlers among the user's, also those
// written by older versions with other flags. isOurs is the one rule.
const ourMarker = "/" + binRel + " hook "

// isOurs is true for a handler command that runs flowstate's hook.
func isOurs(command string) bool { return strings.Contains(command, ourMarker) }

// HookCommand is the settings.json command for a hook argument. Hooks run
// with a bare PATH, so the binary is called by absolute path.
func HookCommand(arg string) string { return `"$CLAUDE_PROJECT_DIR"` + ourMarker + arg }

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

type group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []handler `json:"hooks"`
}

// groupJSON is flowstate's matcher group for one hook argument: the
// registration's matcher (none, for most: every source, reason or agent)
// and timeout.
func groupJSON(arg string) []byte {
	var g group
	for _, r := range hookEvents() {
		if r.Arg == arg {
			g = group{Matcher: r.Matcher, Hooks: []handler{{Type: "command", Command: HookCommand(arg), Timeout: r.Timeout}}}
		}
	}
	b, _ := json.Marshal(g) // plain structs always marshal
	return b
}

// addHooks returns settings with flowstate's hooks added, appending one
// group per event after the user's groups and leaving every other byte
// as it was; settings already holding exactly these hooks come back
// unchanged, so a reinstall writes nothing.
func addHooks(orig []byte) ([]byte, error) {
	doc, err := parseSettings(orig)
	if err != nil {
		return nil, err
	}
	for _, event := range events() {
		path := "hooks." + event
		if exactlyOurs(gjson.GetBytes(doc, path), argsOf(event)) {
			continue
		}
		if doc, err = removeOurs(doc, event, false); err != nil {
			return nil, err
		}
		for _, arg := range argsOf(event) {
			if doc, err = sjson.SetRawBytes(doc, path+".-1", groupJSON(arg)); err != nil {
				return nil, fmt.Errorf("settings.json: add %s hook: %w", event, err)
			}
		}
	}
	if bytes.Equal(doc, orig) {
		return orig, nil
	}
	return format(orig, doc), nil
}

// removeHooks takes flowstate's handlers out of settings, and the
// groups, event lists and hooks object that they leave empty.
func removeHooks(orig []byte) ([]byte, error) {
	doc, err := parseSettings(orig)
	if err != nil {
		return nil, err
	}
	for _, event := range events() {
		if doc, err = removeOurs(doc, event, true); err != nil {
			return nil, err
		}
	}
	if h := gjson.GetBytes(doc, "hooks"); h.IsObject() && len(h.Map()) == 0 {
		if doc, err = sjson.DeleteBytes(doc, "hooks"); err != nil {
			return nil, err
		}
	}
	if bytes.Equal(doc, orig) {
		return orig, nil
	}
	return format(orig, doc), nil
}

// missingHooks names the events whose flowstate hook is not in settings
// exactly as install writes it.
func missingHooks(settings []byte) []string {
	var out []string
	for _, event := range events() {
		if !exactlyOurs(gjson.GetBytes(settings, "hooks."+event), argsOf(event)) {
			out = append(out, event)
		}
	}
	return out
}

// hasOurs is true when settings hold a flowstate handler, found as
// exactlyOurs and removeOurs find them.
func hasOurs(settings []byte) bool {
	for _, event := range events() {
		for _, g := range gjson.GetBytes(settings, "hooks."+event).Array() {
			for _, h := range g.Get("hooks").Array() {
				if isOurs(h.Get("command").String()) {
					return true
				}
			}
		}
	}
	return false
}

func parseSettings(orig []byte) ([]byte, error) {
	doc := orig
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	if !json.Valid(doc) {
		return nil, fail.Invalidf("settings.json is not valid JSON; fix it (Claude Code ignores it too) and run again")
	}
	if !gjson.ParseBytes(doc).IsObject() {
		return nil, fail.Invalidf("settings.json is not a JSON object; fix it and run again")
	}
	if h := gjson.GetBytes(doc, "hooks"); h.Exists() && !h.IsObject() {
		return nil, fail.Invalidf("settings.json: \"hooks\" is not an object; fix it and run again")
	}
	for _, event := range events() {
		if a := gjson.GetBytes(doc, "hooks."+event); a.Exists() && !a.IsArray() {
			return nil, fail.Invalidf("settings.json: hooks.%s is not an array; fix it and run again", event)
		}
	}
	return doc, nil
}

// exactlyOurs is true when the event's list holds flowstate's handlers
// of args and no other of flowstate's, each alone in a group identical
// to the one install writes.
func exactlyOurs(list gjson.Result, args []string) bool {
	found := 0
	for _, g := range list.Array() {
		for _, h := range g.Get("hooks").Array() {
			if isOurs(h.Get("command").String()) {
				found++
			}
		}
	}
	if found != len(args) {
		return false
	}
	for _, arg := range args {
		var want any
		_ = json.Unmarshal(groupJSON(arg), &want) // our own JSON
		exact := 0
		for _, g := range list.Array() {
			// Compared as values: whoever rewrote the file may have
			// reordered keys or changed the layout.
			var have any
			if json.Unmarshal([]byte(g.Raw), &have) == nil && reflect.DeepEqual(have, want) {
				exact++
			}
		}
		if exact != 1 {
			return false
		}
	}
	return true
}

// removeOurs deletes flowstate's handlers from one event's groups, and
// with prune the groups and the event list left empty. Indices are
// visited from the end so deletions do not shift the ones still to do.
func removeOurs(doc []byte, event string, prune bool) ([]byte, error) {
	path := "hooks." + event
	groups := gjson.GetBytes(doc, path).Array()
	var err error
	for i := len(groups) - 1; i >= 0; i-- {
		hs := groups[i].Get("hooks").Array()
		removed := 0
		for j := len(hs) - 1; j >= 0; j-- {
			if !isOurs(hs[j].Get("command").String()) {
				continue
			}
			if doc, err = sjson.DeleteBytes(doc, fmt.Sprintf("%s.%d.hooks.%d", path, i, j)); err != nil {
				return nil, err
			}
			removed++
		}
		if removed > 0 && removed == len(hs) {
			if doc, err = sjson.DeleteBytes(doc, fmt.Sprintf("%s.%d", path, i)); err != nil {
				return nil, err
			}
		}
	}
	if a := gjson.GetBytes(doc, path); prune && a.Exists() && len(a.Array()) == 0 {
		return sjson.DeleteBytes(doc, path)
	}
	return doc, nil
}

// format lays out edited settings. A file in the standard layout (what
// Claude Code writes: two-space indent, like JSON.stringify(v, null, 2))
// is re-indented so the added hooks look like the rest; any other layout
// is kept as the user wrote it. The original's final newline is kept.
func format(orig, edited []byte) []byte {
	if isStandard(orig) {
		var out bytes.Buffer
		if json.Indent(&out, edited, "", "  ") == nil {
			edited = out.Bytes()
		}
	}
	edited = bytes.TrimRight(edited, " \t\r\n")
	if len(bytes.TrimSpace(orig)) == 0 || bytes.HasSuffix(orig, []byte("\n")) {
		edited = append(edited, '\n')
	}
	return edited
}

func isStandard(doc []byte) bool {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 {
		return true
	}
	var out bytes.Buffer
	return json.Indent(&out, trimmed, "", "  ") == nil && bytes.Equal(out.Bytes(), trimmed)
}
