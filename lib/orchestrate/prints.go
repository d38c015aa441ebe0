package orchestrate

import "github.com/flowstate-dev/flowstate/lib/protocol"

// Prints is what each step can print, by the flowstate command that runs
// it: the keys and NEXT sections of plan.go, hold.go, start.go and
// verify.go. flowstate lint (lib/lint) checks the command files that call
// the steps against it, and the plugin's tests that the steps print
// nothing else; a step that prints a new key or jumps to a new section
// adds it here.
func Prints() map[string]protocol.Prints {
	held := []string{"WORKFLOW_ID", "STATUS", "WAITING_FOR", "REVIEW", "MESSAGE"} // hold.go
	plan := protocol.Prints{
		Keys: append([]string{"AGENT", "SPEC_DIR", "BRIEF", "WORKER_COUNT", "ISOLATED_COUNT", "TOPIC_i", "OUTPUT_i", "STATE", "SUPERVISOR",
			"WORKFLOW_ID", "FINAL_STATE", "ARTIFACTS_DIR", "ARTIFACT_COUNT"}, held...),
		Next: []protocol.Jump{
			{Section: "work"},
			// A sub-supervisor plans its own state only, and a sequential
			// workflow never delegates.
			{Section: "supervised", Without: []string{"--supervisor"}, Mode: []string{"--sequential"}},
			{Section: "verify"},
			// A sub-supervisor ends on its signal line instead.
			{Section: Stopped, Without: []string{"--supervisor"}},
		},
	}
	with := func(keys []string, next ...protocol.Jump) protocol.Prints {
		return protocol.Prints{Keys: append(keys, plan.Keys...), Next: append(next, plan.Next...)}
	}
	return map[string]protocol.Prints{
		"phase-start": with([]string{"DESCRIPTION", "CLASSIFICATION_PATH"},
			// A command's own definition (--machine) is classified only
			// when it names a classifier, which its command then asks.
			protocol.Jump{Section: "classify", Without: []string{"--classified", "--require-scope", "--machine"}},
			protocol.Jump{Section: "classified", With: "--classified"}),
		"phase-plan":   plan,
		"phase-verify": with([]string{"RUNNING"}),
		"resume":       plan,
	}
}
