package usage

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/switchboard-chat/switchboard/bot"
)

// Token kinds, the kind label of switchboard_llm_tokens_total.
const (
	KindInput      = "input"
	KindOutput     = "output"
	KindCacheRead  = "cache_read"
	KindCacheWrite = "cache_write"
)

// Metrics are the usage metrics.
type Metrics struct {
	// Tokens counts the tokens models used, by agent, model and kind.
	Tokens *bot.CounterVec
	// Cost counts the dollars priced calls cost, by agent and model.
	Cost *bot.FloatCounterVec
}

// NewMetrics creates the metrics in set (nil: a set of their own).
func NewMetrics(set *metrics.Set) *Metrics {
	if set == nil {
		set = metrics.NewSet()
	}
	return &Metrics{
		Tokens: bot.NewCounterVec(set, "switchboard_llm_tokens_total", "agent", "model", "kind"),
		Cost:   bot.NewFloatCounterVec(set, "switchboard_llm_cost_dollars_total", "agent", "model"),
	}
}

// observe counts one call's tokens and cost.
func (m *Metrics) observe(r Record) {
	for _, k := range []struct {
		kind string
		n    int64
	}{{KindInput, r.Tokens.Input}, {KindOutput, r.Tokens.Output}, {KindCacheRead, r.Tokens.CacheRead}, {KindCacheWrite, r.Tokens.CacheWrite}} {
		// Every kind is counted, zero included, so each series exists from
		// the first call on and rates over it are defined.
		m.Tokens.WithLabelValues(r.Agent, r.Model, k.kind).AddInt64(k.n)
	}
	if r.CostMicros != nil {
		m.Cost.WithLabelValues(r.Agent, r.Model).Add(float64(*r.CostMicros) / 1e6)
	}
}
