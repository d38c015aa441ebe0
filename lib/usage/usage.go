// Package usage owns what a workflow's agents and main thread cost: the
// tokens Claude Code reports for each model request (input, output, cache
// read, cache write), read from the transcripts Claude Code keeps, and an
// optional price table that turns them into money.
//
// Claude Code 2.1.328 hands a hook two measures of an agent's tokens. The
// PostToolUse payload of its Agent call carries `usage` and `totalTokens`,
// but those are the agent's last request only (its final context), not
// what it spent; the agent's transcript holds every request's usage, one
// assistant line per content block with the message id repeated. So an
// agent's spend is the sum over the distinct messages of its transcript,
// and the last request's usage stands in for a final message Claude Code
// had not written yet (docs/claude-code.md).
//
// It is pure: lib/hook reads the files and records the events.
package usage

import (
	"fmt"
	"strconv"
)

// Usage is the tokens of one or more model requests.
type Usage struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_tokens"`
	CacheWrite int64 `json:"cache_write_tokens"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// Total is every token of u, cached or not.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Zero reports that u holds no tokens.
func (u Usage) Zero() bool { return u == Usage{} }

// FromFields reads u back from an event's "usage" object as decoded
// into a map (numbers as float64 or json.Number); anything else counts 0.
func FromFields(v any) Usage {
	m, _ := v.(map[string]any)
	n := func(k string) int64 {
		switch x := m[k].(type) {
		case float64:
			return int64(x)
		case fmt.Stringer: // json.Number
			i, _ := strconv.ParseInt(x.String(), 10, 64)
			return i
		}
		return 0
	}
	return Usage{n("input_tokens"), n("output_tokens"), n("cache_read_tokens"), n("cache_write_tokens")}
}

// Tokens shows a token count to people: 950, 12.3k, 4.56M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 100_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.FormatInt((n+500)/1000, 10) + "k"
	case n < 100_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	}
	return strconv.FormatInt((n+500_000)/1_000_000, 10) + "M"
}
