package orchestrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/flowstate-dev/flowstate/lib/checkpoint"
	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/kv"
	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
	"github.com/flowstate-dev/flowstate/lib/term"
)

// What an artifact proves about its worker, and the record kept of it.
// Pure: no I/O.

// Checked is what an artifact proved about its worker. What failed the
// state's check is read from the Metadata kept in its record (failing).
type Checked struct {
	Metadata      json.RawMessage
	FilesModified []string
}

// CheckArtifact reads the artifact a worker of r wrote, in r's format
// (docs/command-protocol.md section 6; a definition's markdown sections or
// JSON fields). A file that is not one is an error naming what is wrong,
// so a placeholder never passes.
func CheckArtifact(r Role, data []byte) (Checked, error) {
	var v any
	var c Checked
	switch r.Format {
	case machine.FormatPlan:
		phases, err := supervisor.ParsePlan(data)
		if err != nil {
			return c, err
		}
		waves, err := supervisor.Waves(phases)
		if err != nil {
			return c, err
		}
		v = map[string]int{"phases": len(phases), "waves": len(waves)}
	case machine.FormatTestResults:
		res, err := supervisor.ParseTestResults(data)
		if err != nil {
			return c, err
		}
		v = res
	case machine.FormatMarkdown:
		sec, err := supervisor.ParseSections(data, r.Sections)
		if err != nil {
			return c, err
		}
		v = sec
	case machine.FormatJSON:
		obj, err := jsonFields(data, r.Fields, r.FailWhen)
		if err != nil {
			return c, err
		}
		v = obj
	default:
		meta, err := supervisor.ParseReport(data)
		if err != nil {
			return c, err
		}
		if len(r.Sections) > 0 {
			if _, err := supervisor.ParseSections(data, r.Sections); err != nil {
				return c, err
			}
		}
		v, c.FilesModified = meta, meta.FilesModified
	}
	b, err := json.Marshal(v)
	c.Metadata = b
	return c, err
}

// jsonFields checks that data is a JSON object with every field of want
// (each not null, of its type, and one of its values when it lists
// them), and returns those fields as the worker's metadata, with the
// number failWhen names ("" for none), which must be a whole number of at
// least 0.
func jsonFields(data []byte, want []machine.Field, failWhen string) (map[string]json.RawMessage, error) {
	names := machine.FieldNames(want)
	if !gjson.ValidBytes(data) || !gjson.ParseBytes(data).IsObject() {
		return nil, fail.Invalidf("not a JSON object; the file must be one with the fields %v", names)
	}
	obj := make(map[string]json.RawMessage, len(want))
	for _, f := range want {
		r := gjson.GetBytes(data, gjson.Escape(f.Name))
		if !r.Exists() || r.Type == gjson.Null {
			return nil, fail.Invalidf("no %q field; the object must have the fields %v", f.Name, names)
		}
		if err := fieldValue(f, r); err != nil {
			return nil, err
		}
		obj[f.Name] = json.RawMessage(r.Raw)
	}
	if failWhen == "" {
		return obj, nil
	}
	r := gjson.GetBytes(data, gjson.Escape(failWhen))
	if r.Type != gjson.Number || r.Num < 0 || r.Num != float64(int64(r.Num)) {
		return nil, fail.Invalidf("%q must be a whole number of at least 0 (what failed), got %s", failWhen, orNothing(r.Raw))
	}
	obj[failWhen] = json.RawMessage(r.Raw)
	return obj, nil
}

// fieldValue checks the value r of field f against the type and values
// the definition gives it.
func fieldValue(f machine.Field, r gjson.Result) error {
	var is string
	switch {
	case r.IsObject():
		is = machine.TypeObject
	case r.IsArray():
		is = machine.TypeArray
	case r.Type == gjson.String:
		is = machine.TypeString
	case r.Type == gjson.Number:
		is = machine.TypeNumber
	default:
		is = machine.TypeBoolean
	}
	switch typ := f.StringType(); {
	case typ != "" && typ != is:
		return fail.Invalidf("field %q must be %s, not %s (%s)", f.Name, aOrAn(typ), aOrAn(is), term.Shorten(kv.OneLine(r.Raw), 80))
	case len(f.Values) > 0 && !slices.Contains(f.Values, r.Str):
		return fail.Invalidf("field %q is %q, not one of %s", f.Name, term.Shorten(kv.OneLine(r.Str), 80), strings.Join(f.Values, ", "))
	}
	return nil
}

// aOrAn is a type's name with its article: a string, an array.
func aOrAn(typ string) string {
	if strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an " + typ
	}
	return "a " + typ
}

// failing is what failed the check of r in one worker's metadata, as
// CheckArtifact kept it: the number fail_when names (failing tests) and
// what the artifact says of each.
func failing(r Role, metadata json.RawMessage) (int64, []supervisor.Failing) {
	var res struct {
		Failures []supervisor.Failing `json:"failures"`
	}
	n := gjson.GetBytes(metadata, gjson.Escape(r.FailWhen)).Int()
	if json.Unmarshal(metadata, &res) != nil {
		return n, nil
	}
	return n, res.Failures
}

func orNothing(raw string) string {
	if raw == "" {
		return "nothing"
	}
	return raw
}

// WorkerRecord builds the worker record kept in supervisor_state.<key>.workers:
// the label goes to topic, track or stage by the role's kind (docs/supervisors.md).
func WorkerRecord(r Role, w Worker, c Checked, problem error) supervisor.Record {
	rec := supervisor.Record{WorkerID: w.ID, Status: checkpoint.WorkerCompleted, OutputPath: w.Output,
		Metadata: c.Metadata, FilesModified: c.FilesModified}
	switch r.Kind() {
	case supervisor.Implementation:
		rec.Track = w.Label
	case supervisor.Testing:
		rec.Stage = w.Label
	default:
		rec.Topic = w.Label
	}
	if problem != nil {
		rec.Status, rec.Metadata, rec.FilesModified = checkpoint.WorkerFailed, nil, nil
		rec.Error = problem.Error()
	}
	return rec
}

// FailureLine names what failed a state's check on one line, for the
// recovery state's workers: the count of what (failing tests, or the
// fail_when field of a definition), then at most three failures and how
// many more.
func FailureLine(r Role, failed int64, fs []supervisor.Failing) string {
	const shown = 3
	line := fmt.Sprintf("%d failing tests", failed)
	if r.Format != machine.FormatTestResults {
		line = fmt.Sprintf("%s: %d in the %s", r.FailWhen, failed, r.State)
	}
	for i, f := range fs {
		if i == shown {
			line += fmt.Sprintf("; and %d more", len(fs)-shown)
			break
		}
		line += "; " + f.String()
	}
	return kv.OneLine(line)
}
