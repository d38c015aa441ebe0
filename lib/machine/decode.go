package machine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// The structural pass over a definition's JSON before it is decoded.
// encoding/json takes the last of two equal keys without a word, matches
// field names in any case ("Output" for "output"), and names an unknown
// field without saying where it is; a definition's author needs each
// said, with the object and the fields it has.

// shape is what one JSON object of a definition may hold: its fields in
// the order of its type (each with the shape of its value, nil for a
// value with none), or, for a map or a list, the shape of every value.
// what names the object in messages.
type shape struct {
	what   string
	order  []string
	fields map[string]*shape
	values *shape
}

// shapes is the definition's shape, read from the json tags of its types
// so that it never drifts from them.
var shapes = sync.OnceValue(func() *shape {
	work := fieldsOf("a state's work", Work{}, map[string]*shape{
		"supervisor": fieldsOf("supervisor", Supervisor{}, nil),
		"each":       {values: fieldsOf("an item of each", Item{}, nil)},
		"fields":     {values: fieldsOf("a field of fields", Field{}, nil)},
	})
	return fieldsOf("a definition", Machine{}, map[string]*shape{
		"scopes": {values: fieldsOf("a scope", Scope{}, nil)},
		"gates":  {values: fieldsOf("a gate", Gate{}, nil)},
		"work":   {values: work},
	})
})

// fieldsOf is the shape of an object decoded into v's type, with the
// shapes of some of its fields' values.
func fieldsOf(what string, v any, inner map[string]*shape) *shape {
	s := &shape{what: what, fields: map[string]*shape{}}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			s.order = append(s.order, name)
			s.fields[name] = inner[name]
		}
	}
	return s
}

// checkShape reads data as JSON and reports, with where it is, the first
// key that appears twice in an object, a field an object of the
// definition does not have, or a string holding a control character (a
// definition's text is one line: its templates become file names, ids and
// KEY=VALUE lines). Syntax errors are left to the decoder.
func checkShape(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walk(dec, shapes(), "")
	if _, ours := err.(shapeError); !ours {
		return nil
	}
	return err
}

// shapeError is a problem checkShape reports; any other error is the
// decoder's, for Parse to report as it does.
type shapeError struct{ where, msg string }

func (e shapeError) Error() string {
	if e.where == "" {
		return e.msg
	}
	return e.where + ": " + e.msg
}

// walk reads one value at where, whose shape is s (nil: any value).
func walk(dec *json.Decoder, s *shape, where string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return walkList(dec, s, where)
		}
		return walkObject(dec, s, where)
	case string:
		if i := strings.IndexFunc(t, lineBreak); i >= 0 {
			return shapeError{where, fmt.Sprintf("%q holds a control character (%U); a definition's text is one line of printable characters", t, []rune(t[i:])[0])}
		}
	}
	return nil
}

// walkList reads the elements of a list, each of the shape s.values
// when s lists objects; a list of strings has no shape of its own.
func walkList(dec *json.Decoder, s *shape, where string) error {
	var elem *shape
	if s != nil {
		elem = s.values
	}
	for i := 0; dec.More(); i++ {
		if err := walk(dec, elem, fmt.Sprintf("%s[%d]", where, i)); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// walkObject reads the members of an object: a map's keys are free, a
// struct's are its fields, each once and in its own case.
func walkObject(dec *json.Decoder, s *shape, where string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		at := strings.TrimPrefix(where+"."+key, ".")
		if seen[key] {
			return shapeError{at, "given twice; give each key once (a JSON reader keeps only one of them)"}
		}
		seen[key] = true
		var inner *shape
		switch {
		case s == nil:
		case s.fields == nil:
			inner = s.values
		default:
			f, ok := s.fields[key]
			if !ok {
				return shapeError{where, fmt.Sprintf("unknown field %q; %s has %s", key, s.what, strings.Join(s.order, ", "))}
			}
			inner = f
		}
		if err := walk(dec, inner, at); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// lineBreak reports whether r is a control character or a line or
// paragraph separator (which kv.OneLine folds too).
func lineBreak(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }

// strictly decodes b into v, refusing fields v does not have.
func strictly(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
