// Package checkpoint owns the workflow checkpoint document, schema 2.1:
// building a fresh one (New), validating it (Validate), migrating older
// documents 1.0 … 2.0 (Migrate) and reading or editing one value by path
// (Get, Set, Increment, Append).
//
// It works on []byte JSON only and must not do I/O of any kind (no files,
// no processes, no clock: callers pass the time). Locking, backups and
// atomic writes belong to lib/store. Every CLI call validates, so Validate
// is hand-written over gjson; the JSON Schema in checkpoint-2.1.schema.json
// documents the same rules and a test keeps the two in agreement.
package checkpoint

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"slices"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/tidwall/pretty"
)

// SchemaVersion is the only version Validate accepts and Migrate produces.
const SchemaVersion = "2.1"

// SchemaJSON is the JSON Schema (draft 2020-12) of a 2.1 checkpoint, for
// docs and `flowstate` to print. The binary validates with Validate, not
// with this schema: compiling a schema on every call would cost more than
// the whole call is allowed to take.
//
//go:embed checkpoint-2.1.schema.json
var SchemaJSON []byte

// Params for a fresh checkpoint created by `flowstate sm-init`.
type Params struct {
	WorkflowID, Command, Description, Scope, ProjectName string
	InitialState, TerminalState                          string
	Transitions                                          map[string][]string // the machine's table, state -> allowed next states
	Classification                                       Classification
	Now                                                  time.Time
}

// Classification is the classifier's verdict stored in
// state_machine.classification.
type Classification struct {
	WorkflowType       string   `json:"workflow_type"`
	ResearchComplexity int      `json:"research_complexity"`
	ResearchTopics     []string `json:"research_topics"`
	Confidence         float64  `json:"confidence"`
	Reasoning          string   `json:"reasoning"`
	ClassifiedAt       string   `json:"classified_at,omitempty"` // RFC 3339 UTC, or empty/null
	// TopicDetails are the topics as objects, when the classifier gave them so.
	TopicDetails json.RawMessage `json:"research_topic_details,omitempty"`
}

// The document as New writes it. Field order is the order in the file.
type document struct {
	SchemaVersion       string         `json:"schema_version"`
	WorkflowID          string         `json:"workflow_id"`
	Command             string         `json:"command"`
	ProjectName         string         `json:"project_name"`
	WorkflowDescription string         `json:"workflow_description"`
	Status              string         `json:"status"`
	CreatedAt           string         `json:"created_at"`
	UpdatedAt           string         `json:"updated_at"`
	StateMachine        stateMachine   `json:"state_machine"`
	PhaseData           struct{}       `json:"phase_data"`
	SupervisorState     struct{}       `json:"supervisor_state"`
	ErrorState          errorState     `json:"error_state"`
	Metadata            metadataFields `json:"metadata"`
}

type stateMachine struct {
	CurrentState    string              `json:"current_state"`
	CompletedStates []string            `json:"completed_states"`
	TransitionTable map[string][]string `json:"transition_table"`
	WorkflowConfig  workflowConfig      `json:"workflow_config"`
	Classification  classificationDoc   `json:"classification"`
}

type workflowConfig struct {
	Scope         string `json:"scope"`
	Description   string `json:"description"`
	Command       string `json:"command"`
	TerminalState string `json:"terminal_state"`
}

// classificationDoc differs from Classification only in writing an unset
// classified_at as null, which is what the schema documents.
type classificationDoc struct {
	WorkflowType       string   `json:"workflow_type"`
	ResearchComplexity int      `json:"research_complexity"`
	ResearchTopics     []string `json:"research_topics"`
	Confidence         float64  `json:"confidence"`
	Reasoning          string   `json:"reasoning"`
	ClassifiedAt       *string  `json:"classified_at"`
	// TopicDetails are kept as the classifier gave them.
	TopicDetails json.RawMessage `json:"research_topic_details,omitempty"`
}

type errorState struct {
	LastError   *string `json:"last_error"`
	RetryCount  int     `json:"retry_count"`
	FailedState *string `json:"failed_state"`
}

type metadataFields struct {
	CheckpointID string `json:"checkpoint_id"`
	ProjectName  string `json:"project_name"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// Workflow statuses. A workflow is in_progress while its command may run
// it; awaiting_approval and paused while it waits for a person, when
// nothing may move it on; complete, failed, abandoned and cancelled once it
// is finished.
const (
	InProgress       = "in_progress"
	AwaitingApproval = "awaiting_approval"
	Paused           = "paused"
	Complete         = "complete"
	Failed           = "failed"
	Abandoned        = "abandoned"
	Cancelled        = "cancelled"
)

var statuses = []string{InProgress, AwaitingApproval, Paused, Complete, Failed, Abandoned, Cancelled}

// Worker statuses, of the records in supervisor_state.<name>.workers
// (lib/supervisor writes them). A worker is recorded pending before it
// starts, running (or in_progress, the original design's word) while it
// works, and completed or failed when it returns.
const (
	WorkerCompleted  = "completed"
	WorkerFailed     = "failed"
	WorkerPending    = "pending"
	WorkerRunning    = "running"
	WorkerInProgress = "in_progress"
)

// WorkerStatuses lists the worker statuses, in the order messages name
// them.
func WorkerStatuses() []string { return slices.Clone(workerStatuses) }

var workerStatuses = []string{WorkerCompleted, WorkerFailed, WorkerPending, WorkerRunning, WorkerInProgress}

// Active reports whether a workflow with this status is unfinished: in
// progress, or waiting for a person (Held). A workflow in its terminal
// state stays active while that last phase runs; "" is how a document
// written before the status field reads. The one definition, so
// discovery, listing, status and the hooks cannot disagree on it.
func Active(status string) bool { return Running(status) || Held(status) }

// Running reports whether the workflow's command may move it on: it is
// active and no person holds it.
func Running(status string) bool { return status == "" || status == InProgress }

// Held reports whether a person holds the workflow: it waits for an
// approval, or it is paused. It is unfinished, but nothing may push it on.
func Held(status string) bool { return status == AwaitingApproval || status == Paused }

// Timestamp formats t the way every time in a checkpoint is written:
// RFC 3339 in UTC, second resolution.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// New returns a valid 2.1 document, indented JSON, for a workflow that
// starts in p.InitialState. Zero classification fields get the defaults
// the bash library used (workflow_type = scope, research_complexity 2) so
// commands without a classifier still produce a valid document.
func New(p Params) ([]byte, error) {
	if p.WorkflowID == "" {
		return nil, fail.Invalidf("checkpoint: new: empty workflow id")
	}
	if p.Now.IsZero() {
		return nil, fail.Invalidf("checkpoint: new: zero time; pass the current time")
	}
	if len(p.Transitions) == 0 {
		return nil, fail.Invalidf("checkpoint: new: empty transition table")
	}
	table := make(map[string][]string, len(p.Transitions))
	for s, next := range p.Transitions {
		if next == nil {
			next = []string{} // a terminal state is [], never null
		}
		table[s] = next
	}
	c := p.Classification
	cd := classificationDoc{
		WorkflowType:       c.WorkflowType,
		ResearchComplexity: c.ResearchComplexity,
		ResearchTopics:     c.ResearchTopics,
		Confidence:         c.Confidence,
		Reasoning:          c.Reasoning,
		TopicDetails:       c.TopicDetails,
	}
	if cd.WorkflowType == "" {
		cd.WorkflowType = p.Scope
	}
	if cd.ResearchComplexity == 0 {
		cd.ResearchComplexity = 2
	}
	if cd.ResearchTopics == nil {
		cd.ResearchTopics = []string{}
	}
	if c.ClassifiedAt != "" {
		at := c.ClassifiedAt
		cd.ClassifiedAt = &at
	}
	now := Timestamp(p.Now)
	d := document{
		SchemaVersion:       SchemaVersion,
		WorkflowID:          p.WorkflowID,
		Command:             p.Command,
		ProjectName:         p.ProjectName,
		WorkflowDescription: p.Description,
		Status:              InProgress,
		CreatedAt:           now,
		UpdatedAt:           now,
		StateMachine: stateMachine{
			CurrentState:    p.InitialState,
			CompletedStates: []string{},
			TransitionTable: table,
			WorkflowConfig: workflowConfig{
				Scope:         p.Scope,
				Description:   p.Description,
				Command:       p.Command,
				TerminalState: p.TerminalState,
			},
			Classification: cd,
		},
		Metadata: metadataFields{
			CheckpointID: p.WorkflowID,
			ProjectName:  p.ProjectName,
			CreatedAt:    now,
			UpdatedAt:    now,
		},
	}
	out, err := marshal(d)
	if err != nil {
		return nil, err
	}
	// The params come from a machine definition the caller may have got
	// wrong (initial state not in the table, …): the same checks as for a
	// stored document, with the same messages.
	if err := Validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// marshal encodes v without HTML escaping (descriptions are prose, `<` must
// stay `<`) and formats it like every document this package writes.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fail.Invalidf("checkpoint: encode: %v", err)
	}
	return format(b.Bytes()), nil
}

// format is the one layout of every document this package returns:
// two-space indent, short arrays on one line, a final newline. Keeping one
// layout makes checkpoint files readable and their diffs small.
func format(doc []byte) []byte { return pretty.Pretty(doc) }
