package statefile

import (
	"fmt"
	"io"
	"strings"
)

// Quote renders s as one shell word that every POSIX shell (dash and
// sh, bash also in posix mode, zsh, ksh, busybox ash) reads as exactly s,
// expanding and running nothing:
//
//   - bare, when every byte is one no shell gives a meaning (isPlain);
//   - else in double quotes, when s holds none of $ ` \ " ! (the bytes
//     a shell reads inside them, ! for an interactive bash's or zsh's
//     history), as the bash libraries wrote their state files;
//   - else in single quotes, inside which every byte is itself, each '
//     of s written \' between two quoted runs.
//
// Every byte of s but NUL is written as it is, newlines and bytes past
// 0x7f included: no escape sequence means the same in every shell (dash
// has no $'...'), and no shell's multibyte reading can take a closing
// quote into a character (no encoding has " or ' as a trailing byte).
// So a value with a newline is a word over several lines. A quoted run
// never ends right where another begins, which zsh with RC_QUOTES would
// read as a quote inside one run: a quote of s stands between them, as
// \'. NUL cannot be represented and must be rejected before.
func Quote(s string) string {
	if isPlain(s) && s != "" {
		return s
	}
	return string(appendQuoted(make([]byte, 0, len(s)+3), s))
}

// QuoteAlways is Quote with a plain value quoted too, "v": the shape of
// the bash libraries' state files (export KEY="value"), which commands
// grep.
func QuoteAlways(s string) string {
	return string(appendQuoted(make([]byte, 0, len(s)+3), s))
}

// appendQuoted appends s in double quotes or, when a byte of s means
// something inside them, in single quotes.
func appendQuoted(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "$`\\\"!") {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	for i, run := range strings.Split(s, "'") {
		if i > 0 {
			b = append(b, '\\', '\'')
		}
		if run != "" {
			b = append(b, '\'')
			b = append(b, run...)
			b = append(b, '\'')
		}
	}
	return b
}

// isPlain is true when no byte of s means anything to a shell in an
// assignment word. '~' and '=' are excluded because bash expands a tilde
// after '=' or ':' in assignments, and zsh a word starting with '='.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		switch c {
		case '_', '@', ',', '-', '.', '/', '+', '%':
			continue
		}
		return false
	}
	return true
}

// Bounds on what state-load hands the shell. The kernel refuses to exec
// a program when one environment string is over 128 KiB
// (MAX_ARG_STRLEN) or all of them with the arguments exceed the
// argument space (about 2 MiB with the default stack limit): every later
// command of the block would fail with "Argument list too long".
const (
	// MaxLoadValue bounds one KEY=value that state-load prints, exported
	// or not: under `set -a` every assignment is exported. Longer values
	// stay reachable with state-get.
	MaxLoadValue = 64 << 10
	// MaxExportTotal bounds what state-load --export adds to the
	// environment in all, leaving room for the environment a block
	// already has and for its commands' arguments.
	MaxExportTotal = 1 << 20
)

// LoadOptions say how state-load hands the state to a shell.
type LoadOptions struct {
	// Export prints `export KEY=value`; else plain `KEY=value`
	// assignments, which no later command sees in its environment.
	Export bool
	// Getenv reads the environment state-load runs in: the variables the
	// evaluating shell exports.
	Getenv func(string) string
	// Own reports the keys flowstate derives from the checkpoint
	// (WORKFLOW_ID, CLAUDE_PROJECT_DIR, ...), which it always sets.
	Own func(key string) bool
	// Render, when set, writes a variable's lines instead of
	// `[export ]KEY=value`, quoting the value with Quote or QuoteAlways:
	// the compat layer's state file writes two a variable.
	Render func(b []byte, key, value string) []byte
}

// WriteLoad writes the state as lines for eval, sorted by key, and
// returns a warning for each key it leaves out. It is the one place that
// decides what reaches the shell:
//
//   - a reserved key (Reserved) never does, whatever the state file says:
//     a cloned repository's file may hold BASH_ENV;
//   - a KEY=value longer than MaxLoadValue never does;
//   - without Export, lines are plain assignments, and a stored key the
//     environment already holds with another value is left out: assigning
//     to an exported name changes the environment of every later command,
//     which only --export may do;
//   - with Export, lines export, up to MaxExportTotal bytes in all.
//
// What is left out stays readable with state-get. The key order of a
// parsed state spares most of the sort.
func (s State) WriteLoad(w io.Writer, opt LoadOptions) ([]string, error) {
	lw := loadWriter{opt: opt, buf: make([]byte, 0, loadChunk+512)}
	for _, k := range s.Keys() {
		if err := lw.add(w, k, s.Values[k]); err != nil {
			return lw.warnings, err
		}
	}
	if len(lw.buf) == 0 {
		return lw.warnings, nil
	}
	_, err := w.Write(lw.buf)
	return lw.warnings, err
}

// loadChunk is how much output WriteLoad collects before a write:
// state-load of 10,000 keys would otherwise build a 600 KB string, and in
// a process that lives a few milliseconds every fresh heap page is a
// page fault.
const loadChunk = 32 << 10

// loadWriter renders WriteLoad's lines into one reused buffer: no string
// per quoted value.
type loadWriter struct {
	opt      LoadOptions
	buf      []byte
	exported int
	warnings []string
}

func (lw *loadWriter) add(w io.Writer, k, v string) error {
	if why := lw.leaveOut(k, v); why != "" {
		lw.warnings = append(lw.warnings, fmt.Sprintf("%s not loaded: %s; read it with `flowstate state-get %s`", k, why, k))
		return nil
	}
	if lw.opt.Export {
		lw.exported += len(k) + 1 + len(v)
	}
	if lw.opt.Render != nil {
		lw.buf = lw.opt.Render(lw.buf, k, v)
	} else {
		lw.buf = appendLine(lw.buf, lw.opt.Export, k, v)
	}
	if len(lw.buf) < loadChunk {
		return nil
	}
	_, err := w.Write(lw.buf)
	lw.buf = lw.buf[:0]
	return err
}

// appendLine appends `[export ]k=v` and a newline, v quoted by Quote.
func appendLine(b []byte, export bool, k, v string) []byte {
	if export {
		b = append(b, "export "...)
	}
	b = append(b, k...)
	b = append(b, '=')
	if v != "" && isPlain(v) {
		b = append(b, v...)
	} else {
		b = appendQuoted(b, v)
	}
	return append(b, '\n')
}

// leaveOut says why k=v must not reach the shell, or "".
func (lw *loadWriter) leaveOut(k, v string) string {
	own := lw.opt.Own != nil && lw.opt.Own(k)
	if why, ok := Reserved(k); ok && !own {
		return "a reserved name (" + why + ")"
	}
	size := len(k) + 1 + len(v)
	switch {
	case size > MaxLoadValue:
		return fmt.Sprintf("%d KiB is more than the %d KiB state-load hands a shell", size>>10, MaxLoadValue>>10)
	case lw.opt.Export && lw.exported+size > MaxExportTotal:
		return fmt.Sprintf("the exports would pass %d KiB, more than an environment can safely carry", MaxExportTotal>>10)
	case !lw.opt.Export && !own && lw.opt.Getenv != nil:
		if env := lw.opt.Getenv(k); env != "" && env != v {
			return "the shell exports it with another value; pass --export to change the environment"
		}
	}
	return ""
}
