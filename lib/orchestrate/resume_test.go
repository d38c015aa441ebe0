package orchestrate

import (
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestParseResumeArgs(t *testing.T) {
	for raw, want := range map[string]ResumeRequest{
		"":                  {},
		"  w1\n":            {ID: "w1"},
		"--retry-failed":    {RetryFailed: true},
		"--retry-failed w1": {ID: "w1", RetryFailed: true},
		"w1 --retry-failed": {ID: "w1", RetryFailed: true},
	} {
		if got, err := ParseResumeArgs(raw); err != nil || got != want {
			t.Errorf("ParseResumeArgs(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"w1 w2", "--bogus", "-x w1"} {
		if _, err := ParseResumeArgs(raw); fail.Code(err) != fail.Usage {
			t.Errorf("ParseResumeArgs(%q): %v; want a usage error", raw, err)
		}
	}
}
