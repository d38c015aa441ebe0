package lint

import (
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/orchestrate"
	"github.com/flowstate-dev/flowstate/lib/protocol"
)

// printed is what the bash block st prints for later steps: the KEY=
// text its echo, printf and heredocs print and the keys of the flowstate
// commands it calls, leaving out what it captures, pipes on or writes to
// a file. A block that does not parse (reported as such) counts all its
// KEY= text.
func printed(st protocol.Step, s *script, into map[string]bool) {
	texts := []string{st.Body}
	if s != nil {
		texts = s.printed
	}
	for _, text := range texts {
		for _, m := range patterns().literalKey.FindAllStringSubmatch(text, -1) {
			into[m[1]] = true
		}
		for _, m := range patterns().indexedKey.FindAllStringSubmatch(text, -1) {
			into[m[1]+"_i"] = true
		}
	}
	if s == nil {
		return
	}
	for _, c := range s.calls {
		if c.hidden {
			continue
		}
		for _, k := range printers()[c.sub].Keys {
			into[k] = true
		}
	}
}

// tasks: every task block runs its agents in the foreground, comes right
// after the bash block that prints its values (or after task blocks that
// do, or starts a section a block jumps to), and uses only values printed before it; ${KEY_i} and
// ${i} only in a for_each.
func (l *linter) tasks() {
	starts := map[int]bool{}
	for _, i := range l.doc.Sections {
		starts[i] = true
	}
	have := map[string]bool{}
	for i, st := range l.doc.Steps {
		switch {
		case st.Bash():
			printed(st, l.scripts[i], have)
		case st.Launch != nil:
			l.launch(i, starts, have)
		default:
			l.task(i, starts, have)
		}
	}
}

// task checks the task block of step i, given the keys printed before
// it (have) and the steps that start a section (starts).
func (l *linter) task(i int, starts map[int]bool, have map[string]bool) {
	st := l.doc.Steps[i]
	t := st.Task
	if !t.Foreground {
		l.add(st.Line, "task block without run_in_background: false: Claude Code would run its agents in the background and the next block would find no results; add the line run_in_background: false")
	}
	uses := false
	reported := map[string]bool{}
	report := func(line int, ref, format string, a ...any) {
		if !reported[ref] {
			reported[ref] = true
			l.add(line, format, a...)
		}
	}
	for k, text := range strings.Split(st.Body, "\n") {
		line := st.Line + 1 + k
		if v, ok := strings.CutPrefix(strings.TrimSpace(text), "for_each:"); ok && !protocol.ForEachWritten(strings.TrimSpace(v)) {
			l.add(line, "for_each: %s: write for_each: i in 1..${COUNT}, COUNT printed by the block before, or a number", strings.TrimSpace(v))
		}
		for _, key := range protocol.KeyRefs(text) {
			uses = true
			if !have[key] {
				report(line, key, "${%s} is printed by no bash block before this task block: make the block before it print %s=<value> (echo \"%s=...\")", key, key, key)
			}
		}
		for _, key := range protocol.LoopRefs(text) {
			uses = true
			ref := "${" + key + "_i}"
			switch {
			case t.ForEach == "":
				report(line, ref, "%s outside a for_each: add for_each: i in 1..${COUNT}, or use a plain ${KEY}", ref)
			case !have[key+"_i"]:
				report(line, ref, "%s is printed by no bash block before this task block: make the block before it print %s_1=, %s_2=, ... (one per i)", ref, key, key)
			}
		}
		if strings.Contains(text, "${i}") && t.ForEach == "" {
			report(line, "${i}", "${i} outside a for_each: add for_each: i in 1..${COUNT}, or drop ${i}")
		}
	}
	if uses && !l.fed(i, starts) {
		l.add(st.Line, "a task block must come right after the bash block that prints its values (or after task blocks that do, in its section), or start a ## section a block jumps to: put a bash block before it")
	}
}

// launch: a workflow block uses only values printed before it, comes
// right after the bash block that prints them (or starts a section a
// block jumps to), and its file has the section a model goes on at when
// Claude Code refuses the Workflow call as unavailable.
func (l *linter) launch(i int, starts map[int]bool, have map[string]bool) {
	st := l.doc.Steps[i]
	reported := map[string]bool{}
	for k, text := range strings.Split(st.Body, "\n") {
		for _, key := range protocol.KeyRefs(text) {
			if !have[key] && !reported[key] {
				reported[key] = true
				l.add(st.Line+1+k, "${%s} is printed by no bash block before this workflow block: make the block before it print %s=<value>", key, key)
			}
		}
	}
	if len(reported) == 0 && len(protocol.KeyRefs(st.Body)) > 0 && i > 0 && !l.doc.Steps[i-1].Bash() && !starts[i] {
		l.add(st.Line, "a workflow block must come right after the bash block that prints its values, or start a ## section a block jumps to: put a bash block before it")
	}
	if _, ok := l.doc.Sections[orchestrate.StepsSection]; !ok {
		l.add(st.Line, "a workflow block, and the file has no section \"## %s\": where the Workflow tool is off Claude Code refuses the call and the model goes on there; add it with the block `flowstate phase-launched --steps`", orchestrate.StepsSection)
	}
	if i == len(l.doc.Steps)-1 || !l.doc.Steps[i+1].Bash() {
		l.add(st.Line, "a workflow block must be followed by a bash block: the model runs it once Claude Code notifies it that the workflow ended (flowstate phase-launched)")
	}
}

// fed reports whether the task block at step i comes right after a bash
// block, or starts a section, or follows task blocks that do: the task
// blocks of one batch (in the project's tree, in worktrees) take the
// values of one bash block.
func (l *linter) fed(i int, starts map[int]bool) bool {
	for ; i > 0; i-- {
		switch prev := l.doc.Steps[i-1]; {
		case starts[i] || prev.Bash():
			return true
		case prev.Task == nil:
			return false // after a workflow block
		}
	}
	return false
}

// jumps: every NEXT= a bash block can print, literally or through the
// flowstate commands it calls, names a ## section of the file, or done.
func (l *linter) jumps() {
	fileFlags := map[string]bool{}
	for _, s := range l.scripts {
		for _, c := range callsOf(s) {
			for f := range c.flags {
				fileFlags[f] = true
			}
		}
	}
	lands := func(section string) bool {
		_, ok := l.doc.Sections[section]
		return ok || section == "done"
	}
	for i, st := range l.doc.Steps {
		if !st.Bash() {
			continue
		}
		for k, text := range strings.Split(st.Body, "\n") {
			for _, m := range patterns().literalNext.FindAllStringSubmatch(text, -1) {
				if !lands(m[1]) {
					l.add(st.Line+1+k, "NEXT=%s, and the file has no section \"## %s\": add it, or print NEXT= with a section of the file (or done)", m[1], m[1])
				}
			}
		}
		var missing []string
		for _, c := range callsOf(l.scripts[i]) {
			for _, j := range printers()[c.sub].Next {
				if j.Possible(c.flags, fileFlags) && !lands(j.Section) && !slices.Contains(missing, j.Section) {
					missing = append(missing, j.Section)
					l.add(st.Line+c.line, "flowstate %s can print NEXT=%s, and the file has no section \"## %s\": add it", c.sub, j.Section, j.Section)
				}
			}
		}
	}
}

func callsOf(s *script) []call {
	if s == nil {
		return nil
	}
	return s.calls
}
