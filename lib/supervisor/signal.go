package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// Completion signals of the protocol (section 4): an agent's final answer.
const (
	ReportCreated      = "REPORT_CREATED"
	SupervisorComplete = "SUPERVISOR_COMPLETE"
	SupervisorFailed   = "SUPERVISOR_FAILED"
)

// Signal is one completion signal found in agent output: Path for
// REPORT_CREATED, Data (a JSON object, compacted) for the other two.
type Signal struct {
	Signal string          `json:"signal"`
	Path   string          `json:"path,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// ParseSignals finds the signals in text, in order. A signal starts a line
// (after spaces, optionally inside `backticks`); the JSON of the supervisor
// signals may span lines, as models often pretty-print it. A signal with an
// empty path or JSON that is not one valid object is invalid, and so is text
// without any signal.
func ParseSignals(text []byte) ([]Signal, error) {
	var sigs []Signal
	for pos, line := 0, 1; pos < len(text); line++ {
		end := len(text)
		if i := bytes.IndexByte(text[pos:], '\n'); i >= 0 {
			end = pos + i
		}
		cur := string(text[pos:end])
		lead := len(cur) - len(strings.TrimLeft(cur, " \t`"))
		name, value, ok := signalPrefix(cur[lead:])
		switch {
		case !ok:
			pos = end + 1
		case name == ReportCreated:
			p := strings.Trim(strings.TrimSpace(value), "`\"'")
			if p == "" || !validText(p) {
				return nil, fail.Invalidf("line %d: %s needs a path on the same line: \"%s: /path/to/report.md\"", line, name, name)
			}
			sigs = append(sigs, Signal{Signal: name, Path: p})
			pos = end + 1
		default:
			// Decode one JSON value from just after the colon; it may run
			// onto later lines. Scanning resumes on the line after its end.
			from := pos + lead + len(name) + 1
			dec := json.NewDecoder(bytes.NewReader(text[from:]))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil || raw[0] != '{' {
				return nil, fail.Invalidf("line %d: %s must be followed by one JSON object (%s: {...}): %v", line, name, name, decodeProblem(err))
			}
			var buf bytes.Buffer
			_ = json.Compact(&buf, raw) // raw was just decoded, so it compacts
			sigs = append(sigs, Signal{Signal: name, Data: buf.Bytes()})
			to := from + int(dec.InputOffset())
			line += bytes.Count(text[pos:to], []byte("\n"))
			pos = len(text)
			if i := bytes.IndexByte(text[to:], '\n'); i >= 0 {
				pos = to + i + 1
			}
		}
	}
	if len(sigs) == 0 {
		return nil, fail.Invalidf("no completion signal: expected a line \"REPORT_CREATED: <path>\", \"SUPERVISOR_COMPLETE: {json}\" or \"SUPERVISOR_FAILED: {json}\"")
	}
	return sigs, nil
}

// signalPrefix matches "NAME:" at the start of a trimmed line.
func signalPrefix(t string) (name, value string, ok bool) {
	for _, n := range []string{ReportCreated, SupervisorComplete, SupervisorFailed} {
		if v, found := strings.CutPrefix(t, n+":"); found {
			return n, v, true
		}
	}
	return "", "", false
}

func decodeProblem(err error) string {
	if err == nil {
		return "not an object"
	}
	return err.Error()
}
