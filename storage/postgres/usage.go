package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot/usage"
)

// usageGroupColumns are the columns usage may be grouped by, by grouping
// name: only these ever reach the SQL text.
var usageGroupColumns = map[string]string{
	usage.ByIdentity: "identity", usage.ByChat: "chat", usage.ByAgent: "agent",
	usage.ByModel: "model", usage.ByJob: "job",
}

// InsertUsage stores one model call's usage record, in one commit with
// the records of the calls that end at the same moment (db.usage).
func (db *DB) InsertUsage(ctx context.Context, r usage.Record) error {
	var at *time.Time // nil: the database's clock
	if !r.At.IsZero() {
		at = &r.At
	}
	err := db.usage.execOnce(ctx, db.pool, "", insertUsageSQL, []any{at, r.Identity, r.Chat, r.Agent, r.Model, r.Job, r.Session,
		r.Tokens.Input, r.Tokens.Output, r.Tokens.CacheRead, r.Tokens.CacheWrite, r.CostMicros})
	if err != nil {
		return fmt.Errorf("insert usage: %w", err)
	}
	return nil
}

const insertUsageSQL = `INSERT INTO llm_usage (at, identity, chat, agent, model, job, session_key,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_microdollars)
	VALUES (COALESCE($1, now()), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// SumUsage implements usage.Store: sums since q.Since (and before
// q.Until, when set) of the records matching q's filters, grouped by one
// of usage.GroupBys, largest first by all tokens.
func (db *DB) SumUsage(ctx context.Context, q usage.Query) ([]usage.Total, error) {
	key := "''"
	if q.GroupBy != "" {
		col, ok := usageGroupColumns[q.GroupBy]
		if !ok {
			return nil, fmt.Errorf("sum usage: cannot group by %q (use one of %s)", q.GroupBy, strings.Join(usage.GroupBys, ", "))
		}
		key = col
	}
	where, args := []string{"at >= $1"}, []any{q.Since}
	filter := func(col, v string) {
		if v != "" {
			args = append(args, v)
			where = append(where, col+" = $"+strconv.Itoa(len(args)))
		}
	}
	if !q.Until.IsZero() {
		args = append(args, q.Until)
		where = append(where, "at < $"+strconv.Itoa(len(args)))
	}
	filter("identity", q.Identity)
	filter("chat", q.Chat)
	filter("agent", q.Agent)
	filter("model", q.Model)
	filter("job", q.Job)
	limit := q.Limit
	if limit <= 0 || limit > usage.MaxRows {
		limit = usage.MaxRows
	}
	args = append(args, limit)
	// Sums are numeric in SQL: even absurd rows cannot overflow there, and
	// the per-call caps keep them within bigint.
	sql := `SELECT ` + key + ` AS k, COALESCE(SUM(input_tokens), 0)::bigint, COALESCE(SUM(output_tokens), 0)::bigint,
			COALESCE(SUM(cache_read_tokens), 0)::bigint, COALESCE(SUM(cache_write_tokens), 0)::bigint,
			COALESCE(SUM(cost_microdollars), 0)::bigint, COUNT(cost_microdollars), COUNT(*)
		FROM llm_usage WHERE ` + strings.Join(where, " AND ") + `
		GROUP BY k
		ORDER BY SUM(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) DESC, k
		LIMIT $` + strconv.Itoa(len(args))
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("sum usage: %w", err)
	}
	defer rows.Close()
	var out []usage.Total
	for rows.Next() {
		var t usage.Total
		if err := rows.Scan(&t.Key, &t.Tokens.Input, &t.Tokens.Output, &t.Tokens.CacheRead, &t.Tokens.CacheWrite,
			&t.CostMicros, &t.PricedCalls, &t.Calls); err != nil {
			return nil, fmt.Errorf("sum usage: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum usage: %w", err)
	}
	if q.GroupBy == "" && len(out) == 0 {
		out = []usage.Total{{}}
	}
	return out, nil
}
