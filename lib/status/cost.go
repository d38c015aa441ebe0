package status

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// costs says what a run spent, for the lines of `flowstate status`:
// nothing at all while no tokens were recorded (hooks of an older
// flowstate, or none installed). Each column of money is in one
// precision (usage.Decimals).
type costs struct {
	run      *timeline.Timeline
	prices   *usage.Prices
	perState map[string]usage.Usage
	money    map[string]float64
	unpriced map[string]bool // states where a model without a price spent
	places   int             // of the states' column
}

func newCosts(run *timeline.Timeline, prices *usage.Prices) costs {
	c := costs{run: run, prices: prices, perState: map[string]usage.Usage{}}
	c.money, _, _ = run.Cost(prices)
	_, c.unpriced = run.Unpriced(prices)
	var column []float64
	for _, s := range run.Spent() {
		c.perState[s.State] = s.Usage
		if !s.Usage.Zero() {
			column = append(column, c.money[s.State])
		}
	}
	c.places = usage.Decimals(column...)
	return c
}

func (c costs) any() bool { return !c.run.Total().Zero() }

// state is what state s spent: "12.3k tokens", with money when priced.
func (c costs) state(s string) string {
	u, ok := c.perState[s]
	if !c.any() || !ok || u.Zero() {
		return ""
	}
	out := usage.Tokens(u.Total()) + " tokens"
	if c.prices == nil {
		return out
	}
	if m := c.money[s]; m == 0 && c.unpriced[s] {
		return out + ", no price"
	}
	out += ", " + c.prices.MoneyIn(c.money[s], c.places)
	if c.unpriced[s] {
		out += " + unpriced"
	}
	return out
}

// total is what the workflow spent, kind by kind, and with prices what
// it cost and the models the money leaves out.
func (c costs) total() string {
	if !c.any() {
		return ""
	}
	u := c.run.Total()
	out := fmt.Sprintf("%s tokens (input %s, output %s, cache read %s, cache write %s)", usage.Tokens(u.Total()),
		usage.Tokens(u.Input), usage.Tokens(u.Output), usage.Tokens(u.CacheRead), usage.Tokens(u.CacheWrite))
	if c.prices == nil {
		return out
	}
	_, all, _ := c.run.Cost(c.prices)
	out += ", " + c.prices.Money(all)
	if models, _ := c.run.Unpriced(c.prices); len(models) > 0 {
		out += " (" + UnpricedText(models, u.Total()) + ")"
	}
	return out
}

// UnpricedText names the models without a price, each with its share of
// the tokens (of total): "no price for m1 (23% of the tokens), m2 (1%)".
func UnpricedText(models map[string]int64, total int64) string {
	var parts []string
	for i, m := range slices.Sorted(maps.Keys(models)) {
		share := fmt.Sprintf("%s of the tokens", percent(models[m], total))
		if i > 0 {
			share = percent(models[m], total)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", oneLine(cmp.Or(m, "unknown model")), share))
	}
	return "no price for " + strings.Join(parts, ", ")
}

// percent is part of all in whole percent, "<1%" for a sliver.
func percent(part, all int64) string {
	if all <= 0 {
		return "0%"
	}
	p := part * 100 / all
	if p == 0 && part > 0 {
		return "<1%"
	}
	return fmt.Sprintf("%d%%", p)
}

// agentPlaces is the precision of the money of agents, one column.
func (c costs) agentPlaces(agents []timeline.Agent) int {
	var column []float64
	for _, a := range agents {
		if m, ok := c.prices.Cost(a.Model, a.Usage); ok && !a.Usage.Zero() {
			column = append(column, m)
		}
	}
	return usage.Decimals(column...)
}

// agent is what agent a spent: ", 3.4k tokens" (so far, while it runs),
// with money in places decimals.
func (c costs) agent(a timeline.Agent, places int) string {
	if a.Usage.Zero() {
		return ""
	}
	s := ", " + usage.Tokens(a.Usage.Total()) + " tokens"
	if !a.Measured {
		s += " so far"
	}
	if m, ok := c.prices.Cost(a.Model, a.Usage); ok {
		s += ", " + c.prices.MoneyIn(m, places)
	} else if c.prices != nil {
		s += ", no price"
	}
	return s
}

func soFar(running bool) string {
	if running {
		return " so far"
	}
	return ""
}
