package usage

import (
	"strings"
	"testing"
)

func TestParseBudget(t *testing.T) {
	for in, want := range map[string]Budget{
		"500000": {Tokens: 500000}, "500k": {Tokens: 500000}, "1.5M": {Tokens: 1500000}, "2M tokens": {Tokens: 2000000}, "1 token": {Tokens: 1},
		"5 USD": {Cost: 5, Currency: "USD"}, "2.50eur": {Cost: 2.5, Currency: "EUR"}, "USD 5": {Cost: 5, Currency: "USD"},
	} {
		got, err := ParseBudget(in)
		if err != nil || got != want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0 USD", "-5", "5 dollars", "k", "1e9", "5$", "0.4"} {
		if b, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) = %+v, want an error", bad, b)
		}
	}
}

func TestBudget(t *testing.T) {
	tokens, money := Budget{Tokens: 1000}, Budget{Cost: 1, Currency: "USD"}
	if tokens.Reached(999, 100) || !tokens.Reached(1000, 0) || money.Reached(5000, 0.99) || !money.Reached(0, 1) {
		t.Errorf("Reached is wrong at the limit")
	}
	if got := (Budget{Tokens: 500}).After(1200, 0); got != (Budget{Tokens: 1700}) {
		t.Errorf("500 more after 1200: %+v", got)
	}
	if got := (Budget{Cost: 2, Currency: "USD"}).After(0, 1.234); got != (Budget{Cost: 3.24, Currency: "USD"}) {
		t.Errorf("2 USD more after 1.234: %+v", got)
	}
	s1, l1 := money.Of(0, 1.5)
	s2, l2 := tokens.Of(1500, 0)
	s3, l3 := (Budget{Cost: 0.01, Currency: "USD"}).Of(0, 0.0042)
	if s := strings.Join([]string{tokens.String(), money.String(), s1, l1, s2, l2, s3, l3}, " | "); s != "1.0k tokens | 1.00 USD | 1.50 USD | 1.00 USD | 1.5k tokens | 1.0k tokens | 0.0042 USD | 0.0100 USD" {
		t.Errorf("in words: %s", s)
	}
	prices := &Prices{Currency: "USD"}
	if tokens.Check(nil) != nil || money.Check(prices) != nil || money.Check(nil) == nil || (Budget{Cost: 1, Currency: "EUR"}).Check(prices) == nil {
		t.Errorf("Check: a money limit needs prices in its currency")
	}
	if b, err := ParseBudgetSetting([]byte(`{"prices": {}, "budget": "2M"}`)); err != nil || *b != (Budget{Tokens: 2000000}) {
		t.Errorf("the project's budget: %+v, %v", b, err)
	}
	if b, err := ParseBudgetSetting([]byte(`{"prices": {}}`)); err != nil || b != nil {
		t.Errorf("no budget: %+v, %v", b, err)
	}
	if _, err := ParseBudgetSetting([]byte(`{"budget": "lots"}`)); err == nil {
		t.Errorf("a bad budget is accepted")
	}
}
