package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate-dev/flowstate/lib/fail"
	"github.com/flowstate-dev/flowstate/lib/limit"
	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	"github.com/tidwall/sjson"
)

// Paths are dot-separated object keys and array indexes:
// `state_machine.completed_states.0`, `supervisor_state.research.workers`.
// A component holds only ASCII letters, digits, '_' and '-'. Everything
// else is refused rather than escaped: gjson/sjson give `* ? # @ | \ : !`
// and friends a meaning, and sjson silently does nothing with a path it
// considers "complex" — a checkpoint edit must never be a silent no-op.
const maxPathLen = 512

func parsePath(path string) ([]string, error) {
	if path == "" {
		return nil, fail.Invalidf("checkpoint: empty path; name a field such as state_machine.current_state")
	}
	if len(path) > maxPathLen {
		return nil, fail.Invalidf("checkpoint: path of %d bytes is too long (max %d)", len(path), maxPathLen)
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '.' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if strings.IndexByte(`*?#@|\:!=<>%[]{}()"`, c) >= 0 {
			return nil, fail.Invalidf("checkpoint: path %q: %q is gjson/sjson syntax, not allowed; a path is dot-separated keys (letters, digits, _ and -) and array indexes", path, c)
		}
		return nil, fail.Invalidf("checkpoint: path %q: character %q not allowed; a path is dot-separated keys (letters, digits, _ and -) and array indexes", path, c)
	}
	comps := strings.Split(path, ".")
	for _, c := range comps {
		if c == "" {
			return nil, fail.Invalidf("checkpoint: path %q: empty component (leading, trailing or double dot)", path)
		}
		if len(c) > 1 && c[0] == '0' && isDigits(c) {
			return nil, fail.Invalidf("checkpoint: path %q: index %q has a leading zero", path, c)
		}
	}
	return comps, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Get returns the raw JSON text of the value at path — `160`, `"x"`,
// `{…}` — and whether it exists. A path through a missing key or a scalar
// is simply absent (ok false, no error); a malformed path or document is
// fail.Invalid. Use Display to print the value.
func Get(doc []byte, path string) (raw string, ok bool, err error) {
	if _, err := parsePath(path); err != nil {
		return "", false, err
	}
	if !gjson.ValidBytes(doc) {
		return "", false, ErrNotJSON
	}
	// The path passed parsePath, so gjson reads it plainly: keys for
	// objects, indexes for arrays.
	r := gjson.GetBytes(doc, path)
	if !r.Exists() {
		return "", false, nil
	}
	return r.Raw, true, nil
}

// Display renders a raw JSON value for people and shell scripts: strings
// unquoted and unescaped, everything else as compact JSON.
func Display(raw string) string {
	r := gjson.Parse(raw)
	if r.Type == gjson.String {
		return r.Str
	}
	return string(pretty.Ugly([]byte(raw)))
}

// ErrNotJSON is the error for a document that is not JSON at all. It
// names no file and gives no remedy: a stored checkpoint can be repaired,
// a document being saved was simply not written, and the caller knows
// which it has.
var ErrNotJSON = fail.Invalidf("checkpoint: not valid JSON")

// CheckJSON checks a document read from outside the store (a file a
// person names, named what in the error) before a read-only command
// looks into it: within limit.JSON's bounds, and JSON.
func CheckJSON(doc []byte, what string) error {
	if err := limit.JSON(doc, what); err != nil {
		return err
	}
	if !gjson.ValidBytes(doc) {
		return fail.Invalidf("%s: %w", what, ErrNotJSON)
	}
	return nil
}

// Set stores rawValue (any JSON value) at path, creating missing objects
// on the way, and sets updated_at and metadata.updated_at to now. An
// index may address an existing element or the one just past the end.
// The result must Validate; otherwise Set returns that error and nothing
// is changed.
func Set(doc []byte, path string, rawValue []byte, now time.Time) ([]byte, error) {
	comps, raw, err := prepare(doc, path, rawValue)
	if err != nil {
		return nil, err
	}
	return edit(doc, path, comps, raw, now)
}

// prepare checks what Set and Append take: the path, the document and
// the new value.
func prepare(doc []byte, path string, rawValue []byte) ([]string, []byte, error) {
	comps, raw, err := checkEdit(path, rawValue)
	if err != nil {
		return nil, nil, err
	}
	if !gjson.ValidBytes(doc) {
		return nil, nil, ErrNotJSON
	}
	return comps, raw, nil
}

// CheckEdit checks the path and JSON value of a Set or Append without the
// document, so checkpoint-set can refuse bad input before it takes the
// workflow's lock: the value is valid JSON within limit.JSON's bounds,
// and it fits at path without the document nesting deeper than
// limit.MaxDepth (an append goes one level further down).
func CheckEdit(path string, rawValue []byte, appending bool) error {
	comps, raw, err := checkEdit(path, rawValue)
	if err == nil && appending && len(comps)+1+limit.Depth(raw) > limit.MaxDepth {
		err = tooDeep(path, raw)
	}
	return err
}

func checkEdit(path string, rawValue []byte) ([]string, []byte, error) {
	comps, err := parsePath(path)
	if err != nil {
		return nil, nil, err
	}
	raw, err := value(path, rawValue)
	if err != nil {
		return nil, nil, err
	}
	if len(comps)+limit.Depth(raw) > limit.MaxDepth {
		return nil, nil, tooDeep(path, raw)
	}
	return comps, raw, nil
}

func tooDeep(path string, raw []byte) error {
	return fail.Invalidf("checkpoint: %s: a value nested %d levels deep there would take the checkpoint past %d levels; flatten it", path, limit.Depth(raw), limit.MaxDepth)
}

// Increment adds delta to the integer at path (missing counts as 0) and
// returns the document and the new value. A non-integer there is
// fail.Invalid, as is an int64 overflow.
func Increment(doc []byte, path string, delta int64, now time.Time) ([]byte, int64, error) {
	comps, err := parsePath(path)
	if err != nil {
		return nil, 0, err
	}
	if !gjson.ValidBytes(doc) {
		return nil, 0, ErrNotJSON
	}
	var old int64
	if r := gjson.GetBytes(doc, path); r.Exists() {
		if old, err = toInt64(r); err != nil {
			return nil, 0, fail.Invalidf("checkpoint: %s: %v; only integers can be incremented", path, err)
		}
	}
	n := old + delta
	if (delta > 0 && n < old) || (delta < 0 && n > old) {
		return nil, 0, fail.Invalidf("checkpoint: %s: %d %+d overflows a 64-bit integer", path, old, delta)
	}
	out, err := edit(doc, path, comps, strconv.AppendInt(nil, n, 10), now)
	if err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

func toInt64(r gjson.Result) (int64, error) {
	if r.Type != gjson.Number {
		return 0, fmt.Errorf("holds %s, not a number", describe(r))
	}
	if n, err := strconv.ParseInt(r.Raw, 10, 64); err == nil {
		return n, nil
	}
	// 2.0 or 1e3: integral, just not written as one.
	if r.Num == math.Trunc(r.Num) && r.Num >= math.MinInt64 && r.Num < math.MaxInt64 {
		return int64(r.Num), nil
	}
	return 0, fmt.Errorf("holds %s, not a 64-bit integer", describe(r))
}

// Append adds rawValue to the end of the array at path; a missing path
// becomes a one-element array. Anything else there is fail.Invalid.
func Append(doc []byte, path string, rawValue []byte, now time.Time) ([]byte, error) {
	comps, raw, err := prepare(doc, path, rawValue)
	if err != nil {
		return nil, err
	}
	r := gjson.GetBytes(doc, path)
	switch {
	case !r.Exists():
		arr := make([]byte, 0, len(raw)+2)
		arr = append(append(append(arr, '['), raw...), ']')
		return edit(doc, path, comps, arr, now)
	case r.IsArray():
		n := strconv.Itoa(count(r))
		return edit(doc, path+"."+n, append(comps, n), raw, now)
	default:
		return nil, fail.Invalidf("checkpoint: %s: holds %s, not an array; append needs an array or a missing path", path, describe(r))
	}
}

func value(path string, raw []byte) ([]byte, error) {
	raw = bytes.Trim(raw, " \t\r\n") // JSON's whitespace only: TrimSpace would also eat U+00A0 and turn an invalid value valid
	if err := limit.JSON(raw, "checkpoint: "+path+": the value"); err != nil {
		return nil, err
	}
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
		return nil, fail.Invalidf("checkpoint: %s: value %s is not valid JSON; quote strings, e.g. '\"text\"'", path, short(strconv.Quote(string(raw))))
	}
	return raw, nil
}

func count(arr gjson.Result) int {
	n := 0
	arr.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

// edit is Set's core, shared by Increment and Append: touch the update
// times, put raw at comps, format, and validate the result.
func edit(doc []byte, path string, comps []string, raw []byte, now time.Time) ([]byte, error) {
	// Formatting costs time quadratic in the nesting: bound it first.
	if err := limit.JSON(doc, "checkpoint"); err != nil {
		return nil, err
	}
	if !gjson.ParseBytes(doc).IsObject() {
		return nil, invalidf("", "must be a JSON object")
	}
	// Touch first, so that an explicit edit of updated_at wins.
	ts := Timestamp(now)
	out, err := sjson.SetBytes(doc, PathUpdatedAt, ts)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: touch updated_at: %w", err)
	}
	if gjson.GetBytes(out, PathMetadata).IsObject() {
		if out, err = sjson.SetBytes(out, PathMetadataUpdatedAt, ts); err != nil {
			return nil, fmt.Errorf("checkpoint: touch metadata.updated_at: %w", err)
		}
	}
	if out, err = setRaw(out, path, comps, raw); err != nil {
		return nil, err
	}
	out = format(out)
	if err := Validate(out); err != nil {
		if Validate(doc) != nil {
			return nil, fmt.Errorf("checkpoint was already invalid before this edit (migrate or repair it first): %w", err)
		}
		return nil, fmt.Errorf("refusing to set %s: %w", path, err)
	}
	return out, nil
}

// setRaw walks comps through doc so that each step is decided by what is
// really there, then hands sjson a path it cannot misread: digit keys of
// objects get sjson's ':' (else sjson would make an array), and missing
// tails are built here as nested objects instead of letting sjson guess.
func setRaw(doc []byte, path string, comps []string, raw []byte) ([]byte, error) {
	sp := make([]string, 0, len(comps))
	cur := gjson.ParseBytes(doc)
	for i, c := range comps {
		here := strings.Join(comps[:i], ".")
		last := i == len(comps)-1
		switch {
		case cur.IsObject():
			next := cur.Get(c)
			if isDigits(c) {
				sp = append(sp, ":"+c)
			} else {
				sp = append(sp, c)
			}
			if !next.Exists() {
				for _, r := range comps[i+1:] {
					if isDigits(r) {
						return nil, fail.Invalidf("checkpoint: %s: %s does not exist, and an index cannot create an array; append to create it", path, join(here, c))
					}
				}
				return apply(doc, path, comps[:i+1], sp, nest(comps[i+1:], raw))
			}
			cur = next
		case cur.IsArray():
			if !isDigits(c) {
				return nil, fail.Invalidf("checkpoint: %s: %s is an array; %q is not an index", path, here, c)
			}
			n := count(cur)
			idx, err := strconv.Atoi(c)
			if err != nil || idx > n || (idx == n && !last) {
				return nil, fail.Invalidf("checkpoint: %s: index %s out of range, %s has %d elements (use append to add one)", path, c, here, n)
			}
			sp = append(sp, c)
			if idx == n {
				return apply(doc, path, comps, sp, raw)
			}
			cur = cur.Get(c)
		default:
			return nil, fail.Invalidf("checkpoint: %s: %s holds %s, not an object or array", path, here, describe(cur))
		}
	}
	return apply(doc, path, comps, sp, raw)
}

func nest(keys []string, raw []byte) []byte {
	if len(keys) == 0 {
		return raw
	}
	var b []byte
	for _, k := range keys {
		b = append(b, `{"`...)
		b = append(b, k...) // keys passed parsePath: nothing to escape
		b = append(b, `":`...)
	}
	b = append(b, raw...)
	return append(b, bytes.Repeat([]byte("}"), len(keys))...)
}

var errNoChange = errors.New("edit did not apply")

// apply sets raw at the sjson path sp, which addresses the same place as
// the plain components at.
func apply(doc []byte, path string, at, sp []string, raw []byte) ([]byte, error) {
	out, err := sjson.SetRawBytes(doc, strings.Join(sp, "."), raw)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: set %s: %w", path, err)
	}
	// Belt and braces against sjson's silent no-ops: read the value back.
	got := gjson.GetBytes(out, strings.Join(at, "."))
	if !got.Exists() || !bytes.Equal(pretty.Ugly([]byte(got.Raw)), pretty.Ugly(raw)) {
		return nil, fmt.Errorf("checkpoint: set %s: %w (a bug: please report it)", path, errNoChange)
	}
	return out, nil
}
