package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
)

var _ agentcore.SummaryStore = (*DB)(nil)

// Summary implements agentcore.SummaryStore: the newest summary that
// begins after the session's /reset mark, and the mark. A /reset hides the
// summaries before it as it hides the messages.
func (db *DB) Summary(ctx context.Context, session string) (agentcore.Summary, error) {
	s, err := retryValue(ctx, func(ctx context.Context) (agentcore.Summary, error) {
		var s agentcore.Summary
		err := db.pool.QueryRow(ctx, `SELECT r.mark, coalesce(x.from_seq, 0), coalesce(x.to_seq, 0), coalesce(x.content, '')
			FROM (SELECT `+resetMark+` AS mark) r
			LEFT JOIN LATERAL (
				SELECT from_seq, to_seq, content FROM session_summaries
				WHERE session_key = $1 AND from_seq > r.mark ORDER BY to_seq DESC LIMIT 1
			) x ON true`, session).Scan(&s.Floor, &s.FromSeq, &s.ToSeq, &s.Text)
		return s, err
	})
	if err != nil {
		return agentcore.Summary{}, fmt.Errorf("read summary of session %s: %w", session, err)
	}
	return s, nil
}

// SaveSummary implements agentcore.SummaryStore in one statement: s is
// stored only when it begins after the /reset mark and reaches further
// than the session's newest visible summary, so two replicas summarizing
// at once keep one, and a summary finished after a /reset is not stored.
func (db *DB) SaveSummary(ctx context.Context, session string, s agentcore.Summary) (bool, error) {
	if s.FromSeq <= 0 || s.ToSeq < s.FromSeq {
		return false, fmt.Errorf("save summary of session %s: seq range %d..%d is not a range of messages", session, s.FromSeq, s.ToSeq)
	}
	stored, err := retryValue(ctx, func(ctx context.Context) (bool, error) {
		var ok bool
		err := db.pool.QueryRow(ctx, `INSERT INTO session_summaries (session_key, from_seq, to_seq, content)
			SELECT $1, $2, $3, $4
			WHERE $2 > `+resetMark+`
			  AND EXISTS (SELECT 1 FROM sessions WHERE key = $1)
			  AND NOT EXISTS (SELECT 1 FROM session_summaries
				WHERE session_key = $1 AND from_seq > `+resetMark+` AND to_seq >= $3)
			ON CONFLICT DO NOTHING
			RETURNING true`, session, s.FromSeq, s.ToSeq, storable(s.Text)).Scan(&ok)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return ok, err
	})
	if err != nil {
		return false, fmt.Errorf("save summary of session %s: %w", session, err)
	}
	return stored, nil
}

// LoadRange implements agentcore.SummaryStore: the messages to summarize,
// read by the primary key's range.
func (db *DB) LoadRange(ctx context.Context, session string, after, before int64, limit int) ([]agentcore.Message, error) {
	msgs, err := retryValue(ctx, func(ctx context.Context) ([]agentcore.Message, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+messageCols+` FROM messages
			WHERE session_key = $1 AND seq > greatest($2::bigint, `+resetMark+`) AND seq < $3
			ORDER BY seq LIMIT $4`, session, after, before, limit)
		if err != nil {
			return nil, err
		}
		return collectMessages(rows, limit)
	})
	if err != nil {
		return nil, fmt.Errorf("load messages %d..%d of session %s: %w", after, before, session, err)
	}
	return msgs, nil
}
