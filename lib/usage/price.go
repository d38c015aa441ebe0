package usage

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Prices turn tokens into money. flowstate has no price list of its own,
// which would go stale: a project that wants money shown writes its own
// in .claude/flowstate.json (SettingsFile):
//
//	{"prices": {"currency": "USD", "per_million_tokens": {
//	    "claude-opus-5-5": {"input": 15, "output": 75, "cache_read": 1.5, "cache_write": 18.75},
//	    "claude-haiku-*":  {"input": 1, "output": 5, "cache_read": 0.1, "cache_write": 1.25}}}}
//
// A model name ending in * matches every model it is a prefix of; the
// exact name, then the longest prefix, wins.
type Prices struct {
	Currency string          `json:"currency"`
	PerM     map[string]Rate `json:"per_million_tokens"`
}

// Rate is the price of a million tokens of each kind.
type Rate struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// SettingsFile is where a project keeps its flowstate settings, beside
// Claude Code's settings.json: committed with the project, out of the
// agents' reach (Claude Code refuses their writes under .claude).
const SettingsFile = ".claude/flowstate.json"

// ParseSettings reads the price table of a settings file; nil when it has
// none.
func ParseSettings(data []byte) (*Prices, error) {
	var s struct {
		Prices *Prices `json:"prices"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", SettingsFile, err)
	}
	if s.Prices == nil {
		return nil, nil
	}
	for model, r := range s.Prices.PerM {
		for _, v := range []float64{r.Input, r.Output, r.CacheRead, r.CacheWrite} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: prices.per_million_tokens.%s: a price must be a number of at least 0", SettingsFile, model)
			}
		}
	}
	return s.Prices, nil
}

// Cost is what u cost with model; ok is false when the table has no price
// for the model.
func (p *Prices) Cost(model string, u Usage) (cost float64, ok bool) {
	if p == nil {
		return 0, false
	}
	r, ok := p.rate(model)
	if !ok {
		return 0, false
	}
	return (float64(u.Input)*r.Input + float64(u.Output)*r.Output +
		float64(u.CacheRead)*r.CacheRead + float64(u.CacheWrite)*r.CacheWrite) / 1e6, true
}

func (p *Prices) rate(model string) (Rate, bool) {
	if r, ok := p.PerM[model]; ok {
		return r, true
	}
	var prefixes []string
	for k := range p.PerM {
		if pre, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(model, pre) {
			prefixes = append(prefixes, k)
		}
	}
	if len(prefixes) == 0 {
		return Rate{}, false
	}
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	return p.PerM[prefixes[0]], true
}

// Money shows an amount alone in the table's currency: "12.34 USD"; an
// amount below a cent in four places (Decimals).
func (p *Prices) Money(v float64) string { return p.MoneyIn(v, Decimals(v)) }

// MoneyIn shows an amount with decimals places, as one of a column
// (Decimals of the column's amounts): a column reads in one precision.
func (p *Prices) MoneyIn(v float64, decimals int) string {
	cur := "?"
	if p != nil && p.Currency != "" {
		cur = p.Currency
	}
	return fmt.Sprintf("%.*f %s", decimals, v, cur)
}

// Decimals is how many places a column of amounts is shown in: two, or
// four when an amount in it is below a cent but not nothing (it would
// read 0.00).
func Decimals(vs ...float64) int {
	for _, v := range vs {
		if v > 0 && v < 0.01 {
			return 4
		}
	}
	return 2
}
