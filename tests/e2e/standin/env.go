package standin

import (
	"regexp"
	"strings"
)

var (
	kvLine    = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	reference = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)
	signals   = []string{"REPORT_CREATED:", "SUPERVISOR_COMPLETE:", "SUPERVISOR_FAILED:"}
)

// keyValues returns the KEY=VALUE lines of a step's output, in order; the
// newest value of a key wins when they are merged into the environment.
func keyValues(out string) [][2]string {
	var kvs [][2]string
	for _, line := range strings.Split(out, "\n") {
		if m := kvLine.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil {
			kvs = append(kvs, [2]string{m[1], m[2]})
		}
	}
	return kvs
}

// lastSignal is the last completion-signal line in out, or "".
func lastSignal(out string) string {
	found := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, s := range signals {
			if strings.HasPrefix(line, s) {
				found = line
			}
		}
	}
	return found
}

// substitute replaces ${KEY} with its value; unknown keys stay as written, as a
// literal-minded model would leave them.
func substitute(s string, env map[string]string) string {
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := env[reference.FindStringSubmatch(ref)[1]]; ok {
			return v
		}
		return ref
	})
}
