package statefile

import (
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

// TestReservedClasses: a test per class, by its name: names of the kind
// it documents are reserved as that class, names that only look like
// them are not.
func TestReservedClasses(t *testing.T) {
	cases := map[string]struct{ in, out []string }{
		"shell variable": {[]string{"PATH", "IFS", "HOME", "CDPATH", "SHELLOPTS", "BASH_XTRACEFD", "FPATH", "ZDOTDIR", "path", "status", "KSH_VERSION"},
			[]string{"Path", "STATUS", "PATHS", "HOMEPAGE", "CLAUDE", "LDX"}},
		"shell hook": {[]string{"ENV", "PROMPT_COMMAND", "PS0", "PS4", "RPROMPT", "precmd_functions", "chpwd_functions", "COMMAND_NOT_FOUND_HANDLER"},
			[]string{"ENVIRONMENT", "PS5", "PROMPT_TEXT", "FUNCTIONS"}},
		"loader or C library": {[]string{"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "GCONV_PATH", "LC_ALL", "LANG", "GLIBC_TUNABLES", "MALLOC_CONF", "TMPDIR", "JEMALLOC_PRELOAD"},
			[]string{"LDAP_HOST", "LOCAL", "LANGS"}},
		"start-up or configuration file": {[]string{"MAKEFILES", "CONFIG_SITE", "LUA_INIT", "LUA_INIT_5_4", "VIMINIT", "EXINIT", "GVIMINIT", "PHPRC", "WGETRC", "SCREENRC", "HGRCPATH",
			"KUBECONFIG", "RIPGREP_CONFIG_PATH", "CONFIG_SHELL", "PYTHONSTARTUP", "WORKFLOW_INIT", "SRC"},
			[]string{"INITIAL", "INIT_DONE", "RCS_DIR", "SOURCE"}},
		"program to run": {[]string{"EDITOR", "VISUAL", "SUDO_EDITOR", "GIT_EDITOR", "SVN_EDITOR", "PAGER", "MANPAGER", "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "CVS_RSH",
			"BROWSER", "LESSOPEN", "SHELL", "CC", "CXX", "YACC", "RUSTC_WRAPPER", "CMAKE_C_COMPILER_LAUNCHER", "FZF_DEFAULT_COMMAND"},
			[]string{"EDITORIAL", "PAGERS", "TEST_COMMAND", "CCC"}},
		"options that take code": {[]string{"MAVEN_OPTS", "JAVA_OPTS", "GRADLE_OPTS", "SBT_OPTS", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CFLAGS", "LDFLAGS",
			"RUSTFLAGS", "MAKEFLAGS", "GOFLAGS", "ERL_AFLAGS", "PYTEST_ADDOPTS", "MANOPT"},
			[]string{"OPTIONS", "OPTION_A", "ADOPT", "FLAGSHIP"}},
		"hooks, plug-ins and modules": {[]string{"DOTNET_STARTUP_HOOKS", "GTK_MODULES", "GIO_EXTRA_MODULES", "PYTEST_PLUGINS", "QT_PLUGIN_PATH", "GST_PLUGIN_PATH", "PRE_COMMIT_HOOK"},
			[]string{"HOOKS", "MODULES_DIR", "PLUGINS"}},
		"toolchain": {[]string{"GIT_DIR", "GIT_SSH_COMMAND", "PYTHONPATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GEM_PATH", "BUNDLE_GEMFILE", "NODE_PATH",
			"npm_config_script_shell", "CLASSPATH", "GOPATH", "GOTOOLCHAIN", "CARGO_HOME", "JAVA_HOME", "COMPlus_EnableDiagnostics", "CORECLR_PROFILER_PATH",
			"LUA_PATH", "R_PROFILE", "CMAKE_TOOLCHAIN_FILE", "CCACHE_PREFIX", "MAKELEVEL", "SSH_AUTH_SOCK", "XDG_DATA_HOME"},
			[]string{"GITHUB_ISSUE", "GOAL", "GOOD", "NODES", "JUPITER", "REPORT_DIR"}},
		"network and trust": {[]string{"HTTP_PROXY", "https_proxy", "ALL_PROXY", "no_proxy", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "FTP_PROXY"},
			[]string{"PROXY", "PROXIMITY"}},
		"Claude Code's or flowstate's own": {[]string{"CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR", "ANTHROPIC_BASE_URL", "FLOWSTATE_BIN"},
			[]string{"CLAUDE", "FLOWSTATES"}},
	}
	if len(cases) != len(Classes()) {
		t.Errorf("%d classes, %d tested", len(Classes()), len(cases))
	}
	for i, c := range Classes() {
		tc, ok := cases[c.Name]
		if !ok || c.Why == "" {
			t.Errorf("class %q: untested, or no why", c.Name)
			continue
		}
		for _, k := range tc.in {
			if got, ok := ReservedClass(k); !ok || got != i {
				t.Errorf("%s: not reserved as %s (class %d, %v)", k, c.Name, got, ok)
			}
			if why, _ := Reserved(k); !strings.HasPrefix(why, c.Name+": ") {
				t.Errorf("Reserved(%s) = %q", k, why)
			}
		}
		for _, k := range tc.out {
			if why, ok := Reserved(k); ok {
				t.Errorf("%s is reserved (%s)", k, why)
			}
		}
	}
}

// TestReservedKeyNames: the names a workflow's keys take. flowstate's
// own keys and what commands store load; WF_ is never reserved, so
// state-append's suggestion always works; a name like a convention of
// programs (WORKFLOW_INIT, *RC) is reserved, as docs/architecture.md
// says.
func TestReservedKeyNames(t *testing.T) {
	for _, k := range []string{"WORKFLOW_ID", "CURRENT_STATE", "COMMAND_NAME", "RESEARCH_TOPICS_JSON", "REPORT_DIR", "TOPIC_PATH", "PLAN_PATH",
		"USER_ARGS", "USER_PREFS", "ERROR_FILTER_COMMAND", "WORK_REMAINING", "SPEC_DIR", "WF_LD_PRELOAD", "WF_MAKEFILES", "WF_INIT", "WF_SRC"} {
		if why, ok := Reserved(k); ok {
			t.Errorf("%s is reserved (%s)", k, why)
		}
	}
}

func TestCheckPairRefusesReserved(t *testing.T) {
	err := CheckPair("BASH_ENV", "/tmp/x.sh")
	if fail.Code(err) != fail.Invalid || !strings.Contains(err.Error(), "key BASH_ENV is reserved: shell hook: the shell runs its value, or the file it names") || !strings.Contains(err.Error(), "WF_BASH_ENV") {
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
		values["K"+string(rune('A'+i/26))+string(rune('A'+i%26))] = strings.Repeat("v", 60<<10)
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
