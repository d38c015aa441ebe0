package orchestrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/classify"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/fsx"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/phase"
	"github.com/flowstate-dev/flowstate/lib/sm"
	"github.com/flowstate-dev/flowstate/lib/store"
)

// coordination values stored in phase_data.initialize.coordination.
const (
	adaptive   = "adaptive"
	sequential = "sequential"
)

// ParseArgs splits a command's arguments as typed into the scope and the
// description; a command that requires a scope refuses arguments without
// one, naming the scopes.
func ParseArgs(command, raw string, requireScope bool) (scope, description string, err error) {
	scope, description, err = phase.Args(raw)
	if err == nil && scope == "" && requireScope {
		err = fail.Usagef("give the scope first: /flowstate:%s --scope SCOPE DESCRIPTION, SCOPE one of %s", command, strings.Join(machine.Default().ScopeNames(), ", "))
	}
	return scope, description, err
}

// Request is one phase-start.
type Request struct {
	Command     string
	Scope       string // given by the user; "" to classify
	Description string
	Sequential  bool   // one worker at a time and no sub-supervisors
	Classified  bool   // the classifier has written its JSON
	Session     string // CLAUDE_CODE_SESSION_ID; may be empty
	Mode        string // FLOWSTATE_CLASSIFICATION: "" or agent, offline
}

// Start creates the workflow of r, or, when the workflow-classifier agent
// must classify the request first, keeps the id it will write under and
// asks for it (NEXT=classify); r.Classified then creates the workflow from
// what the agent wrote.
func Start(p *store.Project, r Request) (Output, error) {
	var out Output
	if r.Session != "" {
		if err := store.ValidID(r.Session); err != nil {
			return out, fail.Usagef("CLAUDE_CODE_SESSION_ID: %v", err)
		}
	}
	pending := filepath.Join(p.StateDir, "pending", orDefault(r.Session, "no-session"))
	var cls classify.Classification
	id, classPath := "", ""
	switch mode := r.Mode; {
	case r.Scope != "":
		// No topics: the research phase studies the request itself, one worker.
		var err error
		if cls, err = classify.Given(r.Scope, 1, ""); err != nil {
			return out, err
		}
	case mode == "offline":
		cls = classify.Offline(r.Description)
	case mode != "" && mode != "agent":
		return out, fail.Usagef("FLOWSTATE_CLASSIFICATION=%q: use agent (the default) or offline", mode)
	case r.Classified:
		b, err := os.ReadFile(pending)
		if err != nil {
			return out, fail.Usagef("no classification pending for this session (%v); start again with /flowstate:%s DESCRIPTION", err, r.Command)
		}
		id = strings.TrimSpace(string(b))
		classPath = filepath.Join(specDir(p, id), "classification.json")
		data, err := os.ReadFile(classPath)
		if err != nil {
			return out, fail.Usagef("the workflow-classifier wrote no classification at %s; run /flowstate:%s again", classPath, r.Command)
		}
		if cls, err = classify.Parse(data, classify.MinConfidence); err != nil {
			return out, fmt.Errorf("%s: %w", classPath, err)
		}
	default:
		// The classifier runs between two bash blocks that share nothing but
		// files: keep the workflow id it writes under for the second block.
		id = store.NewID(r.Command, p.Now())
		classPath = filepath.Join(specDir(p, id), "classification.json")
		if err := fsx.EnsureDir(filepath.Dir(pending)); err != nil {
			return out, err
		}
		if err := fsx.WriteFile(pending, []byte(id+"\n")); err != nil {
			return out, err
		}
		if err := os.MkdirAll(filepath.Dir(classPath), 0o755); err != nil {
			return out, err
		}
		out.add("DESCRIPTION", r.Description)
		out.add("CLASSIFICATION_PATH", classPath)
		out.add("NEXT", "classify")
		return out, nil
	}
	w, err := sm.Init(p, sm.InitParams{ID: id, Description: r.Description, Command: r.Command, Scope: cls.WorkflowType,
		Classification: cls, Machine: machine.Default(), Session: r.Session})
	if err != nil {
		return out, err
	}
	coord := adaptive
	if r.Sequential {
		coord = sequential
	}
	init := map[string]string{"coordination": coord}
	if classPath != "" {
		init["classification_path"] = classPath
	}
	if err := setPhaseData(w, "initialize", init); err != nil {
		return out, err
	}
	if err := os.Remove(pending); err != nil && !errors.Is(err, fs.ErrNotExist) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("could not remove %s: %v", pending, err))
	}
	out.add("WORKFLOW_ID", w.ID)
	out.add("WORKFLOW_SCOPE", cls.WorkflowType)
	out.add("NEXT", "phase")
	return out, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func specDir(p *store.Project, id string) string { return filepath.Join(p.Dir, phase.SpecsDir, id) }

// setPhaseData merges fields into phase_data.<state>.
func setPhaseData(w *store.Workflow, state string, fields map[string]string) error {
	return w.Update(func(tx *store.Tx) error {
		// Sorted, so the checkpoint's bytes do not depend on map order.
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if err := set(tx, "phase_data."+state+"."+k, fields[k]); err != nil {
				return err
			}
		}
		return nil
	})
}

// set writes value as JSON at path of tx's checkpoint.
func set(tx *store.Tx, path string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return setRaw(tx, path, raw)
}

// setRaw writes raw JSON at path of tx's checkpoint through
// checkpoint.Set, so every write touches updated_at as any other
// checkpoint edit does and is refused if it would make the checkpoint
// invalid.
func setRaw(tx *store.Tx, path string, raw []byte) error {
	doc, err := checkpoint.Set(tx.Checkpoint, path, raw, tx.Now)
	if err != nil {
		return err
	}
	tx.Checkpoint = doc
	return nil
}
