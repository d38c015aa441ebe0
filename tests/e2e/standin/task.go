package standin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// task is a parsed ```task block (command protocol, section 3).
type task struct {
	SubagentType string
	Description  string
	ForEach      string // "i in 1..${N}" or empty
	Prompt       string
}

var taskField = regexp.MustCompile(`^(\s*)([a-z_]+):\s?(.*)$`)

func parseTask(body string) (task, error) {
	var t task
	lines := strings.Split(body, "\n")
	opened := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case !opened && strings.HasPrefix(trimmed, "Task") && strings.HasSuffix(trimmed, "{"):
			opened = true
			continue
		case trimmed == "}":
			continue
		}
		m := taskField.FindStringSubmatch(line)
		if m == nil {
			return t, fmt.Errorf("cannot read line %q", line)
		}
		indent, key, value := len(m[1]), m[2], strings.TrimSpace(m[3])
		if key == "prompt" && value == "|" {
			var prompt []string
			prompt, i = blockScalar(lines, i+1, indent)
			value = strings.Join(prompt, "\n")
		}
		switch key {
		case "subagent_type":
			t.SubagentType = value
		case "description":
			t.Description = value
		case "for_each":
			t.ForEach = value
		case "prompt":
			t.Prompt = value
		default:
			return t, fmt.Errorf("unknown field %q", key)
		}
	}
	if !opened || t.SubagentType == "" || t.Prompt == "" {
		return t, fmt.Errorf("need Task { subagent_type, description, prompt }")
	}
	return t, nil
}

// blockScalar collects the lines of a "prompt: |" value: every line indented
// deeper than the key (blank lines included), stopping at the closing "}".
// It returns them with the common indentation removed, and the index of the
// last line it consumed.
func blockScalar(lines []string, from, keyIndent int) ([]string, int) {
	end := from
	for end < len(lines) {
		l := lines[end]
		if strings.TrimSpace(l) != "" && indentOf(l) <= keyIndent {
			break
		}
		end++
	}
	chunk := lines[from:end]
	for len(chunk) > 0 && strings.TrimSpace(chunk[len(chunk)-1]) == "" {
		chunk = chunk[:len(chunk)-1]
	}
	common := -1
	for _, l := range chunk {
		if strings.TrimSpace(l) != "" && (common < 0 || indentOf(l) < common) {
			common = indentOf(l)
		}
	}
	out := make([]string, len(chunk))
	for k, l := range chunk {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[k] = strings.TrimRight(l, " \t")
	}
	return out, end - 1
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// invocation is one Agent tool call a task block expands to.
type invocation struct {
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	Background   bool   `json:"run_in_background"`
}

var forEachRE = regexp.MustCompile(`^([A-Za-z_]\w*)\s+in\s+(-?\d+)\.\.(-?\d+)$`)

// expand substitutes env into the task and unrolls for_each.
func (t task) expand(env map[string]string) ([]invocation, error) {
	if t.ForEach == "" {
		return []invocation{t.instance(env, "", 0)}, nil
	}
	spec := substitute(t.ForEach, env)
	m := forEachRE.FindStringSubmatch(spec)
	if m == nil {
		return nil, fmt.Errorf("for_each %q: want \"i in 1..N\" with N known", spec)
	}
	from, _ := strconv.Atoi(m[2])
	to, _ := strconv.Atoi(m[3])
	var out []invocation
	for n := from; n <= to; n++ {
		out = append(out, t.instance(env, m[1], n))
	}
	return out, nil
}

func (t task) instance(env map[string]string, loopVar string, n int) invocation {
	sub := func(s string) string {
		if loopVar != "" {
			s = strings.ReplaceAll(s, "_"+loopVar+"}", "_"+strconv.Itoa(n)+"}")
			s = strings.ReplaceAll(s, "${"+loopVar+"}", strconv.Itoa(n))
		}
		return substitute(s, env)
	}
	return invocation{SubagentType: sub(t.SubagentType), Description: sub(t.Description), Prompt: sub(t.Prompt)}
}
