package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/stream"
	"github.com/switchboard-chat/switchboard/channels"
)

var _ stream.Store = (*DB)(nil)

// SaveLive records the live messages showing session's answer at to. The
// reply row that replaces them deletes the record (migration 00027's
// trigger).
func (db *DB) SaveLive(ctx context.Context, session string, to channels.Address, ids []string) error {
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `
			INSERT INTO live_answers (session_key, platform, chat_id, thread_id, message_ids) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (session_key) DO UPDATE SET platform = $2, chat_id = $3, thread_id = $4, message_ids = $5, updated_at = now()`,
			storable(session), storable(to.Platform), storable(to.ChatID), storable(to.ThreadID), storableAll(ids))
		return err
	})
	if err != nil {
		return fmt.Errorf("record live answer of %s: %w", session, err)
	}
	return nil
}

// LiveMessages returns the live messages a run of session left at to
// (none when there are none, or they are in another chat).
func (db *DB) LiveMessages(ctx context.Context, session string, to channels.Address) ([]string, error) {
	var ids []string
	err := db.pool.QueryRow(ctx, `
		SELECT message_ids FROM live_answers
		WHERE session_key = $1 AND platform = $2 AND chat_id = $3 AND thread_id = $4`,
		storable(session), storable(to.Platform), storable(to.ChatID), storable(to.ThreadID)).Scan(&ids)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read live answer of %s: %w", session, err)
	}
	return ids, nil
}

// EndLive forgets session's live messages (a run parked on an approval:
// they keep what they show).
func (db *DB) EndLive(ctx context.Context, session string) error {
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `DELETE FROM live_answers WHERE session_key = $1`, storable(session))
		return err
	})
	if err != nil {
		return fmt.Errorf("end live answer of %s: %w", session, err)
	}
	return nil
}

// replaces is the outbox column value of a row's live messages: NULL for
// none.
func replaces(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return storableAll(ids)
}

// storableAll is storable of each of ss.
func storableAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = storable(s)
	}
	return out
}
