package install

import "testing"

// TestReport: a line per finding, a fix under each that is not OK, and
// only FAIL lines count as problems.
func TestReport(t *testing.T) {
	text, problems := Report([]Finding{
		{OK: true, What: "binary", Fix: "never shown"},
		{Warn: true, What: "old build", Fix: "reinstall"},
		{What: "no settings", Fix: "run install"},
		{What: "odd file"},
	})
	want := "ok   binary\nWARN old build\n     fix: reinstall\nFAIL no settings\n     fix: run install\nFAIL odd file\n"
	if text != want || problems != 2 {
		t.Errorf("Report = %q, %d problems\nwant %q, 2", text, problems, want)
	}
}
