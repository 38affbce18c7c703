package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.Identities = (*DB)(nil)

// IsAllowed reports whether identity (platform:user_id) is on the allowlist.
// An identity never seen is not allowed. Transient errors are retried.
func (db *DB) IsAllowed(ctx context.Context, identity string) (bool, error) {
	allowed, err := retryValue(ctx, func(ctx context.Context) (bool, error) {
		var allowed bool
		err := db.pool.QueryRow(ctx, `SELECT allowed FROM identities WHERE identity = $1`, identity).Scan(&allowed)
		return allowed, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check access of %s: %w", identity, err)
	}
	return allowed, nil
}

// Allow puts identity on the allowlist, recording who allowed it. An empty
// displayName keeps the one already stored. Transient errors are retried
// (the upsert may safely run twice).
func (db *DB) Allow(ctx context.Context, identity, displayName, by string) error {
	return withRetry(ctx, func(ctx context.Context) error {
		return allow(ctx, db.pool, identity, displayName, by)
	})
}

// execer is what allow needs: the pool, or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// allow is Allow on q, so an access-request decision can allow inside its
// own transaction.
func allow(ctx context.Context, q execer, identity, displayName, by string) error {
	_, err := q.Exec(ctx, `INSERT INTO identities (identity, display_name, allowed, allowed_by)
		VALUES ($1, $2, true, $3)
		ON CONFLICT (identity) DO UPDATE SET
			allowed = true,
			allowed_by = excluded.allowed_by,
			display_name = CASE WHEN excluded.display_name <> '' THEN excluded.display_name
			                    ELSE identities.display_name END,
			updated_at = now()`,
		storable(identity), storable(displayName), storable(by))
	if err != nil {
		return fmt.Errorf("allow %s: %w", identity, err)
	}
	return nil
}
