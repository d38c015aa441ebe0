package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A state-load's output and the compat layer's state file are read by
// whatever shell a person or a command runs: sh (dash on Debian; Makefile
// recipes, sh -c, #!/bin/sh scripts), bash (also in posix mode), zsh,
// ksh, busybox's ash, and an interactive shell a person pastes them into,
// where ! means history. Each is tried where it is installed; with
// FLOWSTATE_REQUIRE_SHELLS set (test.sh installs them), a missing one
// fails instead.
var shells = []struct {
	name string
	argv []string
	// interactive shells read the assignments as typed input, where
	// history expansion applies; the others source the file, and eval
	// it as eval "$(flowstate state-load)" does.
	interactive bool
}{
	{"sh", []string{"sh"}, false},
	{"dash", []string{"dash"}, false},
	{"bash", []string{"bash", "--norc", "--noprofile"}, false},
	{"bash --posix", []string{"bash", "--posix", "--norc", "--noprofile"}, false},
	{"zsh", []string{"zsh", "-f"}, false},
	{"zsh as sh", []string{"zsh", "--emulate", "sh", "-f"}, false},
	{"zsh, rc_quotes", []string{"zsh", "-f", "-o", "rcquotes"}, false},
	{"ksh", []string{"ksh"}, false},
	{"mksh", []string{"mksh"}, false},
	{"busybox ash", []string{"busybox", "ash"}, false},
	{"posh", []string{"posh"}, false},
	{"bash, interactive", []string{"bash", "--norc", "--noprofile", "-i"}, true},
	{"zsh, interactive", []string{"zsh", "-f", "-i"}, true},
}

// shellValues are hostile values: quotes of both kinds and runs of them,
// backslashes, newlines, expansions, history, globs, bytes that are no
// UTF-8 and bytes that multibyte encodings read as a character with the
// quote or backslash after them, every byte at once, a long value.
func shellValues() []string {
	all := make([]byte, 0, 255)
	for c := 1; c < 256; c++ {
		all = append(all, byte(c))
	}
	long := strings.Repeat("x'; touch PWNED # \"$(touch PWNED)\" `touch PWNED` \\ ! \n", 500)
	return append(append([]string(nil), hostile...), "x'; touch PWNED #", `x"; touch PWNED #`, "'", "''", `'\''`, `"'"`, `\`, `\\`,
		"!", "!!", "!$", "a!b", "!-1", "^a^b", "a\\\nb", "line\n", "\n\n", "=ls", "#", "a#b", "(x)", "<(touch PWNED)",
		"$((1+1))", "${V:=x}", "$'\\x41'", "%s%n", "\xe0'", "\x81\\", "\x81'", "\x81\"", "\x81`", "\xc3", "\xff\xfe",
		"\x1b[31mred\x1b[0m", string(all), strings.Repeat(string(all), 3), long)
}

// TestQuoteInEveryShell: every value round-trips byte for byte through
// every installed shell, as each line form flowstate writes (state-load's
// KEY=value and export KEY=value, the compat state file's always quoted
// export KEY="value"), in the C, UTF-8 and (where they can be built)
// Big5 and Shift_JIS locales, and nothing runs: a value that ran would
// touch PWNED.
func TestQuoteInEveryShell(t *testing.T) {
	values := shellValues()
	bin := t.TempDir()
	for _, tool := range []string{"printf", "cat", "touch"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	ran := 0
	for _, sh := range shells {
		if _, err := exec.LookPath(sh.argv[0]); err != nil {
			if os.Getenv("FLOWSTATE_REQUIRE_SHELLS") != "" {
				t.Errorf("%s is not installed (FLOWSTATE_REQUIRE_SHELLS is set)", sh.argv[0])
			}
			continue
		}
		ran++
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			for _, locale := range testLocales(t) {
				for _, how := range []string{"source", "eval"} {
					if !sh.interactive || how == "source" {
						roundTrip(t, sh.argv, sh.interactive, how, locale, bin, values)
					}
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no shell to try")
	}
}

// roundTrip has the shell read the state lines (sourced, evaluated, or
// typed) and write each variable to a file of its own, and compares.
func roundTrip(t *testing.T, argv []string, interactive bool, how string, locale [2]string, bin string, values []string) {
	name := fmt.Sprintf("%s, %s, %s", strings.Join(argv, " "), how, locale[0])
	var state, script bytes.Buffer
	var tried []int
	for i, v := range values {
		if interactive && !typable(v) {
			continue
		}
		tried = append(tried, i)
		fmt.Fprintf(&state, "A%d=%s\nexport E%d=%s\nexport Q%d=%s\n", i, Quote(v), i, Quote(v), i, QuoteAlways(v))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.sh"), state.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	switch {
	case interactive:
		script.Write(state.Bytes())
	case how == "source":
		script.WriteString(". ./state.sh\n")
	default:
		script.WriteString("eval \"$(cat state.sh)\"\n")
	}
	// One printf of every variable, each ended by a NUL, which no value
	// holds: one process where printf is no builtin (mksh, posh).
	script.WriteString("printf '%s\\000'")
	for _, i := range tried {
		fmt.Fprintf(&script, ` "$A%d" "$E%d" "$Q%d"`, i, i, i)
	}
	script.WriteString(" > out\nexit 0\n")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = &script
	cmd.Env = []string{"PATH=" + bin, "HOME=" + dir, "LC_ALL=" + locale[0], "HISTFILE=" + filepath.Join(dir, ".history")}
	if locale[1] != "" {
		cmd.Env = append(cmd.Env, "LOCPATH="+locale[1])
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: %v\n%.2000s", name, err, out)
		return
	}
	if _, err := os.Lstat(filepath.Join(dir, "PWNED")); err == nil {
		t.Errorf("%s: a value ran a command", name)
	}
	got, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	printed := strings.Split(string(got), "\x00")
	if len(printed) != 3*len(tried)+1 {
		t.Errorf("%s: printed %d values, want %d:\n%.2000q", name, len(printed)-1, 3*len(tried), got)
		return
	}
	bad := 0
	for n, i := range tried {
		for k, form := range []string{"KEY=value", "export KEY=value", "export KEY=\"value\""} {
			if p := printed[3*n+k]; p != values[i] && bad < 3 {
				bad++
				t.Errorf("%s: %s gave %.80q for %.80q (quoted %.80q)", name, form, p, values[i], Quote(values[i]))
			}
		}
	}
}

// typable reports whether v can be typed into an interactive shell as
// it is: short lines of printable ASCII. Readline and ZLE read a control
// character or a byte past 0x7f as a key (a tab completes, \xe0 is
// Meta-`), and a long paste as many, whatever the quoting; what the
// interactive shells are tried for is history, !.
func typable(v string) bool {
	return len(v) < 1024 && !strings.ContainsFunc(v, func(r rune) bool { return (r < 0x20 || r >= 0x7f) && r != '\n' })
}

// testLocales are the locales (LC_ALL, LOCPATH) tried: C, C.UTF-8, and
// Big5 and Shift_JIS, whose two-byte characters end in a byte that is
// \ or ` on its own, built once into the user's cache where localedef and
// glibc's locale sources are installed.
func testLocales(t *testing.T) [][2]string {
	locales := [][2]string{{"C", ""}, {"C.UTF-8", ""}}
	dir, err := builtLocales()
	if err != nil {
		t.Logf("Big5 and Shift_JIS not tried: %v", err)
		return locales
	}
	return append(locales, [2]string{"zh_TW.BIG5", dir}, [2]string{"ja_JP.SJIS", dir})
}

var builtLocales = sync.OnceValues(func() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "flowstate-test", "locales")
	if _, err := os.Stat(filepath.Join(dir, "ja_JP.SJIS")); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("localedef"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, l := range [][3]string{{"zh_TW", "BIG5", "zh_TW.BIG5"}, {"ja_JP", "SHIFT_JIS", "ja_JP.SJIS"}} {
		tmp, err := os.MkdirTemp(dir, ".build-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		out, err := exec.Command("localedef", "-c", "--no-warnings=ascii", "-i", l[0], "-f", l[1], filepath.Join(tmp, l[2])).CombinedOutput()
		if _, serr := os.Stat(filepath.Join(tmp, l[2], "LC_CTYPE")); serr != nil {
			return "", errors.Join(fmt.Errorf("localedef %s: %s", l[2], out), err)
		}
		if err := os.Rename(filepath.Join(tmp, l[2]), filepath.Join(dir, l[2])); err != nil && !os.IsExist(err) {
			return "", err
		}
	}
	return dir, nil
})
