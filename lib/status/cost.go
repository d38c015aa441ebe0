package status

import (
	"fmt"

	"github.com/flowstate-dev/flowstate/lib/timeline"
	"github.com/flowstate-dev/flowstate/lib/usage"
)

// costs says what a run spent, for the lines of `flowstate status`:
// nothing at all while no tokens were recorded (hooks of an older
// flowstate, or none installed).
type costs struct {
	run      *timeline.Timeline
	prices   *usage.Prices
	perState map[string]usage.Usage
	money    map[string]float64
	priced   bool
}

func newCosts(run *timeline.Timeline, prices *usage.Prices) costs {
	c := costs{run: run, prices: prices, perState: map[string]usage.Usage{}}
	for _, s := range run.Spent() {
		c.perState[s.State] = s.Usage
	}
	c.money, _, c.priced = run.Cost(prices)
	return c
}

func (c costs) any() bool { return !c.run.Total().Zero() }

// state is what state s spent: "12.3k tokens", with money when priced.
func (c costs) state(s string) string {
	u, ok := c.perState[s]
	if !c.any() || !ok || u.Zero() {
		return ""
	}
	return usage.Tokens(u.Total()) + " tokens" + c.moneyOf(c.money[s], false)
}

// total is what the workflow spent, kind by kind.
func (c costs) total() string {
	if !c.any() {
		return ""
	}
	u := c.run.Total()
	_, all, _ := c.run.Cost(c.prices)
	return fmt.Sprintf("%s tokens (input %s, output %s, cache read %s, cache write %s)%s", usage.Tokens(u.Total()),
		usage.Tokens(u.Input), usage.Tokens(u.Output), usage.Tokens(u.CacheRead), usage.Tokens(u.CacheWrite), c.moneyOf(all, true))
}

// moneyOf is ", 1.23 USD" with prices; noted says when models without a
// price were left out.
func (c costs) moneyOf(v float64, noted bool) string {
	if c.prices == nil {
		return ""
	}
	s := ", " + c.prices.Money(v)
	if noted && !c.priced {
		s += " (models without a price left out)"
	}
	return s
}

// agent is what agent a spent: ", 3.4k tokens" (so far, while it runs).
func (c costs) agent(a timeline.Agent) string {
	if a.Usage.Zero() {
		return ""
	}
	s := ", " + usage.Tokens(a.Usage.Total()) + " tokens"
	if !a.Measured {
		s += " so far"
	}
	if m, ok := c.prices.Cost(a.Model, a.Usage); ok {
		s += ", " + c.prices.Money(m)
	}
	return s
}

func soFar(running bool) string {
	if running {
		return " so far"
	}
	return ""
}
