package sm

import "testing"

func TestActorFrom(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Actor
	}{
		{map[string]string{"FLOWSTATE_USER": "ana", "USER": "ci", "LOGNAME": "x"}, Actor{By: "ana", Via: "shell"}},
		{map[string]string{"FLOWSTATE_USER": "  ", "USER": "bo"}, Actor{By: "bo", Via: "shell"}},
		{map[string]string{"LOGNAME": "cy", "CLAUDE_CODE_SESSION_ID": "s1"}, Actor{By: "cy", Via: "claude-code"}},
		{map[string]string{"USER": "two\nlines"}, Actor{By: "two lines", Via: "shell"}},
		{nil, Actor{By: "unknown", Via: "shell"}},
	} {
		if got := ActorFrom(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("ActorFrom(%v) = %+v, want %+v", c.env, got, c.want)
		}
	}
}
