package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
)

// getByID reads the row query returns for id ($1) with scan, without
// retrying (callers run it under retryValue or inside a retried
// decision). No row is an error wrapping bot.ErrNotFound; both errors name
// what and id.
func getByID[T any](ctx context.Context, db *DB, what, query, id string, scan func(pgx.Row) (T, error)) (T, error) {
	v, err := scan(db.pool.QueryRow(ctx, query, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return v, fmt.Errorf("%s %s: %w", what, id, bot.ErrNotFound)
	case err != nil:
		return v, fmt.Errorf("get %s %s: %w", what, id, err)
	}
	return v, nil
}
