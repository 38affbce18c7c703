package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/bot/retention"
)

var _ retention.Pruner = (*DB)(nil)

// sessionPage is how many sessions one PruneMessages query lists.
const sessionPage = 1000

// pruneTurnsSQL deletes the oldest finished turns of session $1 that ended
// before $2, in one statement of about $3 messages: up to the last turn
// end among the first $3 messages, or the first turn whole when it alone
// is longer. upto, the newest turn end before $2, is never the session's
// newest message, so a live session keeps that and its turn.
const pruneTurnsSQL = `WITH upto AS (
		SELECT max(m.seq) AS seq FROM messages m
		WHERE m.session_key = $1 AND m.created_at < $2 AND ` + endsTurn + `
		  AND m.seq < (SELECT max(seq) FROM messages WHERE session_key = $1)
	), page AS (
		SELECT m.seq, ` + endsTurn + ` AS ends FROM messages m, upto
		WHERE m.session_key = $1 AND m.seq <= upto.seq ORDER BY m.seq LIMIT $3
	), cut AS (
		SELECT coalesce((SELECT max(seq) FROM page WHERE ends),
			(SELECT min(m.seq) FROM messages m, upto WHERE m.session_key = $1 AND m.seq <= upto.seq AND ` + endsTurn + `)) AS seq
	), gone AS (
		DELETE FROM messages m USING cut WHERE m.session_key = $1 AND m.seq <= cut.seq RETURNING 1
	), retold AS (
		-- A summary retells the messages it covers: it goes with them.
		DELETE FROM session_summaries x USING cut WHERE x.session_key = $1 AND x.from_seq <= cut.seq
	)
	SELECT count(*) FROM gone`

// PruneMessages implements retention.Pruner. It walks the sessions begun
// before `before` (only they can hold older messages) a page at a time and
// cuts each at turn ends, so a tool call and its results go together or
// stay together.
func (db *DB) PruneMessages(ctx context.Context, before time.Time, limit int) (int, error) {
	total, after := 0, ""
	for {
		rows, err := db.pool.Query(ctx, `SELECT key FROM sessions WHERE created_at < $1 AND key > $2
			ORDER BY key LIMIT $3`, before, after, sessionPage)
		if err != nil {
			return total, fmt.Errorf("prune messages: list sessions: %w", err)
		}
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return total, fmt.Errorf("prune messages: list sessions: %w", err)
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, fmt.Errorf("prune messages: list sessions: %w", err)
		}
		for _, k := range keys {
			n, err := db.pruneSession(ctx, k, before, limit)
			total += n
			if err != nil {
				return total, err
			}
		}
		if len(keys) < sessionPage {
			// The questions ask_user asked and their answers are words of
			// the conversation too.
			_, err := pagedDelete(ctx, db, "questions", `DELETE FROM questions WHERE id IN (
				SELECT id FROM questions WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)`, before, limit)
			return total, err
		}
		after = keys[len(keys)-1]
	}
}

// pruneSession deletes session's finished turns older than before, a page
// of about limit messages per statement.
func (db *DB) pruneSession(ctx context.Context, session string, before time.Time, limit int) (int, error) {
	total := 0
	for {
		var n int
		if err := db.pool.QueryRow(ctx, pruneTurnsSQL, session, before, limit).Scan(&n); err != nil {
			return total, fmt.Errorf("prune messages of %s: %w", session, err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// PruneAudit implements retention.Pruner, oldest entries first (by id, the
// order they were written in).
func (db *DB) PruneAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	return pagedDelete(ctx, db, "audit log", `DELETE FROM audit_log WHERE id IN (
		SELECT id FROM audit_log WHERE at < $1 ORDER BY id LIMIT $2)`, before, limit)
}

// pagedDelete runs a DELETE of at most $2 rows older than $1 until it
// deletes fewer than limit, and returns how many rows went.
func pagedDelete(ctx context.Context, db *DB, what, sql string, before time.Time, limit int) (int, error) {
	total := 0
	for {
		tag, err := db.pool.Exec(ctx, sql, before, limit)
		if err != nil {
			return total, fmt.Errorf("prune %s: %w", what, err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < limit {
			return total, nil
		}
	}
}
