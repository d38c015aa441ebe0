package protocol

// FormatSection is the section of a worker's brief that gives the format
// its file must have, with a template of it (lib/orchestrate writes it).
const FormatSection = "Format"

// Template is the template the brief gives in its FormatSection: the
// language of its fenced block (markdown, json) and its text, each
// <...> in it a part to fill in. ok is false for a brief without one.
func Template(brief string) (lang, text string, ok bool) {
	blocks, err := Blocks(brief)
	if err != nil {
		return "", "", false
	}
	for _, b := range blocks {
		if b.Section == FormatSection && (b.Info == "markdown" || b.Info == "json") {
			return b.Info, b.Body + "\n", true
		}
	}
	return "", "", false
}
