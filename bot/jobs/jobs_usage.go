package jobs

import (
	"context"
	"fmt"
	"time"
)

// lastRunsShown is how many of a job's newest runs /jobs sums.
const lastRunsShown = 5

// lastRuns is what /jobs says of j's newest runs: "; last 3 runs: 1234
// tokens, $0.0012". With CommandOptions.Usage the figures are the usage
// records since the oldest of those runs began (all tokens, cost, and
// the subagents working for the job); without it, the tokens the runs
// recorded. Nothing when the job has not run or its runs cannot be read.
func lastRuns(ctx context.Context, o CommandOptions, j Job) string {
	runs, err := o.Store.RecentRuns(ctx, j.ID, lastRunsShown)
	if err != nil {
		o.Logger.Warn("/jobs could not read a job's runs", "job", j.Name, "err", err)
		return ""
	}
	var since time.Time
	var tokens int64
	n := 0
	for _, r := range runs {
		if r.StartedAt.IsZero() {
			continue // skipped slots used nothing
		}
		n++
		tokens += int64(r.TokensIn) + int64(r.TokensOut)
		if since.IsZero() || r.StartedAt.Before(since) {
			since = r.StartedAt
		}
	}
	if n == 0 {
		return ""
	}
	what := "run"
	if n > 1 {
		what = fmt.Sprintf("%d runs", n)
	}
	if o.Usage == nil {
		return fmt.Sprintf("; last %s: %d tokens", what, tokens)
	}
	u, err := o.Usage(ctx, j.Name, since)
	if err != nil {
		o.Logger.Warn("/jobs could not sum a job's usage", "job", j.Name, "err", err)
		return fmt.Sprintf("; last %s: %d tokens", what, tokens)
	}
	cost := "cost unknown"
	if u.CostDollars != nil {
		cost = fmt.Sprintf("$%.4f", *u.CostDollars)
	}
	return fmt.Sprintf("; last %s: %d tokens, %s", what, u.Tokens, cost)
}
