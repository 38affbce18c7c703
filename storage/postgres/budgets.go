package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/budgets"
	"github.com/switchboard-chat/switchboard/channels"
)

var _ budgets.Store = (*DB)(nil)

// Audit actions of budget overrides.
const (
	ActionBudgetExceeded = "budget.exceeded" // the admins were asked
	ActionBudgetDecided  = "budget.decided"
)

// usageColumns are the llm_usage columns a budget scope sums by; "all"
// sums every row.
var usageColumns = map[string]string{"user": "identity", "chat": "chat", "agent": "agent", "job": "job"}

// UsedSince implements budgets.Store from llm_usage. The column is one of
// usageColumns, never text from outside.
func (db *DB) UsedSince(ctx context.Context, scope, subject string, dollars bool, since time.Time) (int64, error) {
	sum := `input_tokens + output_tokens + cache_read_tokens + cache_write_tokens`
	if dollars {
		sum = `coalesce(cost_microdollars, 0)`
	}
	query := `SELECT coalesce(sum(` + sum + `), 0)::bigint FROM llm_usage WHERE at >= $1`
	args := []any{since}
	if scope != "all" {
		col, ok := usageColumns[scope]
		if !ok {
			return 0, fmt.Errorf("sum usage: unknown budget scope %q", scope)
		}
		query += ` AND ` + col + ` = $2`
		args = append(args, storable(subject))
	}
	used, err := retryValue(ctx, func(ctx context.Context) (int64, error) {
		var n int64
		err := db.pool.QueryRow(ctx, query, args...).Scan(&n)
		return n, err
	})
	if err != nil {
		return 0, fmt.Errorf("sum usage of %s %s: %w", scope, subject, err)
	}
	return used, nil
}

// overrideCols are the columns scanOverride reads, in order.
const overrideCols = `id, budget, subject, period_start, period_end, used, budget_limit, chat, thread_id,
	status, decided_by, created_at, decided_at`

// OpenOverride implements budgets.Store.
func (db *DB) OpenOverride(ctx context.Context, o budgets.Override) (budgets.Override, bool, error) {
	if o.ID == "" || o.Budget == "" || o.Subject == "" {
		return budgets.Override{}, false, errors.New("open budget override: set a random id, the budget and the subject")
	}
	chat := ""
	if o.Chat.Platform != "" {
		chat = o.Chat.Platform + ":" + o.Chat.ChatID
	}
	var (
		out     budgets.Override
		created bool
	)
	err := withRetry(ctx, func(ctx context.Context) error {
		created = false
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var err error
			out, err = scanOverride(tx.QueryRow(ctx, `INSERT INTO budget_overrides
					(id, budget, subject, period_start, period_end, used, budget_limit, chat, thread_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
				ON CONFLICT (budget, subject, period_start) DO NOTHING
				RETURNING `+overrideCols,
				storable(o.ID), storable(o.Budget), storable(o.Subject), o.PeriodStart, o.PeriodEnd,
				max(o.Used, 0), o.Limit, storable(chat), storable(o.Chat.ThreadID)))
			if errors.Is(err, pgx.ErrNoRows) {
				// Asked before (here or on another replica, which has
				// committed: the insert waited for its row).
				out, err = scanOverride(tx.QueryRow(ctx, `SELECT `+overrideCols+` FROM budget_overrides
					WHERE budget = $1 AND subject = $2 AND period_start = $3`, storable(o.Budget), storable(o.Subject), o.PeriodStart))
				return err
			}
			if err != nil {
				return err
			}
			created = true
			return writeAudit(ctx, tx, AuditEntry{Actor: "system", Action: ActionBudgetExceeded, SubjectKind: budgets.Kind, SubjectID: out.ID,
				Detail: map[string]any{"budget": out.Budget, "subject": out.Subject, "used": out.Used, "limit": out.Limit,
					"period_start": out.PeriodStart.UTC().Format(time.RFC3339)}})
		})
	})
	if err != nil {
		return budgets.Override{}, false, fmt.Errorf("open budget override %s for %s: %w", o.Budget, o.Subject, err)
	}
	return out, created, nil
}

// OverrideFor implements budgets.Store.
func (db *DB) OverrideFor(ctx context.Context, budget, subject string, periodStart time.Time) (budgets.Override, bool, error) {
	o, err := retryValue(ctx, func(ctx context.Context) (budgets.Override, error) {
		return scanOverride(db.pool.QueryRow(ctx, `SELECT `+overrideCols+` FROM budget_overrides
			WHERE budget = $1 AND subject = $2 AND period_start = $3`, storable(budget), storable(subject), periodStart))
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return budgets.Override{}, false, nil
	case err != nil:
		return budgets.Override{}, false, fmt.Errorf("read budget override %s for %s: %w", budget, subject, err)
	}
	return o, true, nil
}

// DecideOverride implements budgets.Store: the conditional update and its
// audit record are one transaction, so of concurrent presses exactly one
// decides.
func (db *DB) DecideOverride(ctx context.Context, id, status, by string) (budgets.Override, bool, error) {
	if status != budgets.StatusAllowed && status != budgets.StatusKept {
		return budgets.Override{}, false, fmt.Errorf("decide budget override %s: %q is not a decision; use allowed or kept", id, status)
	}
	if by == "" {
		return budgets.Override{}, false, fmt.Errorf("decide budget override %s: say who decided", id)
	}
	o, decided, err := decideRetried(ctx, db,
		func(tx pgx.Tx) (budgets.Override, error) {
			return scanOverride(tx.QueryRow(ctx, `UPDATE budget_overrides
				SET status = $2, decided_by = $3, decided_at = now()
				WHERE id = $1 AND status = 'pending'
				RETURNING `+overrideCols, id, status, storable(by)))
		},
		func(tx pgx.Tx, o budgets.Override) error {
			return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: ActionBudgetDecided, SubjectKind: budgets.Kind, SubjectID: id,
				Detail: map[string]any{"status": status, "budget": o.Budget, "subject": o.Subject,
					"period_start": o.PeriodStart.UTC().Format(time.RFC3339)}})
		},
		func(ctx context.Context) (budgets.Override, error) {
			return getByID(ctx, db, "budget override", `SELECT `+overrideCols+` FROM budget_overrides WHERE id = $1`, id, scanOverride)
		})
	if err != nil {
		return budgets.Override{}, false, fmt.Errorf("decide budget override %s: %w", id, err)
	}
	return o, decided, nil
}

func scanOverride(row pgx.Row) (budgets.Override, error) {
	var (
		o            budgets.Override
		chat, thread string
		decidedAt    *time.Time
	)
	if err := row.Scan(&o.ID, &o.Budget, &o.Subject, &o.PeriodStart, &o.PeriodEnd, &o.Used, &o.Limit, &chat, &thread,
		&o.Status, &o.DecidedBy, &o.CreatedAt, &decidedAt); err != nil {
		return o, err
	}
	o.PeriodStart, o.PeriodEnd = o.PeriodStart.UTC(), o.PeriodEnd.UTC()
	if chat != "" {
		if a, err := channels.ParseAddress(chat); err == nil {
			a.ThreadID = thread
			o.Chat = a
		}
	}
	if decidedAt != nil {
		o.DecidedAt = *decidedAt
	}
	return o, nil
}
