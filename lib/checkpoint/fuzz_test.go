package checkpoint

import (
	"bytes"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/intent"
)

// FuzzMigrate: never panics; fails only with fail.Invalid; a successful
// migration validates and is a fixed point (migrating again returns the
// same bytes). Seeds: every fixture plus testdata/fuzz/FuzzMigrate.
func FuzzMigrate(f *testing.F) {
	for _, dir := range []string{"valid", "invalid", "invalid-semantic", "legacy"} {
		for _, name := range fixtures(f, dir) {
			f.Add(readFixture(f, name))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, from, err := Migrate(doc, intent.Scope)
		if err != nil {
			if fail.Code(err) != fail.Invalid {
				t.Fatalf("error with exit code %d, want %d: %v", fail.Code(err), fail.Invalid, err)
			}
			return
		}
		if err := Validate(out); err != nil {
			t.Fatalf("migrated from %q but invalid: %v\n%s", from, err, out)
		}
		again, from2, err := Migrate(out, intent.Scope)
		if err != nil || from2 != SchemaVersion || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: from %q, err %v\nfirst:\n%s\nsecond:\n%s", from2, err, out, again)
		}
	})
}

// FuzzPath: for any path and value, Set either fails with fail.Invalid
// (bad path, bad JSON, a result that does not validate) or stores exactly
// that value where Get then finds it. Catches sjson's silent no-ops and
// any path it would misread.
func FuzzPath(f *testing.F) {
	f.Add("user.note", `"hi"`)
	f.Add("phase_data.review.rounds", `3`)
	f.Add("state_machine.completed_states.3", `"draft"`)
	f.Add("state_machine.completed_states.0", `"review"`)
	f.Add("phase_data.7", `{"a":[1,2]}`)
	f.Add("phase_data.review.0", `1`)
	f.Add("-1", `[]`)
	f.Add("x.-1", `{}`)
	f.Add("supervisor_state.s.workers", `[{"worker_id":"w","status":"running"}]`)
	f.Add("phase_data.*", `1`)
	f.Add("a..b", `1`)
	f.Add("error_state.retries.review", `2`)
	base := readFixture(f, "valid/v2.1-custom-machine.json")
	f.Fuzz(func(t *testing.T, path, value string) {
		if _, _, err := Get(base, path); err != nil && fail.Code(err) != fail.Invalid {
			t.Fatalf("Get(%q): code %d: %v", path, fail.Code(err), err)
		}
		out, err := Set(base, path, []byte(value), t0)
		if err != nil {
			if fail.Code(err) != fail.Invalid {
				t.Fatalf("Set(%q, %q): code %d: %v", path, value, fail.Code(err), err)
			}
			return
		}
		raw, ok, err := Get(out, path)
		if err != nil || !ok {
			t.Fatalf("Set(%q, %q) succeeded but Get finds nothing (%v)", path, value, err)
		}
		if compact(raw) != compact(value) {
			t.Fatalf("Set(%q, %q): Get returns %s", path, value, raw)
		}
		if err := Validate(out); err != nil {
			t.Fatalf("Set(%q, %q) returned an invalid document: %v", path, value, err)
		}
		if path != "updated_at" && path != "metadata.updated_at" && !bytes.Contains(out, []byte(`"updated_at": "2026-04-01T12:00:00Z"`)) {
			t.Fatalf("Set(%q) did not touch updated_at", path)
		}
	})
}
