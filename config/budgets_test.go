package config

import (
	"strings"
	"testing"
)

func TestParseBudgetLimit(t *testing.T) {
	for _, tc := range []struct {
		in      string
		amount  int64
		dollars bool
		bad     bool
	}{
		{"200000", 200000, false, false},
		{"$5", 5_000_000, true, false},
		{"$2.50", 2_500_000, true, false},
		{"$0.01", 10_000, true, false},
		{"0", 0, false, true},
		{"-5", 0, false, true},
		{"1.5", 0, false, true},
		{"$0", 0, true, true},
		{"$-1", 0, true, true},
		{"$1.234", 0, true, true},
		{"$", 0, true, true},
		{"$1e3", 0, true, true},
		{"lots", 0, false, true},
		{"99999999999999999999", 0, false, true},
	} {
		amount, dollars, err := ParseBudgetLimit(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && (amount != tc.amount || dollars != tc.dollars)) {
			t.Errorf("ParseBudgetLimit(%q) = %d, %v, %v; want %d, %v, bad=%v", tc.in, amount, dollars, err, tc.amount, tc.dollars, tc.bad)
		}
	}
}

func TestValidateBudgets(t *testing.T) {
	ok := valid()
	ok.Budgets = []Budget{{Scope: "user", Limit: "200000", Per: "day"}, {Scope: "all", Limit: "$5", Per: "month"}}
	ok.LLM.Prices = map[string]Price{"gpt-4.1": {Input: 2, Output: 8}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid budgets: %v", err)
	}
	for _, tc := range []struct {
		name    string
		budgets []Budget
		prices  map[string]Price
		want    string
	}{
		{"scope", []Budget{{Scope: "team", Limit: "1", Per: "day"}}, nil, `budgets[0].scope is "team": use one of user, chat, agent, job, all`},
		{"per", []Budget{{Scope: "user", Limit: "1", Per: "hour"}}, nil, `budgets[0].per is "hour": use day, week or month`},
		{"limit", []Budget{{Scope: "user", Limit: "-3", Per: "day"}}, nil, `budgets[0].limit "-3": write a positive whole number of tokens`},
		{"dollars without prices", []Budget{{Scope: "chat", Limit: "$5", Per: "week"}}, nil, `budgets[0].limit "$5" is in dollars but llm.prices is empty`},
		{"twice", []Budget{{Scope: "user", Limit: "1", Per: "day"}, {Scope: "user", Limit: "2", Per: "day"}}, nil, `budgets[1] repeats budgets[0]`},
	} {
		c := valid()
		c.Budgets, c.LLM.Prices = tc.budgets, tc.prices
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
