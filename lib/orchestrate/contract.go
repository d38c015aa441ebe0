package orchestrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/machine"
	"github.com/flowstate-dev/flowstate/lib/protocol"
	"github.com/flowstate-dev/flowstate/lib/supervisor"
)

// The format a worker's file must have, as its brief states it. Pure: no
// I/O. It is said from the definition data CheckArtifact checks the file
// against (the state's format, sections, fields, fail_when), so that a
// format changed in the definition changes the brief and the check
// together, and no agent file repeats it.

// Contract is the format section of the brief of r's workers: what
// their file must be to count, and a template of it in a fenced block,
// each <...> a part to fill in (protocol.Template reads it).
func Contract(r Role) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\nYour file, the %s, counts only in this format: write it as the template shows, filling in each `<...>`. The step after you checks it, and a file that is missing or not in this format counts as not delivered.\n", protocol.FormatSection, r.ArtifactName())
	notes, lang, template := formatOf(r)
	if notes != "" {
		b.WriteString("\n" + notes + "\n")
	}
	// A fence longer than any run of backticks in the template (a section
	// name may hold some).
	fence := "```"
	for strings.Contains(template, fence) {
		fence += "`"
	}
	fmt.Fprintf(&b, "\n%s%s\n%s%s\n", fence, lang, template, fence)
	return b.String()
}

// formatOf is what is said of r's format, the language of its template
// and the template.
func formatOf(r Role) (notes, lang, template string) {
	switch r.Format {
	case machine.FormatPlan:
		return planNotes, "markdown", planTemplate
	case machine.FormatTestResults:
		return testNotes, "json", testTemplate
	case machine.FormatJSON:
		notes, template := jsonContract(r)
		return notes, "json", template
	case machine.FormatMarkdown:
		return "A heading of level 2 or deeper for each section, with a paragraph or a list under it; other headings may be there too.",
			"markdown", "# <Title>\n" + sectionsTemplate(r.Sections)
	}
	return reportContract(r)
}

// reportContract is the report format: a title, the summary and the
// findings ParseReport reads, the definition's own sections, and an
// implementation summary's modified files.
func reportContract(r Role) (notes, lang, template string) {
	notes = fmt.Sprintf("The first %d words of the summary and the findings are what the workflow keeps.", supervisor.SummaryWords)
	t := fmt.Sprintf("# <Title>\n\n## %s\n\n<one paragraph>\n\n## %s\n\n- <finding>\n- <finding>\n", supervisor.ReportSummary, supervisor.ReportFindings)
	t += sectionsTemplate(r.Sections)
	if r.Kind() == supervisor.Implementation {
		notes += fmt.Sprintf(" Under %q list each file you created or changed, one path from the project's root a line.", supervisor.ReportFilesModified)
		t += fmt.Sprintf("\n## %s\n\n- `<path of a file you changed>`\n", supervisor.ReportFilesModified)
	}
	return notes, "markdown", t + "\n## Details\n\n<evidence: files, commands, sources>\n"
}

// sectionsTemplate is a "## name" heading with text under it for each
// section.
func sectionsTemplate(sections []string) string {
	var b strings.Builder
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## %s\n\n<text>\n", s)
	}
	return b.String()
}

const planNotes = "Each phase is a heading `### Phase N: Name` (N = 1, 2, 3, ...), and the line right below it is " +
	"`dependencies: [..]`: the numbers of the phases it needs, in brackets, separated by commas, `[]` for none, " +
	"and nothing else on that line (no names, no comments). Phases whose dependencies are met run in parallel, " +
	"so list only real ones. `estimate_ms:` (optional) is the phase's time in milliseconds."

const planTemplate = `# Plan: <Title>

## Overview

<what is built and why>

### Phase 1: <Name>
dependencies: []
estimate_ms: 60000

<tasks, files, tests>

### Phase 2: <Name>
dependencies: [1]

<tasks, files, tests>
`

const testNotes = "One JSON object with the real counts of the run:\n\n" +
	"- `total_tests`, `tests_passed`, `tests_failed`: whole numbers, always present (0 for none).\n" +
	"- `coverage_percent`: a number from 0 to 100; leave the field out when you did not measure coverage (do not write null or \"N/A\").\n" +
	"- `failures`: one `{\"name\", \"message\"}` per failing test; `[]` when none failed.\n\n" +
	"Failing tests are a result, not an error: record them, and the workflow sends them to be repaired."

const testTemplate = `{"total_tests": 0, "tests_passed": 0, "tests_failed": 0, "coverage_percent": 0, "failures": []}
`

// jsonContract is a json format's fields, each with its type and values,
// and the number fail_when reads: the notes list them, the template is
// an object with each (a string to fill in, a string field's first
// value, an empty array or object, 0, false).
func jsonContract(r Role) (notes, template string) {
	var lines, members []string
	for _, f := range r.Fields {
		lines = append(lines, fmt.Sprintf("- `%s`: %s", f.Name, fieldRule(f, r.FailWhen)))
		members = append(members, fmt.Sprintf("  %s: %s", jsonKey(f.Name), fieldSample(f, r.FailWhen)))
	}
	if r.FailWhen != "" && !slices.ContainsFunc(r.Fields, func(f machine.Field) bool { return f.Name == r.FailWhen }) {
		lines = append(lines, fmt.Sprintf("- `%s`: %s", r.FailWhen, failWhenRule))
		members = append(members, fmt.Sprintf("  %s: 0", jsonKey(r.FailWhen)))
	}
	notes = "One JSON object with these fields (other keys may be there too; they are not checked):\n\n" + strings.Join(lines, "\n")
	return notes, "{\n" + strings.Join(members, ",\n") + "\n}\n"
}

const failWhenRule = "a whole number of at least 0: how many checks failed (above 0 sends the work to be repaired)"

// fieldRule says what a field's value must be.
func fieldRule(f machine.Field, failWhen string) string {
	switch typ := f.StringType(); {
	case f.Name == failWhen:
		return failWhenRule
	case len(f.Values) > 0:
		quoted := make([]string, len(f.Values))
		for i, v := range f.Values {
			quoted[i] = "`" + v + "`"
		}
		return "a string, one of " + strings.Join(quoted, ", ")
	case typ != "":
		return aOrAn(typ)
	}
	return "any value but null"
}

// fieldSample is a field's value in the template.
func fieldSample(f machine.Field, failWhen string) string {
	var v any
	switch typ := f.StringType(); {
	case typ == machine.TypeNumber, f.Name == failWhen:
		v = 0
	case typ == machine.TypeBoolean:
		v = false
	case typ == machine.TypeArray:
		v = []any{}
	case typ == machine.TypeObject:
		v = map[string]any{}
	case len(f.Values) > 0:
		v = f.Values[0]
	case plainName(f.Name):
		v = "<" + f.Name + ">"
	default:
		v = "<text>"
	}
	return jsonText(v)
}

// plainName reports whether a field's name can name its part to fill
// in: letters, digits, spaces, - and _.
func plainName(name string) bool {
	return name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ -") == ""
}

// jsonKey is a field's name as the template's key: < and > escaped, so
// that no part of a name reads as a part to fill in.
func jsonKey(name string) string {
	b, _ := json.Marshal(name)
	return string(b)
}

// jsonText is v as JSON, with <, > and & as they are: the template's
// parts to fill in are written <so>.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, numbers and empty values only
	return strings.TrimSuffix(b.String(), "\n")
}
