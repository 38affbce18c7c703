package usage

import (
	"math"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// MaxTokensPerCall caps each kind of token one call may report: no model
// reads or writes this many in one call, so a larger figure is a broken
// or hostile response, recorded capped so it cannot overflow the totals.
const MaxTokensPerCall = 10_000_000

// maxCostMicros caps one call's recorded cost (a million dollars): only
// absurd prices get there, and capping keeps sums far from overflow.
const maxCostMicros = 1_000_000 * 1_000_000

// sanitize returns u's counts, each negative one as 0 and each over
// MaxTokensPerCall as MaxTokensPerCall; fixed names the kinds it changed.
func sanitize(u agentcore.Usage) (t Tokens, fixed []string) {
	clamp := func(kind string, n int) int64 {
		switch {
		case n < 0:
			fixed = append(fixed, kind)
			return 0
		case n > MaxTokensPerCall:
			fixed = append(fixed, kind)
			return MaxTokensPerCall
		}
		return int64(n)
	}
	t.Input = clamp(KindInput, u.InputTokens)
	t.Output = clamp(KindOutput, u.OutputTokens)
	t.CacheRead = clamp(KindCacheRead, u.CacheReadTokens)
	t.CacheWrite = clamp(KindCacheWrite, u.CacheWriteTokens)
	return t, fixed
}

// costMicros is the cost of t on model in millionths of a dollar; nil
// when the model has no price. A cost that is not a finite, non-negative
// number (a broken price) counts as unpriced; one over maxCostMicros is
// capped. capped reports either.
func costMicros(p agentcore.Prices, model string, t Tokens) (micros *int64, capped bool) {
	dollars, known := p.Cost(model, agentcore.Usage{InputTokens: int(t.Input), OutputTokens: int(t.Output),
		CacheReadTokens: int(t.CacheRead), CacheWriteTokens: int(t.CacheWrite)})
	if !known {
		return nil, false
	}
	m := math.Round(dollars * 1e6)
	if math.IsNaN(m) || math.IsInf(m, 0) || m < 0 {
		return nil, true
	}
	n := int64(maxCostMicros)
	if m < maxCostMicros {
		n = int64(m)
	} else {
		capped = true
	}
	return &n, capped
}
