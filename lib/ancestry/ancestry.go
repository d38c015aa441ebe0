// Package ancestry tells whether a process runs under Claude Code, and in
// which session, from the processes above it: what the person decides
// (approve, reject, unpause) a step the model runs must not decide, and a
// step can change its own environment (CLAUDE_CODE_SESSION_ID= or env -i)
// but not the environment its ancestors started with, nor which process
// started it. Claude Code starts every shell it runs (the Bash tool's,
// the person's own "!" shell) with CLAUDECODE=1 and the session's
// CLAUDE_CODE_SESSION_ID; /proc/PID/environ keeps the environment a
// process started with, whatever it did since.
//
// What it cannot see: a process that left its ancestry (a double fork,
// setsid and a parent that exits, a job handed to cron, at or systemd-run)
// is re-parented to init and looks like a person's; and on a system
// without /proc (macOS, the BSDs) only the process's own environment is
// read, as before. Judge is pure; Ancestors reads /proc.
package ancestry

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SessionVar names the Claude Code session a process runs in.
const SessionVar = "CLAUDE_CODE_SESSION_ID"

// A Proc is one ancestor as it started: its environment and the name it
// was run by.
type Proc struct {
	Env  []string // KEY=value
	Name string   // the base name of argv[0]
}

// Verdict is where a process runs.
type Verdict struct {
	// Inside: under Claude Code, in a shell it started or below one.
	Inside bool
	// Session is the session it runs in: its own, else the nearest
	// ancestor's; "" when none names one.
	Session string
}

// isClaudeCode reports whether name is Claude Code's own binary: the
// native one (claude, or claude.exe as npm installs it).
func isClaudeCode(name string) bool { return name == "claude" || name == "claude.exe" }

// Judge says where a process runs whose own session is own ("" when its
// environment names none) and whose ancestors are chain, its parent
// first. It stops at the first Claude Code process: above it, the
// environments are of whatever started Claude Code (another session, when
// Claude Code runs inside one).
func Judge(own string, chain []Proc) Verdict {
	v := Verdict{Inside: own != "", Session: own}
	for _, p := range chain {
		if isClaudeCode(p.Name) {
			v.Inside = true
			break
		}
		env := lookup(p.Env)
		if env["CLAUDECODE"] == "1" || env[SessionVar] != "" {
			v.Inside = true
		}
		if v.Session == "" {
			v.Session = env[SessionVar]
		}
	}
	return v
}

func lookup(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// maxDepth bounds the walk up: a process tree is rarely ten deep.
const maxDepth = 64

// maxRead bounds what is read of one /proc file: an environment over it
// is cut, which can only lose variables of no interest at its end.
const maxRead = 1 << 20

// Ancestors reads the ancestors of process pid from /proc, its parent
// first, up to init or the first it may not read; nil without /proc.
func Ancestors(pid int) []Proc {
	var chain []Proc
	for range maxDepth {
		ppid, ok := parent(pid)
		if !ok || ppid <= 1 {
			break
		}
		pid = ppid
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		env, err := read(filepath.Join(dir, "environ"))
		if err != nil {
			break // another user's, or gone
		}
		argv, _ := read(filepath.Join(dir, "cmdline"))
		argv0, _, _ := bytes.Cut(argv, []byte{0})
		chain = append(chain, Proc{Env: split(env), Name: filepath.Base(string(argv0))})
	}
	return chain
}

// parent is the parent of pid, from /proc/PID/stat: the field after the
// command name, which is in parentheses and may hold any byte.
func parent(pid int) (int, bool) {
	stat, err := read(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxRead))
}

func split(env []byte) []string {
	var out []string
	for _, kv := range bytes.Split(env, []byte{0}) {
		if len(kv) > 0 {
			out = append(out, string(kv))
		}
	}
	return out
}
