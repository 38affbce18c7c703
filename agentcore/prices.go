package agentcore

import (
	"strings"
)

// Price is what a model costs, in dollars per million tokens of each kind.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Prices are the known models' prices by model name (llm.prices).
type Prices map[string]Price

// Cost is what u cost on model, in dollars. A cache price left at 0 is
// the input price: cached tokens are never free unless a price says so
// explicitly with a tiny figure, and a forgotten cache price over-counts
// rather than lets a dollar budget leak. A model is found by its name,
// case-insensitively, else by the longest priced name it starts with
// followed by "-" (a dated snapshot such as gpt-4.1-2025-04-14 costs what
// gpt-4.1 costs). known is false when no price applies.
func (p Prices) Cost(model string, u Usage) (dollars float64, known bool) {
	price, ok := p.find(model)
	if !ok {
		return 0, false
	}
	const perMillion = 1e6
	if price.CacheRead == 0 {
		price.CacheRead = price.Input
	}
	if price.CacheWrite == 0 {
		price.CacheWrite = price.Input
	}
	return (float64(u.InputTokens)*price.Input + float64(u.OutputTokens)*price.Output +
		float64(u.CacheReadTokens)*price.CacheRead + float64(u.CacheWriteTokens)*price.CacheWrite) / perMillion, true
}

// find returns model's price (see Cost).
func (p Prices) find(model string) (Price, bool) {
	model = strings.ToLower(model)
	var (
		best    Price
		bestLen = -1
	)
	for name, price := range p {
		name = strings.ToLower(name)
		if name == model {
			return price, true
		}
		if strings.HasPrefix(model, name+"-") && len(name) > bestLen {
			best, bestLen = price, len(name)
		}
	}
	return best, bestLen >= 0
}
