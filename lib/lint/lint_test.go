package lint

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The files are written with ~~~ for ``` and start at line 1 after the
// frontmatter the helpers add: a command's takes lines 1-3, an agent's
// 1-5.
func command(body string) string {
	return "---\ndescription: d\n---\n" + strings.ReplaceAll(body, "~~~", "```")
}

func agent(body string) string {
	return "---\nname: a\ndescription: d\ntools: Bash\n---\n" + strings.ReplaceAll(body, "~~~", "```")
}

// task is a task block that passes run_in_background: false, with prompt.
func task(prompt string) string {
	return "~~~task\nTask {\n  subagent_type: reviewer\n  description: Review\n  run_in_background: false\n  prompt: |\n    " + prompt + "\n}\n~~~\n"
}

// One case per rule, good and bad; want is each finding as
// "line: part of its message", in order, and none for a clean file.
var cases = []struct {
	name string
	path string
	md   string
	want []string
}{
	// The markdown parses.
	{"unclosed fence", "commands/c.md", command("# C\n~~~bash\necho hi\n"), []string{"5: fence ``` never closed"}},
	{"bad task field", "commands/c.md", command("~~~task\nTask {\n  subagent_type: a\n  colour: red\n}\n~~~\n"), []string{"7: task block: unknown field \"colour\""}},

	{"Windows line ends", "commands/c.md", strings.ReplaceAll(command("## start\n~~~bash\necho NEXT=start\n~~~\n"), "\n", "\r\n"), nil},

	// Frontmatter.
	{"command with a description", "commands/c.md", command("Do it.\n"), nil},
	{"command without a description", "commands/c.md", "---\nargument-hint: X\n---\nDo it.\n", []string{"1: command frontmatter without a description"}},
	{"command without frontmatter", "commands/c.md", "Do it.\n", []string{"1: command frontmatter without a description"}},
	{"agent with its frontmatter", "agents/a.md", agent("Work.\n"), nil},
	{"agent without tools", "agents/a.md", "---\nname: a\ndescription: d\n---\nWork.\n", []string{"1: agent frontmatter without tools"}},

	// Task blocks run in the foreground.
	{"task in the foreground", "commands/c.md", command("~~~bash\nflowstate sm-init --description x --command c\n~~~\n" + task("Review it.")), nil},
	{"task in the background", "commands/c.md", command("~~~bash\ntrue\n~~~\n~~~task\nTask {\n  subagent_type: reviewer\n  description: Review\n  prompt: Review it.\n}\n~~~\n"),
		[]string{"7: task block without run_in_background: false"}},
	{"plain agent names and variable ones are a user's choice", "commands/c.md",
		command("~~~bash\necho AGENT=reviewer\n~~~\n~~~task\nTask {\n  subagent_type: review:${AGENT}\n  description: Review\n  run_in_background: false\n  prompt: Go.\n}\n~~~\n"), nil},

	// ${KEY} is printed before the task block.
	{"key echoed by the block before", "commands/c.md", command("~~~bash\necho \"PATH_TO=x.md\"\n~~~\n" + task("Write to: ${PATH_TO}")), nil},
	{"key printed by the flowstate command called", "commands/c.md", command("~~~bash\nflowstate sm-status\n~~~\n" + task("State: ${CURRENT_STATE}")), nil},
	{"key printed by an orchestrator step", "commands/c.md", command("## phase\n~~~bash\nflowstate phase-plan\n~~~\n## work\n" + task("Spec: ${SPEC_DIR}") +
		"## verify\n~~~bash\nflowstate phase-verify\n~~~\n## supervised\n## stopped\n"), nil},
	{"key nobody prints", "commands/c.md", command("~~~bash\necho A=1\n~~~\n" + task("Write to: ${PATH_TO}\n    Again: ${PATH_TO}")),
		[]string{"13: ${PATH_TO} is printed by no bash block before this task block"}},
	{"key printed only after", "commands/c.md", command("~~~bash\ntrue\n~~~\n" + task("${LATER}") + "~~~bash\necho LATER=x\n~~~\n"),
		[]string{"13: ${LATER} is printed by no bash block before"}},

	// Only what the block prints counts: not KEY= in a captured or piped
	// command's text, nor an assignment nobody echoes.
	{"a flowstate command's keys captured", "commands/c.md", command("~~~bash\nid=$(flowstate sm-status | sed -n 's/^WORKFLOW_ID=//p')\necho \"$id\"\n~~~\n" + task("Workflow: ${WORKFLOW_ID}")),
		[]string{"14: ${WORKFLOW_ID} is printed by no bash block"}},
	{"a flowstate command's keys piped on", "commands/c.md", command("~~~bash\nflowstate sm-status | grep -c .\n~~~\n" + task("State: ${CURRENT_STATE}")),
		[]string{"13: ${CURRENT_STATE} is printed by no bash block"}},
	{"a key assigned, never echoed", "commands/c.md", command("~~~bash\nWORKER_COUNT=3\n~~~\n" + task("Workers: ${WORKER_COUNT}")),
		[]string{"13: ${WORKER_COUNT} is printed by no bash block"}},
	{"a key echoed into a file", "commands/c.md", command("~~~bash\necho \"A=1\" > out.txt\n~~~\n" + task("A: ${A}")),
		[]string{"13: ${A} is printed by no bash block"}},
	{"keys printed by printf and a heredoc", "commands/c.md", command("~~~bash\nprintf 'A=%s\\n' x\ncat <<EOF\nB=2\nEOF\n~~~\n" + task("${A} ${B}")), nil},
	{"indexed keys printed by printf", "commands/c.md", command("~~~bash\necho N=2\nn=0\nfor lens in a b; do n=$((n + 1)); printf 'LENS_%d=%s\\n' \"$n\" \"$lens\"; done\n~~~\n" +
		"~~~task\nTask {\n  subagent_type: reviewer\n  description: Review ${i}\n  for_each: i in 1..${N}\n  run_in_background: false\n  prompt: |\n    Lens ${LENS_i}\n}\n~~~\n"), nil},

	// ${KEY_i} and ${i} in a for_each.
	{"indexed keys in a for_each", "commands/c.md", command("~~~bash\necho N=2\nfor i in 1 2; do echo \"FILE_$i=f$i\"; done\n~~~\n" +
		"~~~task\nTask {\n  subagent_type: reviewer\n  description: Review ${i}\n  for_each: i in 1..${N}\n  run_in_background: false\n  prompt: |\n    Read ${FILE_i}\n}\n~~~\n"), nil},
	{"indexed key outside a for_each", "commands/c.md", command("~~~bash\necho FILE_1=a\n~~~\n" + task("Read ${FILE_i} as number ${i}")),
		[]string{"13: ${FILE_i} outside a for_each", "13: ${i} outside a for_each"}},
	{"indexed key nobody prints", "commands/c.md", command("~~~bash\necho N=2\n~~~\n" +
		"~~~task\nTask {\n  subagent_type: reviewer\n  description: Review\n  for_each: i in 1..${N}\n  run_in_background: false\n  prompt: |\n    Read ${FILE_i}\n}\n~~~\n"),
		[]string{"14: ${FILE_i} is printed by no bash block"}},
	{"for_each not 1..N", "commands/c.md", command("~~~bash\necho FILE_1=a\n~~~\n" +
		"~~~task\nTask {\n  subagent_type: reviewer\n  description: Review\n  for_each: f in files\n  run_in_background: false\n  prompt: |\n    Read ${FILE_i}\n}\n~~~\n"),
		[]string{"11: for_each: f in files: write for_each: i in 1..${COUNT}"}},

	// A task block comes right after its bash block, or after task
	// blocks of its section that do.
	{"task after a task", "commands/c.md", command("~~~bash\necho A=1\n~~~\n" + task("Go.") + task("${A}")), nil},
	{"task starting a section", "commands/c.md", command("~~~bash\necho A=1\n~~~\n" + task("Go.") + "## again\n" + task("${A}")), nil},

	// NEXT lands on a section.
	{"literal NEXT to a section", "commands/c.md", command("## start\n~~~bash\necho NEXT=end\n~~~\n## end\n~~~bash\necho 'NEXT=done'\n~~~\n"), nil},
	{"literal NEXT to nowhere", "commands/c.md", command("## start\n~~~bash\ntrue\necho \"NEXT=nowhere\"\n~~~\n"),
		[]string{"7: NEXT=nowhere, and the file has no section \"## nowhere\""}},
	{"a step's NEXT without its section", "commands/c.md", command("## phase\n~~~bash\nflowstate phase-plan\n~~~\n## work\n## verify\n"),
		[]string{"6: flowstate phase-plan can print NEXT=supervised", "6: flowstate phase-plan can print NEXT=stopped"}},
	{"a sub-supervisor's steps never delegate nor stop", "agents/a.md", agent("## workers\n~~~bash\nflowstate phase-plan --supervisor\n~~~\n## work\n## verify\n~~~bash\nflowstate phase-verify --supervisor\n~~~\n"), nil},
	{"a sequential workflow never delegates", "commands/c.md", command("## start\n~~~bash\nflowstate phase-start --command c --sequential --require-scope <<'EOF'\n$ARGUMENTS\nEOF\n~~~\n" +
		"## phase\n~~~bash\nflowstate --workflow w1 phase-plan\n~~~\n## work\n## verify\n## stopped\n"), nil},
	{"phase-start without --classified never answers classified", "commands/c.md", command("## start\n~~~bash\nflowstate phase-start --command c <<'EOF'\n$ARGUMENTS\nEOF\n~~~\n" +
		"## work\n## verify\n## stopped\n## supervised\n"), []string{"6: flowstate phase-start can print NEXT=classify"}},

	// No block depends on an earlier block's shell variables.
	{"variable of an earlier block", "commands/c.md", command("~~~bash\ndir=/tmp\n~~~\n~~~bash\necho hi\nls \"$dir\" \"${dir}\"\n~~~\n"),
		[]string{"9: $dir is never set in this block"}},
	{"variables set in the block", "commands/c.md", command("~~~bash\nx=1; local y; declare -a z; export W=2\nfor f in a b; do echo \"$f\"; done\nwhile IFS= read -r line; do echo \"$line\"; done < /dev/null\n" +
		"read -ra parts -p '> ' <<< 'a b'; mapfile -t rows < /dev/null; printf -v stamp '%s' now; getopts ab opt\n" +
		"(( n = 1 )); let m=2; : \"${dflt:=3}\"; (( k++ )); for ((j = 0; j < 2; j++)); do :; done; declare -A map; map[key]=1\n" +
		"echo \"$x $y ${z[0]} $W ${parts[0]} ${rows[@]} $stamp $opt $n $m $dflt $k $REPLY $j ${map[key]}\"\n~~~\n"), nil},
	{"what the environment gives", "commands/c.md", command("~~~bash\necho \"$HOME $PWD $PATH $? $# $@ $$ $CLAUDE_PROJECT_DIR $CLAUDE_CODE_SESSION_ID ${CLAUDE_PLUGIN_ROOT} $FLOWSTATE_WORKFLOW\"\n" +
		"echo \"${MY_TOOL:-none} ${OTHER:?set by the session hook} ${ALT:+x}\"\n~~~\n"), nil},
	{"what flowstate's state-load evaluates", "commands/c.md", command("~~~bash\neval \"$(flowstate state-load)\"\necho \"$SPEC_DIR\"\n~~~\n"), nil},
	{"state-load sets a lower-case key the file stores", "commands/c.md", command("~~~bash\nflowstate state-append spec_dir x\n~~~\n~~~bash\neval \"$(flowstate state-load)\"\necho \"$spec_dir\"\n~~~\n"), nil},
	{"state-load evaluated as its usage shows", "commands/c.md", command("~~~bash\nflowstate state-append spec_dir x\n~~~\n~~~bash\nout=$(flowstate state-load) && eval \"$out\"\necho \"$spec_dir\"\n~~~\n"), nil},
	{"a stored lower-case key without state-load", "commands/c.md", command("~~~bash\nflowstate state-append spec_dir x\n~~~\n~~~bash\necho \"$spec_dir\"\n~~~\n"),
		[]string{"8: $spec_dir is never set in this block"}},
	{"an eval assigns no lower-case variable", "commands/c.md", command("~~~bash\neval \"$(flowstate state-load)\"\necho \"$spec\"\n~~~\n"),
		[]string{"6: $spec is never set in this block"}},
	{"arithmetic reads a name", "commands/c.md", command("~~~bash\necho $(( count + 1 ))\n~~~\n"), []string{"5: $count is never set"}},
	{"a command substitution reads a name", "commands/c.md", command("~~~bash\nx=$(echo \"$y\")\n~~~\n"), []string{"5: $y is never set"}},
	{"a quoted heredoc expands nothing", "commands/c.md", command("~~~bash\ncat <<'EOF'\n$nothing here\nEOF\n~~~\n"), nil},
	{"an unquoted heredoc expands", "commands/c.md", command("~~~bash\ncat <<EOF\n$something here\nEOF\n~~~\n"), []string{"6: $something is never set"}},

	// Nothing is sourced.
	{"source", "commands/c.md", command("~~~bash\nsource lib.sh\n~~~\n"), []string{"5: `source lib.sh`: a bash block never sources a file"}},
	{"dot", "agents/a.md", agent("~~~bash\nset -e; . ./lib.sh\n~~~\n"), []string{"7: `. ./lib.sh`: a bash block never sources a file"}},
	{"source of a variable path", "commands/c.md", command("~~~bash\nlib=x.sh\nsource \"$lib\" 2>/dev/null\n~~~\n"), []string{"6: `source \"$lib\"`: a bash block never sources"}},

	// Bash blocks parse.
	{"bash that parses", "commands/c.md", command("~~~bash\nif true; then echo ok; fi\n~~~\n"), nil},
	{"bash that does not parse", "commands/c.md", command("~~~bash\necho ok\nif true; then echo ok\n~~~\n"), []string{"6: bash block does not parse"}},

	// $ARGUMENTS alone in a quoted heredoc.
	{"arguments in a quoted heredoc", "commands/c.md", command("~~~bash\nflowstate sm-init --command c --description - <<'FLOWSTATE_EOF'\n$ARGUMENTS\nFLOWSTATE_EOF\n~~~\n"), nil},
	{"arguments after the heredoc", "commands/c.md", command("~~~bash\ncat <<'EOF'\n$ARGUMENTS\nEOF\ncat <<-\\EOF\n\t$ARGUMENTS\n\tEOF\n$ARGUMENTS\n~~~\n"), []string{"11: $ARGUMENTS outside a quoted heredoc"}},
	{"arguments in an unquoted heredoc", "commands/c.md", command("~~~bash\ncat <<EOF\n$ARGUMENTS\nEOF\n~~~\n"), []string{"6: $ARGUMENTS outside a quoted heredoc"}},
	{"arguments on a command line", "commands/c.md", command("~~~bash\necho \"$ARGUMENTS\"\n~~~\n"), []string{"5: $ARGUMENTS outside a quoted heredoc"}},
	{"arguments not alone", "commands/c.md", command("~~~bash\ncat <<'EOF'\nrequest: $ARGUMENTS\nEOF\n~~~\n"), []string{"6: $ARGUMENTS must stand alone on its line"}},
	{"arguments in prose", "commands/c.md", command("Review $ARGUMENTS.\n"), []string{"4: $ARGUMENTS outside a bash block"}},
	{"arguments in a task block", "commands/c.md", command("~~~bash\ntrue\n~~~\n" + task("Review $ARGUMENTS")), []string{"13: $ARGUMENTS in a task block"}},
	{"arguments in an agent are just unset", "agents/a.md", agent("~~~bash\necho \"$ARGUMENTS\"\n~~~\n"), []string{"7: $ARGUMENTS is never set"}},

	// Claude Code's positional arguments never reach a command's text.
	{"positional in a command", "commands/c.md", command("~~~bash\nflowstate list | awk '{print $1}'\n~~~\n"), []string{"5: \"$1\" in a command"}},
	{"positional argument index", "commands/c.md", command("Review $ARGUMENTS[0].\n"), []string{"4: \"$ARGUMENTS[\" in a command", "4: $ARGUMENTS outside a bash block"}},
	{"positional in an agent", "agents/a.md", agent("~~~bash\nflowstate list | awk '{print $1}'\n~~~\n"), nil},

	// An agent's paths come from its prompt.
	{"agent saying where to write in general", "agents/a.md", agent("Write the file with the Write tool at exactly the path given.\n"), nil},
	{"agent naming a path", "agents/a.md", agent("Write the report to: .flowstate/report.md\n"), []string{"6: a write line in the agent's text"}},
	{"agent naming its answer", "agents/a.md", agent("- Return exactly: DONE\n"), []string{"6: a return line in the agent's text"}},
	{"a command may say both", "commands/c.md", command("Write the report to: .flowstate/report.md\nReturn exactly: DONE\n"), nil},
}

func TestCheck(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check(c.path, c.md)
			ok := len(got) == len(c.want)
			for i := 0; ok && i < len(got); i++ {
				line, part, _ := strings.Cut(c.want[i], ": ")
				ok = fmt.Sprint(got[i].Line) == line && strings.Contains(got[i].Message, part) && got[i].Path == c.path
			}
			if !ok {
				var lines []string
				for _, f := range got {
					lines = append(lines, f.String())
				}
				t.Errorf("findings:\n%s\nwant:\n%s\nfile:\n%s", strings.Join(lines, "\n"), strings.Join(c.want, "\n"), c.md)
			}
		})
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		path string
		fm   map[string]string
		want Kind
	}{
		{".claude/agents/a.md", nil, Agent},
		{"/p/.claude/commands/c.md", map[string]string{"name": "x"}, Command},
		{"plugin/commands/sub/c.md", nil, Command},
		{"a.md", map[string]string{"name": "a"}, Agent},
		{"c.md", map[string]string{"description": "d"}, Command},
		{"/tmp/x/c.md", nil, Command},
	} {
		if got := KindOf(c.path, c.fm); got != c.want {
			t.Errorf("KindOf(%q, %v) = %v, want %v", c.path, c.fm, got, c.want)
		}
	}
}

// TestFindingString: the form compilers use, which editors jump to.
func TestFindingString(t *testing.T) {
	if got := (Finding{"commands/c.md", 12, "bad"}).String(); got != "commands/c.md:12: bad" {
		t.Errorf("%q", got)
	}
}

// BenchmarkCheck lints the plugin's largest command, as flowstate lint
// and tests/plugin do for every file.
func BenchmarkCheck(b *testing.B) {
	md, err := os.ReadFile("../../commands/coordinate.md")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if f := Check("commands/coordinate.md", string(md)); len(f) > 0 {
			b.Fatal(f)
		}
	}
}
