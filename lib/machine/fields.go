package machine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// What an artifact's format asks of it beyond its kind: the sections of a
// markdown file, the fields of a JSON object and their types, and how
// many of a state's workers must deliver it.

// Field is one field a json artifact must have: a name alone, or with
// the type of its value and, for a string, the values it may take.
type Field struct {
	Name   string   `json:"name"`
	Type   string   `json:"type,omitempty"`
	Values []string `json:"values,omitempty"`
}

// Types a field may say its value has.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
	TypeArray   = "array"
	TypeObject  = "object"
)

var fieldTypes = []string{TypeString, TypeNumber, TypeBoolean, TypeArray, TypeObject}

// UnmarshalJSON takes a field written as its name alone ("verdict") or as
// {"name", "type", "values"}.
func (f *Field) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*f = Field{Name: name}
		return nil
	}
	type plain Field // without this method
	if err := strictly(b, (*plain)(f)); err != nil {
		return fmt.Errorf("fields: want a name or {\"name\", \"type\", \"values\"}: %v", err)
	}
	return nil
}

// MarshalJSON writes a field with no type as its name alone.
func (f Field) MarshalJSON() ([]byte, error) {
	if f.Type == "" && len(f.Values) == 0 {
		return json.Marshal(f.Name)
	}
	type plain Field
	return json.Marshal(plain(f))
}

// StringType is the field's type, a string when it lists values.
func (f Field) StringType() string {
	if f.Type == "" && len(f.Values) > 0 {
		return TypeString
	}
	return f.Type
}

// FieldNames lists the fields' names.
func FieldNames(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// checkFields: each field named once, with a type there is and values
// only for a string; the number fail_when reads can be one.
func (w Work) checkFields() error {
	seen := map[string]bool{}
	for i, f := range w.Fields {
		switch typ := f.StringType(); {
		case strings.TrimSpace(f.Name) == "":
			return fmt.Errorf("fields[%d]: an empty name", i)
		case seen[f.Name]:
			return fmt.Errorf("fields[%d]: %q is named twice", i, f.Name)
		case typ != "" && !slices.Contains(fieldTypes, typ):
			return fmt.Errorf("fields[%d]: type %q; use one of %s", i, f.Type, strings.Join(fieldTypes, ", "))
		case len(f.Values) > 0 && typ != TypeString:
			return fmt.Errorf("fields[%d]: values are for a field of type string, not %s", i, typ)
		case slices.Contains(f.Values, ""):
			return fmt.Errorf("fields[%d]: an empty value", i)
		case f.Name == w.FailWhen && (typ != "" && typ != TypeNumber):
			return fmt.Errorf("fields[%d]: %q is what fail_when counts, so it is a number, not a %s", i, f.Name, typ)
		}
		seen[f.Name] = true
	}
	return nil
}

// headingPrefix is how a section may be written the way it shows in the
// file: "## Overview" is the section Overview.
var headingPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#{2,6}[ \t]+`) })

// SectionName is the section a definition names, without the "## " its
// author may have written before it.
func SectionName(s string) string {
	return strings.TrimSpace(headingPrefix().ReplaceAllString(strings.TrimSpace(s), ""))
}

// checkSections: each section is a heading a file can have. A title
// heading ("# Overview") is not a section, and a name that holds nothing
// a heading can match would never be found.
func (w Work) checkSections() error {
	for i, s := range w.Sections {
		name := SectionName(s)
		switch {
		case strings.HasPrefix(name, "#"):
			return fmt.Errorf("sections[%d]: %q is not a section: a section is a heading of level 2 or more (\"## Overview\", or the title alone, \"Overview\")", i, s)
		case strings.Trim(name, " *_:.0123456789") == "":
			return fmt.Errorf("sections[%d]: %q names no heading; give the section's title, e.g. \"Findings\"", i, s)
		}
	}
	return nil
}

// Share is how many of a state's workers must deliver for the failures
// of the others to be accepted: a count, or a percentage of the state's
// workers ("50%": at least half).
type Share struct {
	N       int
	Percent bool
}

// UnmarshalJSON takes a count (2) or a percentage ("50%").
func (s *Share) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		*s = Share{N: n}
		return nil
	}
	var str string
	if json.Unmarshal(b, &str) == nil {
		if p, ok := strings.CutSuffix(strings.TrimSpace(str), "%"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
				*s = Share{N: n, Percent: true}
				return nil
			}
		}
	}
	return fmt.Errorf("min_delivered: %s; give a count of workers (2) or a percentage of them (\"50%%\")", b)
}

// MarshalJSON writes what UnmarshalJSON reads.
func (s Share) MarshalJSON() ([]byte, error) {
	if s.Percent {
		return json.Marshal(s.String())
	}
	return json.Marshal(s.N)
}

func (s Share) String() string {
	if s.Percent {
		return strconv.Itoa(s.N) + "%"
	}
	return strconv.Itoa(s.N)
}

// Of is how many of workers must deliver: the count, or the percentage of
// them rounded up.
func (s Share) Of(workers int) int {
	if s.Percent {
		return (s.N*workers + 99) / 100
	}
	return s.N
}

// check: a count of at least 0, a percentage between 1 and 100.
func (s Share) check() error {
	switch {
	case s.Percent && (s.N < 1 || s.N > 100):
		return fmt.Errorf("min_delivered: %q; give a percentage from 1%% to 100%%", s.String())
	case s.N < 0:
		return fmt.Errorf("min_delivered: %d; give how many workers must deliver (0: every one)", s.N)
	}
	return nil
}
