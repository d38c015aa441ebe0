package lint

import (
	"errors"
	"io"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// script is what lint reads from one bash block, parsed as bash. Lines
// count from the block's first line (1).
type script struct {
	calls   []call       // the flowstate calls
	unset   []use        // variables read and assigned nowhere in the block, first read of each
	sources []use        // source and . commands, as written
	heredoc map[int]bool // the lines of quoted heredoc bodies, where nothing is expanded
	// loads: the block evals what flowstate state-load prints, which
	// assigns every stored key, lower-case ones too. Those of its unset
	// that the file stores (stored) are set by it.
	loads  bool
	stored []string // the keys its state-append calls store, as written
	// printed is the text the block prints for the model to read: the
	// arguments of echo and printf and the bodies of heredocs, as
	// written, when their output is neither captured ($(...)), piped on
	// nor written to a file.
	printed []string
}

// call is one flowstate command a block runs: its subcommand and the
// flags given to it.
type call struct {
	line  int
	sub   string
	flags map[string]bool
	key   string // the first argument after the subcommand that is no flag
	// hidden: its output is captured, piped on or written to a file, so
	// the keys it prints are not in the block's output.
	hidden bool
	words  []*syntax.Word // its arguments as parsed, for the values of its flags
}

type use struct {
	line int
	name string
}

// parseError is a block that does not parse as bash: where, and why.
type parseError struct {
	line int
	msg  string
	deep bool // the block nests deeper than lint follows
}

// Bounds on how deep lint follows a block: bash nests without limit, and
// both the parser and the walk over its tree recurse once per level, so
// a block of a few KiB nested or chained thousands of levels deep would
// take minutes and, deeper still, overflow the stack. No block a model
// runs comes near them.
const (
	// maxParseFrames bounds the parser's recursion, in Go stack frames
	// (a $( level takes five). parseReader measures it at every piece of
	// input the parser asks for.
	maxParseFrames = 2000
	// parsePiece is the most input the parser gets at once: between two
	// measures it can nest at most this many bytes deeper.
	parsePiece = 128
	// maxWalkDepth bounds the nodes on the walk's path; a pipeline or an
	// arithmetic chain the parser reads in a loop still makes one deep
	// tree.
	maxWalkDepth = 1000
)

// errTooDeep stops the parser at maxParseFrames.
var errTooDeep = errors.New("nests too deep")

// tooDeep is the finding for a block lint stops following.
const tooDeep = "nests hundreds of levels deep ($( ... ), pipes, arithmetic), deeper than lint follows; split it into smaller commands or functions"

// parseReader hands the parser its input parsePiece bytes at a time,
// and refuses more once the parser's recursion passes maxParseFrames.
type parseReader struct {
	rest  string
	frame [1]uintptr
}

func (r *parseReader) Read(p []byte) (int, error) {
	// A frame maxParseFrames below this one means the parser is deeper
	// than that; unwinding stops at the bottom of a shallower stack.
	if runtime.Callers(maxParseFrames, r.frame[:]) > 0 {
		return 0, errTooDeep
	}
	if r.rest == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), parsePiece)], r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// readScript parses body as bash and reads what the rules need from it.
func readScript(body string) (*script, *parseError) {
	in := &parseReader{rest: body}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(in, "")
	if errors.Is(err, errTooDeep) {
		line := 1 + strings.Count(body[:len(body)-len(in.rest)], "\n")
		return nil, &parseError{line: line, msg: tooDeep, deep: true}
	}
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, &parseError{line: int(pe.Pos.Line()), msg: pe.Text}
		}
		return nil, &parseError{line: 1, msg: err.Error()}
	}
	r := &reader{body: body, s: &script{heredoc: map[int]bool{}}, assigned: map[string]bool{}}
	syntax.Walk(f, r.visit)
	if r.deep != nil {
		return nil, &parseError{line: int(r.deep.Pos().Line()), msg: tooDeep, deep: true}
	}
	r.s.unset = r.unset()
	r.s.loads = r.evals && slices.ContainsFunc(r.s.calls, func(c call) bool { return c.sub == "state-load" })
	return r.s, nil
}

// reader is readScript's walk over one block: the script it fills, and
// the variables the block assigns and reads, to find those it reads
// without assigning.
type reader struct {
	body     string
	s        *script
	assigned map[string]bool
	reads    []use
	evals    bool // the block runs eval
	// path says of each node from the root to the one visited whether
	// it hides the output of what it holds: a command substitution, the
	// command a pipe feeds, a command whose stdout goes to a file.
	// hidden counts the ones that do, so a look costs nothing.
	path   []bool
	hidden int
	// pipeFeed is the command a pipe feeds, hidden when Walk visits it,
	// right after the pipe.
	pipeFeed syntax.Node
	deep     syntax.Node // the node at maxWalkDepth, if the walk reached it
}

// hides reports whether the output of the node visited is hidden.
func (r *reader) hides() bool { return r.hidden > 0 }

// hide hides the output of the node visited and all it holds.
func (r *reader) hide() {
	if top := len(r.path) - 1; !r.path[top] {
		r.path[top] = true
		r.hidden++
	}
}

// enter and leave keep the path as Walk goes down to n and back up (it
// calls visit(nil) when it is done with a node).
func (r *reader) enter(n syntax.Node) bool {
	if len(r.path) == maxWalkDepth {
		r.deep = n
		return false
	}
	r.path = append(r.path, false)
	if n == r.pipeFeed {
		r.hide()
	}
	return true
}

func (r *reader) leave() {
	top := len(r.path) - 1
	if r.path[top] {
		r.hidden--
	}
	r.path = r.path[:top]
}

// stdoutToFile reports a redirect that sends stdout to a file.
func stdoutToFile(rd *syntax.Redirect) bool {
	switch rd.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		return rd.N == nil || rd.N.Value == "1"
	}
	return false
}

// stmt notes what a statement hides (its stdout sent to a file) and the
// heredocs it prints: those fed to any command but flowstate, which reads
// them (state-append --stdin) rather than printing them.
func (r *reader) stmt(n *syntax.Stmt) {
	if slices.ContainsFunc(n.Redirs, stdoutToFile) {
		r.hide()
	}
	if r.hides() {
		return
	}
	if c, ok := n.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 && isFlowstate(c.Args[0], literal(c.Args[0])) {
		return
	}
	for _, rd := range n.Redirs {
		if (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.Hdoc != nil {
			r.s.printed = append(r.s.printed, r.body[rd.Hdoc.Pos().Offset():rd.Hdoc.End().Offset()])
		}
	}
}

// visit reads one node of the syntax tree: a variable it assigns or
// reads, a quoted heredoc, a command.
func (r *reader) visit(n syntax.Node) bool {
	if n == nil {
		r.leave()
		return true
	}
	if r.deep != nil || !r.enter(n) {
		return false
	}
	switch n := n.(type) {
	case *syntax.Assign:
		if n.Name != nil {
			r.assign(n.Name.Value)
		}
	case *syntax.WordIter:
		r.assign(n.Name.Value)
	case *syntax.ParamExp:
		r.param(n)
	case *syntax.ArithmExp:
		r.arith(n.X)
	case *syntax.ArithmCmd:
		r.arith(n.X)
	case *syntax.CStyleLoop:
		r.arith(n.Init, n.Cond, n.Post)
	case *syntax.LetClause:
		r.arith(n.Exprs...)
	case *syntax.BinaryArithm:
		if assigns(n.Op) {
			r.assign(arithmName(n.X))
		}
	case *syntax.UnaryArithm:
		if n.Op == syntax.Inc || n.Op == syntax.Dec {
			r.assign(arithmName(n.X))
		}
	case *syntax.Redirect:
		r.heredoc(n)
	case *syntax.CallExpr:
		r.command(n)
	}
	r.output(n)
	return true
}

// output notes what n does to the block's output: a statement may send
// its stdout to a file and print heredocs; a command substitution and
// the command a pipe feeds print nothing.
func (r *reader) output(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.Stmt:
		r.stmt(n)
	case *syntax.CmdSubst, *syntax.ProcSubst:
		r.hide()
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			r.pipeFeed = n.X
		}
	}
}

func (r *reader) assign(name string) {
	if name != "" {
		r.assigned[name] = true
	}
}

// arith reads the names of arithmetic expressions; a loop's missing ones
// are nil.
func (r *reader) arith(xs ...syntax.ArithmExpr) {
	for _, x := range xs {
		if x != nil {
			r.reads = append(r.reads, arithmNames(x)...)
		}
	}
}

// param reads ${VAR...}: ${VAR=default} assigns VAR, and a form that says
// what happens when VAR is unset is no read of it. An index is not read
// as names: ${map[key]} of an associative array names no variable key.
func (r *reader) param(n *syntax.ParamExp) {
	if n.Param == nil {
		return
	}
	if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
		r.assign(n.Param.Value)
	}
	if !fromEnvironment(n) {
		r.reads = append(r.reads, use{int(n.Pos().Line()), n.Param.Value})
	}
}

// heredoc notes the lines of a quoted heredoc's body, where nothing is
// expanded.
func (r *reader) heredoc(n *syntax.Redirect) {
	if (n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc) && n.Hdoc != nil && quoted(n.Word) {
		for l := n.Hdoc.Pos().Line(); l <= n.Hdoc.End().Line(); l++ {
			r.s.heredoc[int(l)] = true
		}
	}
}

// command reads a simple command: eval, source, a flowstate call, or a
// command that assigns variables (read, declare, ...).
func (r *reader) command(n *syntax.CallExpr) {
	args := literals(n.Args)
	if len(args) == 0 {
		return
	}
	line := int(n.Pos().Line())
	if (args[0] == "echo" || args[0] == "printf") && !r.hides() {
		r.print(n, args)
	}
	switch {
	case args[0] == "eval":
		r.evals = true
	case args[0] == "source" || args[0] == ".":
		r.s.sources = append(r.s.sources, use{line, r.body[n.Pos().Offset():n.End().Offset()]})
	case isFlowstate(n.Args[0], args[0]):
		if c, ok := flowstateCall(args[1:]); ok {
			c.line, c.hidden = line, r.hides()
			c.words = n.Args[1:]
			r.s.calls = append(r.s.calls, c)
			if c.sub == "state-append" && c.key != "" {
				r.s.stored = append(r.s.stored, c.key)
			}
		}
	default:
		for _, name := range assignedBy(args) {
			r.assign(name)
		}
	}
}

// print notes what echo or printf prints: its arguments as written, a
// printf format's %d or %s standing for a value as $n would (printf
// 'LENS_%d=%s\n' "$n" "$lens" prints LENS_1=, LENS_2=, ...). printf -v
// assigns instead.
func (r *reader) print(n *syntax.CallExpr, args []string) {
	if args[0] == "printf" && len(args) > 1 && strings.HasPrefix(args[1], "-v") {
		return
	}
	for _, w := range n.Args[1:] {
		text := r.body[w.Pos().Offset():w.End().Offset()]
		if args[0] == "printf" {
			text = strings.NewReplacer("%d", "$n", "%i", "$n", "%s", "$s").Replace(text)
		}
		r.s.printed = append(r.s.printed, text)
	}
}

// unset are the variables the block reads and assigns nowhere, the first
// read of each, leaving out the environment's.
func (r *reader) unset() []use {
	var out []use
	seen := map[string]bool{}
	for _, u := range r.reads {
		// eval runs text the block reads from elsewhere: state-load's
		// and compat's assignments, whose keys are upper case (state-load's
		// lower-case keys are the linter's: script.stored).
		if r.assigned[u.name] || seen[u.name] || environment(u.name) || r.evals && patterns().upperCase.MatchString(u.name) {
			continue
		}
		seen[u.name] = true
		out = append(out, u)
	}
	return out
}

// assigns reports an arithmetic operator that assigns its left operand.
func assigns(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// fromEnvironment reports whether a ${VAR...} form reads VAR knowing it
// may be unset: ${VAR:-default}, ${VAR:=default}, ${VAR:+alt} and
// ${VAR:?message} (with or without the colon) say what happens without
// it, so the block does not depend on an earlier one for it.
func fromEnvironment(p *syntax.ParamExp) bool {
	if p.Exp == nil {
		return false
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return true
	}
	return false
}

// shellVariables are set by bash itself or in every process environment.
var shellVariables = sync.OnceValue(func() map[string]bool {
	vars := map[string]bool{}
	for _, v := range strings.Fields(`HOME PWD OLDPWD PATH USER LOGNAME SHELL TMPDIR TERM LANG LANGUAGE TZ
		HOSTNAME IFS PS4 UID EUID PPID RANDOM SRANDOM SECONDS LINENO REPLY OPTARG OPTIND MAPFILE
		BASH BASHPID BASH_SOURCE BASH_LINENO BASH_REMATCH BASH_VERSION BASH_VERSINFO BASH_COMMAND
		BASH_SUBSHELL BASH_ARGV BASH_ARGC BASHOPTS SHELLOPTS SHLVL FUNCNAME PIPESTATUS GROUPS
		HOSTTYPE OSTYPE MACHTYPE EPOCHSECONDS EPOCHREALTIME COLUMNS LINES CLAUDECODE`) {
		vars[v] = true
	}
	return vars
})

// environment reports whether a block may read name without setting it:
// bash's special parameters ($?, $#, $1, ...) and own variables, the
// process environment's, and what Claude Code and flowstate put there
// (CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID, CLAUDE_PLUGIN_ROOT,
// FLOWSTATE_WORKFLOW, ...).
func environment(v string) bool {
	return !patterns().name.MatchString(v) || v == "_" || shellVariables()[v] ||
		strings.HasPrefix(v, "CLAUDE_") || strings.HasPrefix(v, "FLOWSTATE_") || strings.HasPrefix(v, "LC_")
}

// arithmNames lists the bare variable names an arithmetic expression
// reads: (( n + 1 )) reads n as $n would. It keeps its own stack: a chain
// of a + b + c ... is a tree as deep as it is long.
func arithmNames(x syntax.ArithmExpr) []use {
	var out []use
	for todo := []syntax.ArithmExpr{x}; len(todo) > 0; {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		switch x := x.(type) {
		case *syntax.BinaryArithm:
			todo = append(todo, x.Y, x.X) // X first, as written
		case *syntax.UnaryArithm:
			todo = append(todo, x.X)
		case *syntax.ParenArithm:
			todo = append(todo, x.X)
		case *syntax.Word:
			if n := arithmName(x); n != "" {
				out = append(out, use{int(x.Pos().Line()), n})
			}
		}
	}
	return out
}

// arithmName is the variable an arithmetic operand names, if it is a bare
// name.
func arithmName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok {
		return ""
	}
	if l := w.Lit(); patterns().name.MatchString(l) {
		return l
	}
	return ""
}

// quoted reports whether a heredoc's delimiter is quoted (<<'EOF',
// <<"EOF", <<\EOF), which keeps its body from being expanded.
func quoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// literals is the literal text of a command's words, "" for a word that
// is not plain text ("$x", "a$(b)"); quotes around plain text are removed.
func literals(words []*syntax.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = literal(w)
	}
	return out
}

func literal(w *syntax.Word) string {
	var b strings.Builder
	if !wordText(&b, w.Parts, nil) {
		return ""
	}
	return b.String()
}

// wordText writes the text of a word's parts to b, quotes removed, a
// parameter as param writes it (nil: none); false when a part is not
// plain text.
func wordText(b *strings.Builder, parts []syntax.WordPart, param func(*syntax.ParamExp) (string, bool)) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if !wordText(b, p.Parts, param) {
				return false
			}
		case *syntax.ParamExp:
			if param == nil {
				return false
			}
			text, ok := param(p)
			if !ok {
				return false
			}
			b.WriteString(text)
		default:
			return false
		}
	}
	return true
}

// isFlowstate reports whether a command word runs flowstate: by name, by
// a path to it, or through $FLOWSTATE_BIN, looked for in the word itself
// and not in what it runs: every level of a nested $( would read all the
// levels below it again.
func isFlowstate(w *syntax.Word, lit string) bool {
	if lit == "flowstate" || path.Base(lit) == "flowstate" {
		return true
	}
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			found = found || n.Param != nil && n.Param.Value == "FLOWSTATE_BIN"
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			return false
		}
		return !found
	})
	return found
}

// flowstateCall reads the subcommand and flags of flowstate's arguments;
// the global --workflow ID may come before the subcommand.
func flowstateCall(args []string) (call, bool) {
	c := call{flags: map[string]bool{}}
	i := 0
	for ; i < len(args) && c.sub == ""; i++ {
		switch a := args[i]; {
		case a == "--workflow":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			c.sub = a
		}
	}
	if c.sub == "" {
		return c, false
	}
	for _, a := range args[i:] {
		switch {
		case strings.HasPrefix(a, "--"):
			f, _, _ := strings.Cut(a, "=")
			c.flags[f] = true
		case c.key == "" && !strings.HasPrefix(a, "-"):
			c.key = a
		}
	}
	return c, true
}

// assignedBy lists the variables a builtin sets from its arguments: read's
// names and -a array, mapfile's and readarray's array, printf -v's and
// getopts's name.
func assignedBy(args []string) []string {
	var out []string
	switch args[0] {
	case "read":
		out = optionTargets(args[1:], "a", "dinNptu")
	case "mapfile", "readarray":
		names := optionTargets(args[1:], "", "dnOsuCc")
		if len(names) > 0 {
			out = names[len(names)-1:]
		}
	case "printf":
		if len(args) > 2 && args[1] == "-v" {
			out = []string{args[2]}
		}
	case "getopts":
		if len(args) > 2 {
			out = []string{args[2]}
		}
	}
	return out
}

// optionTargets lists a builtin's operands and the values of its options
// in named (names of variables it sets), skipping the values of its other
// options that take one (valued).
func optionTargets(args []string, named, valued string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		for j, o := range a[1:] {
			if !strings.ContainsRune(named+valued, o) {
				continue
			}
			v := a[2+j:]
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			if strings.ContainsRune(named, o) {
				out = append(out, v)
			}
			break
		}
	}
	return out
}
