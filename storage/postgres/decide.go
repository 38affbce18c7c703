package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// decideOnce is the one-shot pending → decided transition shared by
// approvals and access requests. In one transaction, update moves the row
// and returns it, or pgx.ErrNoRows when it was not pending (decided before,
// expired, or missing); only then does after run, in the same transaction,
// to write the audit record and any side effect. When this call did not
// decide, the row is read back with get: any concurrent winner has
// committed by then, because the update waited for its row lock.
func decideOnce[T any](ctx context.Context, db *DB,
	update func(pgx.Tx) (T, error), after func(pgx.Tx, T) error, get func(context.Context) (T, error),
) (T, bool, error) {
	var (
		row     T
		decided bool
	)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		r, err := update(tx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		row, decided = r, true
		return after(tx, r)
	})
	if err != nil {
		var zero T
		return zero, false, err
	}
	if decided {
		return row, true, nil
	}
	row, err = get(ctx)
	return row, false, err
}

// decideRetried is decideOnce, retried on transient errors. A decision
// whose commit was lost runs again and finds the row decided: it then
// reports decided=false, as for a later press.
func decideRetried[T any](ctx context.Context, db *DB,
	update func(pgx.Tx) (T, error), after func(pgx.Tx, T) error, get func(context.Context) (T, error),
) (T, bool, error) {
	type outcome struct {
		row     T
		decided bool
	}
	res, err := retryValue(ctx, func(ctx context.Context) (outcome, error) {
		row, decided, err := decideOnce(ctx, db, update, after, get)
		return outcome{row, decided}, err
	})
	return res.row, res.decided, err
}
