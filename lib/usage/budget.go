package usage

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Budget is a spend limit: tokens, or money in a currency (what a price
// table makes of the tokens). A workflow whose recorded spend reaches it
// is held until a person allows more. The zero Budget is no limit.
type Budget struct {
	Tokens   int64   `json:"tokens,omitempty"`
	Cost     float64 `json:"cost,omitempty"`
	Currency string  `json:"currency,omitempty"`
}

// IsZero reports no limit.
func (b Budget) IsZero() bool { return b.Tokens == 0 && b.Cost == 0 }

// Money reports a limit in money.
func (b Budget) Money() bool { return b.Cost > 0 }

// String is the limit for people: "500k tokens", "5.00 USD".
func (b Budget) String() string {
	if b.Money() {
		return fmt.Sprintf("%.2f %s", b.Cost, b.Currency)
	}
	return Tokens(b.Tokens) + " tokens"
}

// budgetForms are the amounts ParseBudget reads: tokens (500000, 500k,
// 1.5M, with "tokens" after them or not), and money (5 USD, 5USD, USD 5).
var budgetForms = sync.OnceValue(func() [3]*regexp.Regexp {
	return [3]*regexp.Regexp{
		regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([kKmM]?)(?:\s*tokens?)?$`),
		regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]{3})$`),
		regexp.MustCompile(`^([A-Za-z]{3})\s*([0-9]+(?:\.[0-9]+)?)$`),
	}
})

// ParseBudget reads an amount as a person writes it: tokens (500000,
// 500k, 1.5M, 2M tokens) or money in a price table's currency (5 USD,
// 2.50EUR, USD 5). It must be more than nothing.
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	forms := budgetForms()
	bad := fmt.Errorf("budget %q: give tokens (500k, 1.5M, 200000) or money in your price table's currency (5 USD)", s)
	var b Budget
	if m := forms[0].FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		n *= map[string]float64{"": 1, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}[m[2]]
		if n >= 1 && n < math.MaxInt64/2 {
			b.Tokens = int64(math.Round(n))
		}
	} else if m := forms[1].FindStringSubmatch(s); m != nil {
		b.Cost, _ = strconv.ParseFloat(m[1], 64)
		b.Currency = strings.ToUpper(m[2])
	} else if m := forms[2].FindStringSubmatch(s); m != nil {
		b.Cost, _ = strconv.ParseFloat(m[2], 64)
		b.Currency = strings.ToUpper(m[1])
	}
	if b.IsZero() || b.Cost > 1e12 {
		return Budget{}, bad
	}
	return b, nil
}

// ParseBudgetSetting reads a project's spend limit from its settings file
// (SettingsFile): {"budget": "2M"} or {"budget": "20 USD"}; nil when it
// sets none.
func ParseBudgetSetting(data []byte) (*Budget, error) {
	var s struct {
		Budget *string `json:"budget"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", SettingsFile, err)
	}
	if s.Budget == nil {
		return nil, nil
	}
	b, err := ParseBudget(*s.Budget)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SettingsFile, err)
	}
	return &b, nil
}

// Check says whether b can be held against what was spent at prices: a
// limit in money needs a price table in its currency.
func (b Budget) Check(p *Prices) error {
	switch {
	case !b.Money():
		return nil
	case p == nil:
		return fmt.Errorf("a spend limit of %s needs prices: put a price table in %s (README, \"What a workflow cost\"), or give the limit in tokens", b, SettingsFile)
	case !strings.EqualFold(p.Currency, b.Currency):
		return fmt.Errorf("a spend limit of %s is not in the price table's currency, %s (%s)", b, p.Currency, SettingsFile)
	}
	return nil
}

// Reached reports whether a workflow that spent tokens, costing cost,
// reached the limit b.
func (b Budget) Reached(tokens int64, cost float64) bool {
	if b.Money() {
		return cost >= b.Cost
	}
	return b.Tokens > 0 && tokens >= b.Tokens
}

// Of is what was spent and the limit b, in b's unit and one precision:
// "1.20M tokens", "1.00M tokens"; "0.0150 USD", "0.0100 USD".
func (b Budget) Of(tokens int64, cost float64) (spent, limit string) {
	if b.Money() {
		places := Decimals(cost, b.Cost)
		return fmt.Sprintf("%.*f %s", places, cost, b.Currency), fmt.Sprintf("%.*f %s", places, b.Cost, b.Currency)
	}
	return Tokens(tokens) + " tokens", b.String()
}

// After is the limit that lets a workflow that spent tokens, costing
// cost, spend b more on top: run again with the same spend, the same
// limit.
func (b Budget) After(tokens int64, cost float64) Budget {
	if b.Money() {
		return Budget{Cost: math.Ceil((cost+b.Cost)*100) / 100, Currency: b.Currency}
	}
	return Budget{Tokens: tokens + b.Tokens}
}
