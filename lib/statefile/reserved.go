package statefile

import (
	"strings"
	"sync"
)

// Reserved names: keys state-append refuses and state-load never sets,
// because assigning them in the shell that evals state-load, or handing
// them to the commands it runs, changes what runs. A stored value must
// stay data: with BASH_ENV set, the next `bash -c` sources the file it
// names; with PS4 set, `set -x` runs its command substitutions; with
// LD_PRELOAD exported, every program loads a library of the repository's
// choosing. Matching is exact (names are case-sensitive): zsh's
// lower-case specials are listed as they are spelt.
//
// The list follows sudo's table of unsafe variables (env.c), glibc's
// UNSECURE_ENVVARS, the variables bash(1) and zshparam(1) give a
// meaning, and the documented environment of common tools that run
// commands or load code. It cannot name every program's variables; that
// is why state-load sets plain shell variables and leaves the
// environment alone unless asked (LoadOptions).

// reserved is the table Reserved looks names up in, built on first use:
// most commands never look, and every bash block pays for what a process
// does before main.
var reserved = sync.OnceValue(buildReserved)

type reservedTable struct {
	names map[string]string // name -> what it changes
	// byFirst indexes reservedPrefixes by their first byte: state-load
	// checks every key, and a workflow may hold 10,000.
	byFirst [256][]int
}

// reservedPrefixes maps a prefix of names to what they change.
var reservedPrefixes = []struct{ prefix, why string }{
	{"BASH_", shellWhy}, {"COMP_", shellWhy}, {"READLINE_", shellWhy}, {"ZSH_", shellWhy}, {"ZLE_", shellWhy},
	{"LD_", loaderWhy}, {"DYLD_", loaderWhy}, {"_RLD", loaderWhy}, {"LDR_", loaderWhy}, {"LC_", loaderWhy},
	{"GIT_", toolWhy}, {"PYTHON", toolWhy}, {"PERL", toolWhy}, {"RUBY", toolWhy}, {"NODE_", toolWhy},
	{"NPM_CONFIG_", toolWhy}, {"npm_config_", toolWhy}, {"YARN_", toolWhy}, {"PIP_", toolWhy},
	{"CARGO_", toolWhy}, {"RUSTC", toolWhy}, {"CGO_", toolWhy}, {"DOCKER_", toolWhy}, {"AWS_", toolWhy},
	{"XDG_", toolWhy}, {"SSH_", toolWhy}, {"SSL_", toolWhy}, {"OPENSSL_", toolWhy}, {"KRB5", toolWhy},
	{"CLAUDE_", ownWhy}, {"ANTHROPIC_", ownWhy}, {"FLOWSTATE_", ownWhy},
}

const (
	shellWhy  = "the shell reads it to parse, find or run commands"
	loaderWhy = "the dynamic loader or the C library reads it in every program"
	toolWhy   = "common programs run commands or load code from it"
	ownWhy    = "Claude Code or flowstate reads it to pick a session, workflow or binary"
)

func buildReserved() *reservedTable {
	t := &reservedTable{names: map[string]string{}}
	for why, names := range map[string]string{
		// bash(1) "Shell Variables", and POSIX sh and ksh.
		shellWhy: `BASH BASHOPTS BASHPID CDPATH CHILD_MAX COLUMNS COMPREPLY COPROC DIRSTACK EMACS ENV
			EPOCHREALTIME EPOCHSECONDS EUID EXECIGNORE FCEDIT FIGNORE FUNCNAME FUNCNEST GLOBIGNORE
			GLOBSORT GROUPS HISTCMD HISTCONTROL HISTFILE HISTFILESIZE HISTIGNORE HISTSIZE
			HISTTIMEFORMAT HOME HOSTFILE HOSTNAME HOSTTYPE IFS IGNOREEOF INPUTRC INSIDE_EMACS LINENO
			LINES MACHTYPE MAIL MAILCHECK MAILPATH MAPFILE OLDPWD OPTARG OPTERR OPTIND OSTYPE PATH
			PIPESTATUS POSIXLY_CORRECT PPID PROMPT_COMMAND PROMPT_DIRTRIM PS0 PS1 PS2 PS3 PS4 PWD
			RANDOM REPLY SECONDS SHELL SHELLOPTS SHLVL SRANDOM TIMEFORMAT TMOUT UID histchars` +
			// zshparam(1): parameters that run commands, steer lookup, or
			// are read-only (assigning one fails the whole eval).
			` ARGC ARGV0 CORRECT_IGNORE CORRECT_IGNORE_FILE DIRSTACKSIZE EGID ERRNO FPATH GID
			HISTORY_IGNORE KEYBOARD_HACK KEYTIMEOUT LISTMAX LOGCHECK MANPATH MODULE_PATH
			NULLCMD PERIOD POSTEDIT PROMPT PROMPT2 PROMPT3 PROMPT4 PROMPT_EOL_MARK READNULLCMD
			REPORTMEMORY REPORTTIME RPROMPT RPROMPT2 RPS1 RPS2 SAVEHIST SPROMPT STTY TIMEFMT TMPPREFIX
			TMPSUFFIX TRY_BLOCK_ERROR TRY_BLOCK_INTERRUPT USERNAME WATCH WATCHFMT WORDCHARS ZBEEP ZDOTDIR
			aliases argv builtins cdpath chpwd_functions commands dirstack epochtime errnos fignore fpath
			funcfiletrace funcsourcetrace funcstack functions galiases history historywords jobdirs
			jobstates jobtexts keymaps manpath mapfile mailpath module_path modules
			nameddirs options parameters path periodic_functions pipestatus precmd_functions
			preexec_functions prompt psvar reswords saliases signals status sysparams termcap terminfo
			userdirs watch widgets zsh_eval_context zshaddhistory_functions zshexit_functions`,
		// sudo's env.c and glibc's UNSECURE_ENVVARS: read by libc in
		// every program.
		loaderWhy: `GCONV_PATH GETCONF_DIR GLIBC_TUNABLES HOSTALIASES LANG LANGUAGE LIBPATH LOCALDOMAIN
			LOCPATH MALLOC_CHECK_ MALLOC_TRACE NIS_PATH NLSPATH PATH_LOCALE RESOLV_HOST_CONF RES_OPTIONS
			SHLIB_PATH TERM TERMCAP TERMINFO TERMINFO_DIRS TERMPATH TMPDIR TZ TZDIR`,
		// Programs that run a command or load code named by a variable.
		toolWhy: `ALL_PROXY BROWSER CC CFLAGS CLASSPATH CPPFLAGS CURL_CA_BUNDLE CXX CXXFLAGS EDITOR
			GNUPGHOME GOBIN GOENV GOEXPERIMENT GOFLAGS GOPATH GOPROXY GOROOT GOTOOLCHAIN HTTPS_PROXY
			HTTP_PROXY JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS KUBECONFIG LDFLAGS LESS LESSCLOSE LESSOPEN
			MAKE MAKEFLAGS MANOPT MANPAGER MFLAGS NO_PROXY PAGER REQUESTS_CA_BUNDLE SUDO_ASKPASS
			SYSTEMD_EDITOR SYSTEMD_PAGER VISUAL _JAVA_OPTIONS all_proxy http_proxy https_proxy no_proxy`,
	} {
		for _, n := range strings.Fields(names) {
			t.names[n] = why
		}
	}
	for i, p := range reservedPrefixes {
		t.byFirst[p.prefix[0]] = append(t.byFirst[p.prefix[0]], i)
	}
	return t
}

// Reserved reports whether key is a reserved name, and why.
func Reserved(key string) (why string, ok bool) {
	t := reserved()
	if why, ok := t.names[key]; ok {
		return why, true
	}
	if key == "" {
		return "", false
	}
	for _, i := range t.byFirst[key[0]] {
		if p := reservedPrefixes[i]; strings.HasPrefix(key, p.prefix) {
			return p.why, true
		}
	}
	return "", false
}
