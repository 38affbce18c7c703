package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// BudgetScopes are the values budgets[].scope takes.
var BudgetScopes = []string{"user", "chat", "agent", "job", "all"}

// BudgetPeriods are the values budgets[].per takes.
var BudgetPeriods = []string{"day", "week", "month"}

// maxBudgetTokens bounds a token limit so that raising it for a period
// (one more period's limit) cannot overflow.
const maxBudgetTokens = 1 << 50

// ParseBudgetLimit reads a budget's limit: a positive number of tokens
// ("200000"), or dollars ("$5", "$2.50") returned in microdollars with
// dollars true.
func ParseBudgetLimit(s string) (amount int64, dollars bool, err error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "$"); ok {
		whole, frac, _ := strings.Cut(rest, ".")
		if whole == "" || len(frac) > 2 || strings.Trim(whole+frac, "0123456789") != "" {
			return 0, true, fmt.Errorf(`limit %q: write dollars as "$5" or "$2.50"`, s)
		}
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || v <= 0 || v > 1e9 {
			return 0, true, fmt.Errorf(`limit %q: dollars must be more than $0 and at most $1000000000`, s)
		}
		return int64(math.Round(v * 1e6)), true, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > maxBudgetTokens {
		return 0, false, errors.New(`limit ` + strconv.Quote(s) + `: write a positive whole number of tokens ("200000") or dollars ("$5")`)
	}
	return n, false, nil
}

// validateBudgets checks budgets (validatePrices checks llm.prices).
func (c *Config) validateBudgets(add func(string, ...any)) {
	seen := map[string]int{}
	for i, b := range c.Budgets {
		if !slices.Contains(BudgetScopes, b.Scope) {
			add("budgets[%d].scope is %q: use one of %s", i, b.Scope, strings.Join(BudgetScopes, ", "))
		}
		if !slices.Contains(BudgetPeriods, b.Per) {
			add("budgets[%d].per is %q: use day, week or month (periods are UTC; weeks start on Monday)", i, b.Per)
		}
		_, dollars, err := ParseBudgetLimit(b.Limit)
		if err != nil {
			add("budgets[%d].%v", i, err)
			continue
		}
		if dollars && len(c.LLM.Prices) == 0 {
			add("budgets[%d].limit %q is in dollars but llm.prices is empty: add each model's price (llm.prices: {\"MODEL\": {input: 2.0, output: 8.0}}, dollars per million tokens) or give the limit in tokens", i, b.Limit)
		}
		unit := "tokens"
		if dollars {
			unit = "dollars"
		}
		key := b.Scope + "/" + b.Per + "/" + unit
		if j, dup := seen[key]; dup {
			add("budgets[%d] repeats budgets[%d] (scope %s, per %s, in %s): keep one of them", i, j, b.Scope, b.Per, unit)
		}
		seen[key] = i
	}

}
