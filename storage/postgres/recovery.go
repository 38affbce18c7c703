package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.Recovery = (*DB)(nil)

// maxUnfinished bounds one Unfinished call; callers poll again for more.
const maxUnfinished = 500

// Unfinished lists, oldest first and at most 500 at a time, the sessions
// whose newest message is older than q.OlderThan and was not followed
// through: a user or tool message, or an assistant message whose tool calls
// have no results yet (NeedsRun: the agent loop resumes from there), or a
// final assistant reply with no outbox row delivering it (Content holds the
// reply; not a note or a notice (agentcore.Note, agentcore.Notice), a
// silent reply or a teammate's reply, which are never sent this way). The
// agent stores each step right after what the model saw and moves
// messages that arrived meanwhile behind it (History.Insert), so an
// unanswered user message is always at the end: the newest message tells.
// Sessions parked on a pending approval or a pending question (ask_user)
// are left out; the decision or the answer resumes them, and a session
// whose question was answered but not resumed yet (a crash in between) is
// listed again. q.WrittenWithin > 0 looks only at the sessions written to in that
// time (every write moves sessions.updated_at).
//
// The cost is one pass over the sessions table (a few pages per thousand
// sessions) plus, for each session it looks at, a primary-key probe of its
// newest message and, for a final reply, one of its outbox row. The LIMIT 1
// keeps the planner from joining all messages and all outbox rows by hash
// instead, a plan that reads every message, every second, on every replica
// (BenchmarkUnfinished measures the query at 10 000 sessions).
func (db *DB) Unfinished(ctx context.Context, q bot.UnfinishedQuery) ([]bot.Unfinished, error) {
	rows, err := db.pool.Query(ctx, `SELECT s.key, m.seq, m.needs_run, m.content
		FROM sessions s
		CROSS JOIN LATERAL (
			SELECT m.seq, m.content, m.created_at,
			       m.role <> 'assistant' OR coalesce(jsonb_array_length(m.tool_calls), 0) > 0 AS needs_run,
			       m.role = 'assistant' AND coalesce(jsonb_array_length(m.tool_calls), 0) = 0
			         AND m.external_id IS NULL -- a note for the agent or a notice sent with its outbox row
			         AND btrim(m.content, E' \t\r\n') <> $3 AS reply -- a silent reply is meant for nobody
			FROM messages m
			WHERE m.session_key = s.key AND m.seq = s.last_seq
			  AND m.created_at < now() - $1::float8 * interval '1 microsecond'
			LIMIT 1) m
		WHERE s.last_seq > 0
		  AND ($4::float8 <= 0 OR s.updated_at >= now() - $4::float8 * interval '1 microsecond')
		  AND (m.needs_run
		       OR (m.reply
		           AND s.key NOT LIKE '%/team:%' -- a teammate's replies stay in its session
		           AND NOT EXISTS (SELECT 1 FROM outbox o
		                           WHERE o.session_key = s.key AND o.source_seq = m.seq AND o.source_seq > 0)))
		  AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.session_key = s.key AND a.status = 'pending')
		  AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.session_key = s.key AND q.status = 'pending')
		ORDER BY m.created_at, s.key
		LIMIT $2`, float64(q.OlderThan.Microseconds()), maxUnfinished, bot.SilentReply,
		float64(q.WrittenWithin.Microseconds()))
	if err != nil {
		return nil, fmt.Errorf("find unfinished sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bot.Unfinished, error) {
		var u bot.Unfinished
		err := row.Scan(&u.Session, &u.LastSeq, &u.NeedsRun, &u.Content)
		if u.NeedsRun {
			u.Content = ""
		}
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("find unfinished sessions: %w", err)
	}
	return out, nil
}
