package main

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	llmusage "github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/config"
)

// wireUsage makes the usage recorder and the Meter every agent asks
// before and tells after each model call.
func (d *daemon) wireUsage() {
	d.usage = llmusage.NewRecorder(llmusage.Options{
		Store: d.st.db, Prices: pricesOf(d.cfg), Metrics: llmusage.NewMetrics(d.metricSet),
		Logger: d.log.With("component", "usage"),
	})
	// The recorder comes first, so that a running total rebuilt from the
	// usage records counts each call once; the budgets' guard goes after
	// it.
	d.meter = agentcore.Meters{d.usage}
}

// pricesOf converts llm.prices.
func pricesOf(cfg *config.Config) agentcore.Prices {
	out := make(agentcore.Prices, len(cfg.LLM.Prices))
	for model, p := range cfg.LLM.Prices {
		out[model] = agentcore.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	return out
}

// jobUsage sums a job's usage records since a time, for /jobs.
func (d *daemon) jobUsage(ctx context.Context, job string, since time.Time) (jobs.RunsUsage, error) {
	rows, err := d.st.db.SumUsage(ctx, llmusage.Query{Job: job, Since: since})
	if err != nil || len(rows) == 0 {
		return jobs.RunsUsage{}, err
	}
	return jobs.RunsUsage{Tokens: rows[0].Tokens.All(), CostDollars: rows[0].CostDollars()}, nil
}

// usageRows serves GET /api/v1/usage.
func (d *daemon) usageRows(ctx context.Context, groupBy string, since time.Time) (any, error) {
	return d.usage.Rows(ctx, groupBy, since)
}
