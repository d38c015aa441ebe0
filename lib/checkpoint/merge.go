package checkpoint

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
)

// owned are the top-level fields flowstate keeps itself: the state
// machine, the status and the error changes go through sm-*, the rest
// names the workflow. A merge may repeat them but not change them.
var owned = []string{
	PathSchemaVersion, PathWorkflowID, PathCommand, PathProjectName, PathDescription, PathStatus,
	PathCreatedAt, PathUpdatedAt, PathStateMachine, PathErrorState, PathMetadata, PathSession,
}

// CheckMerge checks a merge document without the checkpoint, so a caller
// can refuse it before taking the workflow's lock: one JSON object within
// limit.JSON's bounds.
func CheckMerge(patch []byte) error {
	if err := limit.JSON(patch, "checkpoint: merge: the document"); err != nil {
		return err
	}
	if !gjson.ValidBytes(patch) || !gjson.ParseBytes(patch).IsObject() {
		return fail.Invalidf("checkpoint: merge: the document is not a JSON object; pass one like '{\"research_reports\": [\"reports/001.md\"]}'")
	}
	return nil
}

// Merge merges the JSON object patch into doc: an object meets an object
// key by key, at any depth; any other value (null included) replaces
// what was there. The fields flowstate owns (state_machine, status,
// workflow_id, ...) may appear only with the values they already have.
// updated_at is touched and the result must Validate; on any error
// nothing is changed.
func Merge(doc, patch []byte, now time.Time) ([]byte, error) {
	if err := CheckMerge(patch); err != nil {
		return nil, err
	}
	m, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	p, err := Decode(patch)
	if err != nil {
		return nil, err
	}
	// As JSON: the merge changes nested objects in place.
	before := make(map[string]string, len(owned))
	for _, k := range owned {
		before[k] = ownedJSON(m, k)
	}
	mergeObject(m, p)
	for _, k := range owned {
		if ownedJSON(m, k) != before[k] {
			return nil, fail.Invalidf("checkpoint: merge: %s is flowstate's own field and would change; %s", k, ownedHint(k))
		}
	}
	ts := Timestamp(now)
	m["updated_at"] = ts
	if md, ok := m["metadata"].(map[string]any); ok {
		md["updated_at"] = ts
	}
	out, err := Encode(m)
	if err != nil {
		return nil, err
	}
	if err := Validate(out); err != nil {
		return nil, fmt.Errorf("checkpoint: merge: %w", err)
	}
	return out, nil
}

// ownedJSON is m[k] as JSON, "" when absent: encoding/json sorts map
// keys, so equal values encode alike.
func ownedJSON(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return ""
	}
	b, _ := json.Marshal(v) // decoded JSON always encodes
	return string(b)
}

// mergeObject merges src into dst in place.
func mergeObject(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeObject(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// ownedHint says what changes an owned field instead.
func ownedHint(k string) string {
	switch k {
	case "state_machine":
		return "move the workflow with sm-transition"
	case "status":
		return "finish the workflow with sm-finish"
	case "error_state":
		return "record errors with sm-fail and sm-retry"
	}
	return "leave it out (flowstate's own fields: " + strings.Join(slices.Sorted(slices.Values(owned)), ", ") + ")"
}
