package standin

import (
	"regexp"
	"strings"
)

var (
	reference = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)
	signals   = []string{"REPORT_CREATED:", "SUPERVISOR_COMPLETE:", "SUPERVISOR_FAILED:"}
)

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
