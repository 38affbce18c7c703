package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/tools/sessions"
)

var _ sessions.SessionStatsSource = (*DB)(nil)

// SessionStats implements tools.SessionStatsSource: how many messages the
// session holds and when it started and last changed. An unknown session
// has zero stats.
func (db *DB) SessionStats(ctx context.Context, session string) (sessions.SessionStats, error) {
	var st sessions.SessionStats
	err := db.pool.QueryRow(ctx,
		`SELECT s.last_seq, s.created_at, s.updated_at FROM sessions s WHERE s.key = $1`, session,
	).Scan(&st.Messages, &st.Started, &st.LastEvent)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessions.SessionStats{}, nil
	}
	if err != nil {
		return st, fmt.Errorf("session stats: %w", err)
	}
	return st, nil
}
