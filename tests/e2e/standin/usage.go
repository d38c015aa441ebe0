package standin

// Usage is the tokens an answer reports, as the Messages API counts them.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// Total is every token of u.
func (u Usage) Total() int { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// usageOf is what the answer to request seq reports: made up, different
// from request to request, so that a test can tell whose tokens a sum
// holds; a compacting turn keeps the input that makes Claude Code compact.
func usageOf(seq int64, t turn) Usage {
	n := int(seq)
	u := Usage{Input: 100 + n%97, Output: 10 + n%13, CacheRead: 2000 + 10*(n%89), CacheWrite: 100 + n%31}
	if t.InputTokens > 0 {
		u.Input = t.InputTokens
	}
	return u
}

// Spent sums the usage the stand-in reported: for the main thread
// (persona ""), and per subagent, keyed by persona and prompt.
func (s *Server) Spent() (main Usage, agents map[[2]string]Usage) {
	agents = map[[2]string]Usage{}
	for _, e := range s.Exchanges() {
		if !e.Subagent {
			main = main.Add(e.Usage)
			continue
		}
		k := [2]string{e.Agent, e.Prompt}
		agents[k] = agents[k].Add(e.Usage)
	}
	return main, agents
}
