package protocol

// Prints is what a flowstate command can print for the steps after the
// bash block that calls it: the keys of its KEY=VALUE lines, KEY_i
// standing for KEY_1, KEY_2, ... (NEXT aside), and the sections its NEXT=
// can name ("done" aside). flowstate lint checks a command file's task
// blocks and jumps against it.
type Prints struct {
	Keys []string
	Next []Jump
}

// A Jump is a section a command's NEXT= can name, and the flags that
// decide whether it can: With, when set, is a flag of the call without
// which the section is never named; Without are flags of the call with
// which it never is; Mode are flags that set a mode the workflow keeps
// from the call that started it (--sequential), so that given to any
// flowstate call of the same file, they rule the section out too;
// InFile, when set, is a flag without which no flowstate call of the
// file can lead there (--launch: the command runs on the workflow
// engine only when its start says so).
type Jump struct {
	Section string
	With    string
	Without []string
	Mode    []string
	InFile  string
}

// Possible reports whether a call given the flags call, in a file whose
// flowstate calls are given the flags file, can name j.Section.
func (j Jump) Possible(call, file map[string]bool) bool {
	if j.With != "" && !call[j.With] || j.InFile != "" && !file[j.InFile] {
		return false
	}
	for _, f := range j.Without {
		if call[f] {
			return false
		}
	}
	for _, f := range j.Mode {
		if file[f] {
			return false
		}
	}
	return true
}
