package statefile

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestReserved(t *testing.T) {
	for key, want := range map[string]bool{
		"BASH_ENV": true, "ENV": true, "PATH": true, "IFS": true, "PS4": true, "SHELLOPTS": true, "HOME": true,
		"LD_PRELOAD": true, "DYLD_INSERT_LIBRARIES": true, "GCONV_PATH": true, "LC_ALL": true, "GLIBC_TUNABLES": true,
		"GIT_SSH_COMMAND": true, "GIT_DIR": true, "NODE_OPTIONS": true, "PYTHONPATH": true, "PERL5OPT": true,
		"EDITOR": true, "FLOWSTATE_BIN": true, "CLAUDE_CODE_SESSION_ID": true, "ANTHROPIC_BASE_URL": true,
		"path": true, "status": true, "chpwd_functions": true, "NULLCMD": true, "ZDOTDIR": true,
		// Ordinary state keys.
		"REPORT_DIR": false, "Path": false, "STATUS": false, "GITHUB_ISSUE": false, "PATHS": false,
		"HOMEPAGE": false, "K": false, "_x": false, "CLAUDE": false, "LD": false,
	} {
		why, got := Reserved(key)
		if got != want || got && why == "" {
			t.Errorf("Reserved(%q) = %q, %v; want %v", key, why, got, want)
		}
	}
}

func TestCheckPairRefusesReserved(t *testing.T) {
	err := CheckPair("BASH_ENV", "/tmp/x.sh")
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "key BASH_ENV is reserved: the shell reads it") || !strings.Contains(err.Error(), "WF_BASH_ENV") {
		t.Errorf("CheckPair(BASH_ENV) = %v", err)
	}
}

// TestCheckStored: what a state file can hold. A reserved name is data
// there (WriteLoad never hands it out); a bad key or a NUL is not.
func TestCheckStored(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"CLAUDE_PROJECT_DIR", "/p", true},
		{"BASH_ENV", "$(touch x)", true},
		{"REPORT_DIR", "a\nb", true},
		{"BAD;touch", "v", false},
		{"1ST", "v", false},
		{"K", "a\x00b", false},
	} {
		if err := CheckStored(tc.key, tc.value); (err == nil) != tc.ok || err != nil && fail.Code(err) != fail.Invalid {
			t.Errorf("CheckStored(%q, %q) = %v; want ok %v", tc.key, tc.value, err, tc.ok)
		}
	}
}

// TestWriteLoad is the policy of what state-load hands a shell, case by
// case: the lines printed and the keys left out (with a warning each).
func TestWriteLoad(t *testing.T) {
	env := map[string]string{"EXPORTED": "from-env", "SAME": "v"}
	getenv := func(k string) string { return env[k] }
	own := func(k string) bool { return k == "CLAUDE_PROJECT_DIR" || k == "WORKFLOW_ID" }
	big := strings.Repeat("b", MaxLoadValue)
	tests := []struct {
		name   string
		values map[string]string
		export bool
		want   string   // the lines
		out    []string // keys left out, in order
	}{
		{"plain assignments", map[string]string{"A": "1", "B": "x y"}, false, "A=1\nB=\"x y\"\n", nil},
		{"exports", map[string]string{"A": "1"}, true, "export A=1\n", nil},
		{"reserved left out", map[string]string{"BASH_ENV": "/x.sh", "PATH": "/evil", "A": "1"}, false, "A=1\n", []string{"BASH_ENV", "PATH"}},
		{"reserved left out on export", map[string]string{"LD_PRELOAD": "/x.so"}, true, "", []string{"LD_PRELOAD"}},
		{"flowstate's own keys are never reserved", map[string]string{"CLAUDE_PROJECT_DIR": "/p", "CLAUDE_CODE_SESSION_ID": "s"}, false, "CLAUDE_PROJECT_DIR=/p\n", []string{"CLAUDE_CODE_SESSION_ID"}},
		{"an exported name with another value", map[string]string{"EXPORTED": "mine", "SAME": "v"}, false, "SAME=v\n", []string{"EXPORTED"}},
		{"--export may change the environment", map[string]string{"EXPORTED": "mine"}, true, "export EXPORTED=mine\n", nil},
		{"own keys are set even if exported", map[string]string{"WORKFLOW_ID": "w"}, false, "WORKFLOW_ID=w\n", nil},
		{"a value at the bound", map[string]string{"K": big[:MaxLoadValue-2]}, false, "K=" + big[:MaxLoadValue-2] + "\n", nil},
		{"a value past the bound", map[string]string{"K": big[:MaxLoadValue-1], "L": "1"}, false, "L=1\n", []string{"K"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		warnings, err := State{Values: tt.values}.WriteLoad(&b, LoadOptions{Export: tt.export, Getenv: getenv, Own: own})
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s: printed %.80q, want %.80q", tt.name, b.String(), tt.want)
		}
		if len(warnings) != len(tt.out) {
			t.Errorf("%s: warnings %q, want one for each of %q", tt.name, warnings, tt.out)
			continue
		}
		for i, k := range tt.out {
			if !strings.HasPrefix(warnings[i], k+" not loaded: ") || !strings.Contains(warnings[i], "flowstate state-get "+k) {
				t.Errorf("%s: warning %q does not name %s and state-get", tt.name, warnings[i], k)
			}
		}
	}
}

// TestWriteLoadExportTotal: --export stops before the environment would
// carry more than MaxExportTotal; plain assignments have no total bound.
func TestWriteLoadExportTotal(t *testing.T) {
	values := map[string]string{}
	for i := range 40 {
		values[string(rune('A'+i/26))+string(rune('A'+i%26))] = strings.Repeat("v", 60<<10)
	}
	for _, export := range []bool{false, true} {
		var b strings.Builder
		warnings, err := State{Values: values}.WriteLoad(&b, LoadOptions{Export: export})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(b.String(), "\n")
		switch {
		case !export && (lines != 40 || len(warnings) != 0):
			t.Errorf("plain: %d lines, %d warnings", lines, len(warnings))
		case export && (b.Len() > MaxExportTotal+lines*len("export ") || lines+len(warnings) != 40 || len(warnings) == 0):
			t.Errorf("--export: %d bytes in %d lines, %d left out", b.Len(), lines, len(warnings))
		}
	}
}
