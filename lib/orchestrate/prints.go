package orchestrate

import "github.com/flowstate-dev/flowstate/lib/protocol"

// LaunchFlag is the flag of a command's start (phase-start, resume) that
// says its file has the workflow engine's sections (## launch, ##
// launched, ## steps): only such a command runs on the workflow engine.
const LaunchFlag = "--launch"

// Prints is what each step can print, by the flowstate command that runs
// it: the keys and NEXT sections of plan.go, hold.go, start.go,
// verify.go and launch.go. flowstate lint (lib/lint) checks the command
// files that call the steps against it, and the plugin's tests that the
// steps print nothing else; a step that prints a new key or jumps to a
// new section adds it here.
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
			// A step of a command whose script runs its phases goes to the
			// block after its launch (OnWorkflowEngine).
			{Section: LaunchedSection, Without: []string{"--supervisor"}, InFile: LaunchFlag},
		},
	}
	with := func(base protocol.Prints, keys []string, next ...protocol.Jump) protocol.Prints {
		return protocol.Prints{Keys: append(keys, base.Keys...), Next: append(next, base.Next...)}
	}
	launches := []string{"WORKFLOW_NAME", "WORKFLOW_ARGS"}
	classifies := []string{"DESCRIPTION", "CLASSIFICATION_PATH"}
	toLaunch := protocol.Jump{Section: LaunchSection, With: LaunchFlag}
	return map[string]protocol.Prints{
		"phase-start": with(plan, append(classifies, launches...),
			// A command's own definition (--machine) is classified only
			// when it names a classifier, which its command then asks.
			protocol.Jump{Section: "classify", Without: []string{"--classified", "--require-scope", "--machine"}},
			protocol.Jump{Section: "classified", With: "--classified"},
			toLaunch),
		"phase-plan":   plan,
		"phase-verify": with(plan, []string{"RUNNING"}),
		"resume":       with(plan, launches, toLaunch),
		// The block after a launch: how it ended (what the steps
		// engine's last block prints), the launch again, or, switched to
		// the steps engine (--steps), what a plan prints, or the
		// classifier to ask in a command whose start classifies.
		"phase-launched": with(plan, append(append([]string{"RUNNING"}, classifies...), launches...),
			protocol.Jump{Section: "classify", InFile: "--classified"},
			protocol.Jump{Section: LaunchSection},
			protocol.Jump{Section: LaunchedSection}),
	}
}
