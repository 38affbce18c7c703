package budgets

import (
	"fmt"
	"math"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

// Budget is one configured limit, parsed.
type Budget struct {
	// Scope is user, chat, agent, job or all.
	Scope string
	// Per is day, week or month.
	Per string
	// Limit is in tokens, or microdollars when Dollars.
	Limit   int64
	Dollars bool
}

// Parse reads the configured budgets (config.Validate has checked them).
func Parse(list []config.Budget) ([]Budget, error) {
	out := make([]Budget, 0, len(list))
	for i, b := range list {
		limit, dollars, err := config.ParseBudgetLimit(b.Limit)
		if err != nil {
			return nil, fmt.Errorf("budgets[%d]: %w", i, err)
		}
		if _, ok := knownPeriods[b.Per]; !ok {
			return nil, fmt.Errorf("budgets[%d]: per %q is not day, week or month", i, b.Per)
		}
		if _, ok := scopeNames[b.Scope]; !ok {
			return nil, fmt.Errorf("budgets[%d]: scope %q is not user, chat, agent, job or all", i, b.Scope)
		}
		out = append(out, Budget{Scope: b.Scope, Per: b.Per, Limit: limit, Dollars: dollars})
	}
	return out, nil
}

// ID names the budget in keys, records and buttons: "user/day/tokens".
// Validation keeps it unique among the configured budgets.
func (b Budget) ID() string {
	unit := "tokens"
	if b.Dollars {
		unit = "dollars"
	}
	return b.Scope + "/" + b.Per + "/" + unit
}

// scopeNames describe a scope to people.
var scopeNames = map[string]string{"user": "per-user", "chat": "per-chat", "agent": "per-agent", "job": "per-job", "all": "overall"}

// periodNames describe a period to people.
var periodNames = map[string]string{"day": "daily", "week": "weekly", "month": "monthly"}

// Describe names the budget to people: "the per-user daily budget of
// 200000 tokens".
func (b Budget) Describe() string {
	return fmt.Sprintf("the %s %s budget of %s", scopeNames[b.Scope], periodNames[b.Per], b.Amount(b.Limit))
}

// Amount renders n in the budget's unit: "1200 tokens", "$0.75".
func (b Budget) Amount(n int64) string {
	if b.Dollars {
		return fmt.Sprintf("$%.2f", float64(n)/1e6)
	}
	if n == 1 {
		return "1 token"
	}
	return fmt.Sprintf("%d tokens", n)
}

// subject returns whose spending the budget caps for call c, and false
// when it does not apply (a call with no user has no user budget; only a
// job's runs have job budgets).
func (b Budget) subject(c agentcore.MeteredCall) (string, bool) {
	session := c.Session
	if session == "" {
		session = c.Call.Session
	}
	var s string
	switch b.Scope {
	case "user":
		s = c.Call.UserID
	case "chat":
		if c.Call.Channel != "" && c.Call.ChatID != "" {
			s = c.Call.Channel + ":" + c.Call.ChatID
		}
	case "agent":
		s = c.Call.Agent
		if s == "" {
			s = tools.AgentOf(session)
		}
	case "job":
		// A job's own session, or a subagent's or teammate's working for
		// one: the job the usage records name (bot/usage).
		if job, ok := strings.CutPrefix(tools.OriginOf(session), "job:"); ok {
			s = job
		}
	case "all":
		s = "all"
	}
	return s, s != ""
}

// Caps on what one call counts, the same the usage records apply
// (bot/usage), so that a total rebuilt from them equals the running one:
// each kind of token at maxTokensPerKind, the cost at maxCostMicros.
const (
	maxTokensPerKind = 10_000_000
	maxCostMicros    = 1_000_000 * 1_000_000
)

// amount is what usage u of model costs against the budget: tokens of
// every kind, or microdollars at prices (0 when the model has no price).
// Negative figures count nothing; absurd ones are capped.
func (b Budget) amount(prices agentcore.Prices, model string, u agentcore.Usage) int64 {
	clamp := func(n int) int { return min(max(n, 0), maxTokensPerKind) }
	u = agentcore.Usage{InputTokens: clamp(u.InputTokens), OutputTokens: clamp(u.OutputTokens),
		CacheReadTokens: clamp(u.CacheReadTokens), CacheWriteTokens: clamp(u.CacheWriteTokens)}
	if !b.Dollars {
		return int64(u.InputTokens) + int64(u.OutputTokens) + int64(u.CacheReadTokens) + int64(u.CacheWriteTokens)
	}
	dollars, ok := prices.Cost(model, u)
	m := math.Round(dollars * 1e6)
	if !ok || math.IsNaN(m) || m <= 0 {
		return 0
	}
	return int64(min(m, maxCostMicros))
}
