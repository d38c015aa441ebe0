package statefile

import (
	"strings"
	"sync"
)

// Reserved names: keys state-append refuses and state-load never sets,
// because assigning them in the shell that evals state-load, or handing
// them to the programs it runs, makes something load or run code the
// state chose. A stored value must stay data, and a cloned repository
// carries its state file: with BASH_ENV set, the next `bash -c` sources
// the file it names; with MAKEFILES, `make` on a trusted Makefile reads
// another makefile first and runs its $(shell ...); with LD_PRELOAD,
// every program loads a library.
//
// The names come in classes, each a kind of name that programs
// document as one they load or run code from, matched by exact name or
// by pattern where the kind is a naming convention (*RC, *INIT,
// *_OPTIONS, ...): no list of single names grown as each is found.
// Names are case-sensitive; where programs read a lower-case spelling
// too (http_proxy, npm_config_*), it is listed. A class cannot know every
// program's variables: that is why state-load sets plain shell variables
// and leaves the environment alone unless asked (--export).
//
// A key starting with WF_ is never reserved: flowstate keeps that prefix
// for workflow keys, and no program reads it. docs/architecture.md says
// how to name keys.

// A Class is a kind of name that makes programs load or run code.
type Class struct {
	Name string // a few words, as messages and docs name it
	Why  string // what its names do: why none is ever set
	// Names are matched exactly; Prefixes, Suffixes and Infixes as
	// PREFIX*, *SUFFIX and *INFIX*.
	Names, Prefixes, Suffixes, Infixes []string
}

// SafePrefix starts keys no class reserves.
const SafePrefix = "WF_"

// Classes are the reserved names, class by class, built on first use:
// every bash block is a process, and most never look. The sources are the
// manuals of the shells (bash(1), zshparam(1), ksh(1), dash(1), yash),
// sudo's table of unsafe variables (env.c), glibc's UNSECURE_ENVVARS,
// GNU make's manual (MAKEFILES, the variables of implicit rules),
// autoconf's (CONFIG_SITE, CONFIG_SHELL), and the documented environment
// of the programs named in each class.
var Classes = sync.OnceValue(func() []Class {
	return []Class{
		{
			Name: "shell hook",
			Why:  "the shell runs its value, or the file it names, at start-up, before a prompt or on an event",
			Names: fields(`ENV BASH_ENV PROMPT_COMMAND PS0 PS1 PS2 PS3 PS4 PROMPT PROMPT2 PROMPT3 PROMPT4 RPROMPT
			RPROMPT2 RPS1 RPS2 SPROMPT PROMPT_EOL_MARK POSTEDIT POST_PROMPT_COMMAND
			COMMAND_NOT_FOUND_HANDLER PERIOD prompt`),
			// zsh's hook arrays: precmd_functions, chpwd_functions, ...
			Suffixes: []string{"_functions"},
		},
		{
			Name: "shell variable",
			Why:  "the shell reads it to parse, find or run commands, or keeps it read-only",
			Names: fields(`BASH BASHOPTS BASHPID CDPATH CHILD_MAX COLUMNS COMPREPLY COPROC DIRSTACK EMACS
			EPOCHREALTIME EPOCHSECONDS EUID EXECIGNORE FIGNORE FUNCNAME FUNCNEST GLOBIGNORE
			GLOBSORT GROUPS HISTCMD HISTCONTROL HISTFILE HISTFILESIZE HISTIGNORE HISTSIZE
			HISTTIMEFORMAT HOME HOSTFILE HOSTNAME HOSTTYPE IFS IGNOREEOF INPUTRC INSIDE_EMACS LINENO
			LINES MACHTYPE MAIL MAILCHECK MAILPATH MAPFILE OLDPWD OPTARG OPTERR OPTIND OSTYPE PATH
			PIPESTATUS POSIXLY_CORRECT PPID PROMPT_DIRTRIM PWD RANDOM REPLY SECONDS SHELLOPTS
			SHLVL SRANDOM TIMEFORMAT TMOUT UID histchars` +
				// zshparam(1): parameters that steer lookup or are read-only
				// (assigning one fails the whole eval).
				` ARGC ARGV0 CORRECT_IGNORE CORRECT_IGNORE_FILE DIRSTACKSIZE EGID ERRNO FPATH GID
			HISTORY_IGNORE KEYBOARD_HACK KEYTIMEOUT LISTMAX LOGCHECK MANPATH MODULE_PATH NULLCMD
			READNULLCMD REPORTMEMORY REPORTTIME SAVEHIST STTY TIMEFMT TMPPREFIX TMPSUFFIX
			TRY_BLOCK_ERROR TRY_BLOCK_INTERRUPT USERNAME WATCH WATCHFMT WORDCHARS ZBEEP ZDOTDIR
			aliases argv builtins cdpath commands dirstack epochtime errnos fignore fpath
			funcfiletrace funcsourcetrace funcstack functions galiases history historywords jobdirs
			jobstates jobtexts keymaps manpath mapfile mailpath module_path modules nameddirs options
			parameters path pipestatus psvar reswords saliases signals status sysparams termcap
			terminfo userdirs watch widgets zsh_eval_context` +
				// ksh and mksh.
				` KSH_VERSION SH_VERSION`),
			Prefixes: []string{"BASH_", "COMP_", "READLINE_", "ZSH_", "ZLE_", "KSH_", "YASH_"},
		},
		{
			Name: "loader or C library",
			Why:  "the dynamic loader or the C library reads it in every program: libraries, locales and character conversions are code",
			Names: fields(`GCONV_PATH GETCONF_DIR GLIBC_TUNABLES HOSTALIASES LANG LANGUAGE LIBPATH
			LOCALDOMAIN LOCPATH NIS_PATH NLSPATH PATH_LOCALE RESOLV_HOST_CONF RES_OPTIONS SHLIB_PATH
			TERM TERMCAP TERMINFO TERMINFO_DIRS TERMPATH TMPDIR TZ TZDIR LIBRARY_PATH CPATH
			C_INCLUDE_PATH CPLUS_INCLUDE_PATH OBJC_INCLUDE_PATH`),
			Prefixes: []string{"LD_", "DYLD_", "_RLD", "LDR_", "LC_", "MALLOC_"},
			Suffixes: []string{"PRELOAD"},
		},
		{
			Name:     "options that take code",
			Why:      "a program reads its value as command-line options, which load code (-javaagent, --require, -M, -fplugin) or run programs (-toolexec, --eval, -C linker=)",
			Names:    fields(`MANOPT`),
			Suffixes: []string{"OPTS", "_OPTIONS", "FLAGS"},
		},
		{
			Name:     "hooks, plug-ins and modules",
			Why:      "a program loads the code it names at start-up (DOTNET_STARTUP_HOOKS, GTK_MODULES, PYTEST_PLUGINS, QT_PLUGIN_PATH)",
			Suffixes: []string{"_HOOK", "_HOOKS", "_PLUGIN", "_PLUGINS", "_PLUGIN_PATH", "_MODULES", "_MODULE_PATH"},
		},
		{
			Name: "start-up or configuration file",
			Why:  "a program reads the file it names, or its value, as code or as settings that name commands (*RC, *INIT, *CONFIG*: INPUTRC, PHPRC, VIMINIT, EXINIT, LUA_INIT, KUBECONFIG, ...)",
			Names: fields(`MAKEFILES CONFIG_SITE PYTHONSTARTUP GNUPGHOME CURL_HOME WGETRC NETRC
			LESSKEY LESSKEYIN`),
			Prefixes: []string{"LUA_INIT"},
			Suffixes: []string{"RC", "RCPATH", "RCFILE", "RC_FILE", "RC_PATH", "INIT"},
			Infixes:  []string{"CONFIG"},
		},
		{
			Name: "program to run",
			Why:  "a program runs the command it names: an editor, a pager, a password prompt, a remote shell, a compiler, a wrapper",
			Names: fields(`BROWSER FCEDIT VISUAL LESSOPEN LESSCLOSE SHELL CC CXX CPP FC F77 AR AS LD NM
			RANLIB STRIP OBJCOPY OBJDUMP YACC LEX M4 LINT PC CO GET TEX TEXI2DVI MAKEINFO WEAVE
			CWEAVE TANGLE CTANGLE RM AUTOCONF AUTOHEADER AUTOM4TE AUTOMAKE ACLOCAL LIBTOOL
			LIBTOOLIZE`),
			Prefixes: []string{"FZF_"},
			Suffixes: []string{"EDITOR", "PAGER", "ASKPASS", "RSH", "_SSH", "_SHELL", "_PROG", "_PROGRAM",
				"_WRAPPER", "_LAUNCHER", "_RUNNER", "_HELPER"},
		},
		{
			Name:     "network and trust",
			Why:      "a program fetches code through the proxy it names, or trusts the certificates it names",
			Names:    fields(`CURL_CA_BUNDLE REQUESTS_CA_BUNDLE`),
			Suffixes: []string{"_PROXY", "_proxy", "CA_BUNDLE", "CA_CERTS", "CA_FILE", "CA_PATH"},
		},
		{
			Name:     "Claude Code's or flowstate's own",
			Why:      "Claude Code or flowstate reads it to pick a session, workflow, model, endpoint or binary",
			Prefixes: []string{"CLAUDE_", "ANTHROPIC_", "FLOWSTATE_"},
		},
		{
			Name: "toolchain",
			Why:  "a language or build tool finds, fetches or runs code by it",
			Names: fields(`CLASSPATH GOBIN GOENV GOEXPERIMENT GOFLAGS GOPATH GOPROXY GOROOT GOTOOLCHAIN
			GONOSUMDB GONOPROXY GOPRIVATE GOSUMDB GOINSECURE GOCACHE GOMODCACHE GOWORK GOAUTH
			VIRTUAL_ENV TCLLIBPATH OCAMLPATH MODULEPATH NIX_PATH`),
			Prefixes: []string{"GIT_", "PYTHON", "PERL", "RUBY", "GEM_", "BUNDLE_", "NODE_", "NPM_CONFIG_",
				"npm_config_", "YARN_", "PNPM_", "COREPACK_", "DENO_", "BUN_", "PIP_", "UV_", "POETRY_",
				"PIPENV_", "CONDA_", "TOX_", "PYTEST_", "CARGO_", "RUSTC", "RUSTUP_", "RUSTDOC", "CGO_",
				"JAVA", "JDK_", "MAVEN_", "GRADLE_", "ANT_", "SBT_", "DOTNET_", "COMPlus_", "CORECLR_",
				"MONO_", "PHP", "LUA_", "GUILE_", "JULIA_", "ERL_", "ELIXIR_", "R_", "CMAKE_", "CCACHE_",
				"DISTCC_", "SCCACHE_", "MAKE", "DOCKER_", "AWS_", "XDG_", "SSH_", "SSL_", "OPENSSL_", "KRB5"},
		},
	}
})

func fields(s string) []string { return strings.Fields(s) }

// reserved is the table Reserved looks names up in, built on first use:
// most commands never look, and every bash block pays for what a process
// does before main.
var reserved = sync.OnceValue(buildReserved)

// reservedTable indexes Classes: state-load checks every key, and a
// workflow may hold 10,000.
type reservedTable struct {
	names map[string]int // name -> index of its class
	// byFirst and byLast index the prefixes and suffixes by their first
	// and last byte.
	byFirst, byLast [256][]pattern
	infixes         []pattern
}

type pattern struct {
	text  string
	class int
}

func buildReserved() *reservedTable {
	t := &reservedTable{names: map[string]int{}}
	for i, c := range Classes() {
		for _, n := range c.Names {
			if _, ok := t.names[n]; !ok {
				t.names[n] = i
			}
		}
		for _, p := range c.Prefixes {
			t.byFirst[p[0]] = append(t.byFirst[p[0]], pattern{p, i})
		}
		for _, s := range c.Suffixes {
			t.byLast[s[len(s)-1]] = append(t.byLast[s[len(s)-1]], pattern{s, i})
		}
		for _, s := range c.Infixes {
			t.infixes = append(t.infixes, pattern{s, i})
		}
	}
	return t
}

// Reserved reports whether key is a reserved name, and why: its class
// and what names of the class do.
func Reserved(key string) (why string, ok bool) {
	if i, ok := ReservedClass(key); ok {
		c := Classes()[i]
		return c.Name + ": " + c.Why, true
	}
	return "", false
}

// ReservedClass is the index in Classes() of key's class, if it has one:
// of the classes whose names or patterns match it, the first, so that a
// class listed before a broader one (shell hooks before the BASH_*
// variables, options before the toolchains) names it.
func ReservedClass(key string) (int, bool) {
	if key == "" || strings.HasPrefix(key, SafePrefix) {
		return 0, false
	}
	t := reserved()
	class := len(Classes())
	if i, ok := t.names[key]; ok {
		class = i
	}
	for _, p := range t.byFirst[key[0]] {
		if p.class < class && strings.HasPrefix(key, p.text) {
			class = p.class
		}
	}
	for _, p := range t.byLast[key[len(key)-1]] {
		if p.class < class && strings.HasSuffix(key, p.text) {
			class = p.class
		}
	}
	for _, p := range t.infixes {
		if p.class < class && strings.Contains(key, p.text) {
			class = p.class
		}
	}
	return class, class < len(Classes())
}
