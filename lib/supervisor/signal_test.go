package supervisor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate-dev/flowstate/lib/fail"
)

func TestParseSignals(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Signal
		code     int
		msg      string
	}{
		{
			name: "report path",
			in:   "I wrote the report.\n\nREPORT_CREATED: /p/.claude/specs/1/reports/001_auth.md\n",
			want: []Signal{{Signal: ReportCreated, Path: "/p/.claude/specs/1/reports/001_auth.md"}},
		},
		{
			name: "backticks and indentation",
			in:   "  `REPORT_CREATED: reports/a b.md`",
			want: []Signal{{Signal: ReportCreated, Path: "reports/a b.md"}},
		},
		{
			name: "supervisor complete on one line",
			in:   `SUPERVISOR_COMPLETE: {"topics_researched": 4, "summary": "x"}`,
			want: []Signal{{Signal: SupervisorComplete, Data: []byte(`{"topics_researched":4,"summary":"x"}`)}},
		},
		{
			name: "pretty-printed JSON spanning lines, then another signal",
			in:   "Done.\nSUPERVISOR_COMPLETE: {\n  \"a\": [1,\n 2]\n}\nREPORT_CREATED: /x.md\r\n",
			want: []Signal{{Signal: SupervisorComplete, Data: []byte(`{"a":[1,2]}`)}, {Signal: ReportCreated, Path: "/x.md"}},
		},
		{
			name: "failed",
			in:   "```\nSUPERVISOR_FAILED: {\"errors\": [\"timeout\"]}\n```",
			want: []Signal{{Signal: SupervisorFailed, Data: []byte(`{"errors":["timeout"]}`)}},
		},
		{
			name: "mid-line mention is not a signal",
			in:   "Return REPORT_CREATED: <path> when done\nREPORT_CREATED: /ok.md",
			want: []Signal{{Signal: ReportCreated, Path: "/ok.md"}},
		},
		{name: "no signal", in: "I could not finish.", code: fail.Invalid, msg: "no completion signal"},
		{name: "empty", in: "", code: fail.Invalid},
		{name: "empty path", in: "REPORT_CREATED:   \n", code: fail.Invalid, msg: "line 1"},
		{name: "bad JSON", in: "ok\nSUPERVISOR_COMPLETE: {\"a\": }", code: fail.Invalid, msg: "line 2"},
		{name: "JSON not an object", in: "SUPERVISOR_COMPLETE: [1]", code: fail.Invalid, msg: "object"},
		{name: "no JSON", in: "SUPERVISOR_FAILED:", code: fail.Invalid},
		{name: "lower case is prose", in: "report_created: /x", code: fail.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSignals([]byte(tt.in))
			wantCode(t, err, tt.code)
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q should mention %q", err, tt.msg)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
