package usage

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Row is one group of GET /api/v1/usage.
type Row struct {
	Key              string `json:"key"`
	InputTokens      int64  `json:"input_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	// CostDollars is null when no call of the group had a price.
	CostDollars *float64 `json:"cost_dollars"`
	Calls       int64    `json:"calls"`
}

// Rows is the usage since since grouped by groupBy (one of GroupBys),
// largest first, at most MaxRows groups: what the admin API serves.
func (r *Recorder) Rows(ctx context.Context, groupBy string, since time.Time) ([]Row, error) {
	if !slices.Contains(GroupBys, groupBy) {
		return nil, fmt.Errorf("usage cannot be grouped by %q", groupBy)
	}
	totals, err := r.o.Store.SumUsage(ctx, Query{GroupBy: groupBy, Since: since})
	if err != nil {
		return nil, fmt.Errorf("usage by %s: %w", groupBy, err)
	}
	rows := make([]Row, 0, len(totals))
	for _, t := range totals {
		rows = append(rows, Row{Key: t.Key, InputTokens: t.Tokens.Input, OutputTokens: t.Tokens.Output,
			CacheReadTokens: t.Tokens.CacheRead, CacheWriteTokens: t.Tokens.CacheWrite,
			CostDollars: t.CostDollars(), Calls: t.Calls})
	}
	return rows, nil
}
