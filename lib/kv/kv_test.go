package kv

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\nNEXT=done\r\n\tb\x00c": "a NEXT=done b c",
		"/p/my  dir/r.md":          "/p/my  dir/r.md", // on one line: kept as it is
		" x\u2028NEXT=done ":       "x NEXT=done",
		"":                         "",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPairs(t *testing.T) {
	var ps Pairs
	ps.Add("N", 3)
	ps.Add("OK", true)
	ps.Add("DESCRIPTION", "fix\nNEXT=done")
	ps.Add("OUTPUT_PATH_1", "/p/a\n/b.md")
	ps.Add("EMPTY", "")
	want := "N=3\nOK=true\nDESCRIPTION=fix NEXT=done\nOUTPUT_PATH_1=/p/a /b.md\nEMPTY=\n"
	if got := ps.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
