package checkpoint

import (
	"strings"

	"github.com/tidwall/gjson"
)

// The paths of the document's fields, for gjson, sjson and Get/Set: the
// one place the checkpoint's shape is spelled. Code outside this package
// names a field only through these and the builders below (a test,
// TestNoCheckpointPathLiterals, holds it to that), so a field can be
// found, and renamed, in one place. Readers that want several fields
// take a View instead.
const (
	PathSchemaVersion = "schema_version"
	PathWorkflowID    = "workflow_id"
	PathCommand       = "command"
	PathProjectName   = "project_name"
	PathDescription   = "workflow_description"
	PathStatus        = "status"
	PathCreatedAt     = "created_at"
	PathUpdatedAt     = "updated_at"
	// PathSession is the Claude Code session that started the workflow:
	// another session's blocks never pick it up.
	PathSession = "session_id"

	PathStateMachine    = "state_machine"
	PathCurrentState    = PathStateMachine + ".current_state"
	PathCompletedStates = PathStateMachine + ".completed_states"
	PathTransitionTable = PathStateMachine + ".transition_table"
	PathWorkflowConfig  = PathStateMachine + ".workflow_config"
	PathScope           = PathWorkflowConfig + ".scope"
	// PathConfigDescription is the description the state machine was
	// started with; a migrated document may hold another one at
	// PathDescription.
	PathConfigDescription  = PathWorkflowConfig + ".description"
	PathConfigCommand      = PathWorkflowConfig + ".command"
	PathTerminalState      = PathWorkflowConfig + ".terminal_state"
	PathClassification     = PathStateMachine + ".classification"
	PathResearchComplexity = PathClassification + ".research_complexity"
	PathResearchTopics     = PathClassification + ".research_topics"
	PathTopicDetails       = PathClassification + ".research_topic_details"
	PathGates              = PathStateMachine + ".gates"
	// PathAgents are the agents declared for the workflow (sm-init
	// --agents), which the hooks hold to the protocol.
	PathAgents = PathStateMachine + ".agents"

	PathPhaseData       = "phase_data"
	PathSupervisorState = "supervisor_state"

	PathErrorState  = "error_state"
	PathLastError   = PathErrorState + ".last_error"
	PathRetryCount  = PathErrorState + ".retry_count"
	PathFailedState = PathErrorState + ".failed_state"
	PathRetries     = PathErrorState + ".retries"

	PathMetadata          = "metadata"
	PathMetadataUpdatedAt = PathMetadata + ".updated_at"
	// PathRevision counts the checkpoint's writes (lib/store).
	PathRevision = PathMetadata + ".revision"

	PathHold    = "hold"
	PathRewinds = "rewinds"
	// PathBudget is the workflow's own spend limit (usage.Budget), when it
	// has one: given at its start, or allowed by a person since.
	PathBudget = "budget"
)

// Keys flowstate keeps in a state's phase_data, beside a command's own.
const (
	// PhaseArtifacts lists the files the state's workers delivered.
	PhaseArtifacts = "artifacts"
	// PhaseApproval is a person's approval of entering the state.
	PhaseApproval = "approval"
	// PhaseFeedback is why the state's work is done again (the reason of
	// a rewind or a rejection), for its workers to read.
	PhaseFeedback = "feedback"
	// PhasePartialFailures are the workers whose failure was accepted:
	// enough others delivered for the workflow to go on.
	PhasePartialFailures = "partial_failures"
	// PhaseIsolation is how the state's workers ran, decided at its
	// first plan: each in a git worktree of its own, merged into a
	// branch, or in the project's tree and why.
	PhaseIsolation = "isolation"
	// PhaseWorktrees maps each worker of an isolated state to the
	// worktree its latest agent worked in.
	PhaseWorktrees = "worktrees"
	// PhaseMerges maps each worker of an isolated state to what became
	// of its branch: merged, empty, a conflict, or discarded (its work
	// kept as a patch).
	PhaseMerges = "merges"
	// PhaseAttempts lists the attempts of an isolated state's workers
	// that were not merged (a failure, a conflict), each with the patch
	// that keeps its work.
	PhaseAttempts = "attempts"
)

// PhaseData is the path of phase_data.<state>, or of a key below it
// (PhaseData("plan", "approval")): a state's own data.
func PhaseData(state string, keys ...string) string {
	return under(PathPhaseData, state, keys)
}

// SupervisorState is the path of supervisor_state.<key>, or of a key
// below it (SupervisorState("research_supervisor", "workers")): the
// records of a state's workers.
func SupervisorState(key string, keys ...string) string {
	return under(PathSupervisorState, key, keys)
}

// Gate is the path of the gate on entering state.
func Gate(state string) string { return under(PathGates, state, nil) }

// Retries is the path of the retries used by state.
func Retries(state string) string { return under(PathRetries, state, nil) }

// under joins root and the components below it, each escaped for gjson
// and sjson: a name is a key, whatever characters it holds. (Get and Set
// refuse an escaped path: names that reach them are plain.)
func under(root, name string, keys []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, k := range append([]string{name}, keys...) {
		b.WriteByte('.')
		b.WriteString(gjson.Escape(k))
	}
	return b.String()
}
