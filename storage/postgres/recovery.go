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

// recoveredSession is the condition on a session key (column k) for
// recovery to look at it: a job's session ("<agent>/job:<name>") and a
// subagent's working for one are the scheduler's to take over (job_runs
// leases), never recovery's, and at 10 000 jobs a minute they write most of
// the messages. Migration 00041's index has it word for word, with k
// session_key.
func recoveredSession(k string) string { return k + ` NOT LIKE '%/job:%'` }

// touchedSQL lists the sessions something happened to between $2 and $1
// microseconds ago: a message stored, an approval decided, a question
// settled. Each is a range scan of a time index (00040, 00041), so it reads
// as many entries as there was activity in that time, however large the
// tables are. It is a statement of its own, cheap to plan, because a
// recovery pass makes it every second on every replica, most often to
// find nothing: planning the whole of unfinishedSQL took several times as
// long as running it, and longer the larger the tables' statistics.
var touchedSQL = `SELECT session_key FROM messages
		WHERE created_at >= now() - $2::float8 * interval '1 microsecond' AND created_at < now() - $1::float8 * interval '1 microsecond'
		  AND ` + recoveredSession("session_key") + `
		UNION SELECT session_key FROM approvals
		WHERE decided_at >= now() - $2::float8 * interval '1 microsecond' AND decided_at < now() - $1::float8 * interval '1 microsecond'
		  AND ` + recoveredSession("session_key") + `
		UNION SELECT session_key FROM questions
		WHERE answered_at >= now() - $2::float8 * interval '1 microsecond' AND answered_at < now() - $1::float8 * interval '1 microsecond'
		  AND ` + recoveredSession("session_key")

// listedSessions is the sessions whose keys are in $4. The LATERAL ...
// LIMIT 1 probes each by its key: the planner would otherwise hash-join
// with a scan of all sessions whenever its estimate of the list's length
// is off.
const listedSessions = `SELECT s.key, s.last_seq FROM unnest($4::text[]) t (key)
	CROSS JOIN LATERAL (SELECT key, last_seq FROM sessions WHERE key = t.key LIMIT 1) s`

// everySession lists the sessions whose key sorts after $4, in key order.
var everySession = `SELECT s.key, s.last_seq FROM sessions s WHERE s.key > $4 AND ` + recoveredSession("s.key")

// unfinishedSQL is Unfinished over the sessions listed by from
// (listedSessions or everySession), in the given order. The LIMIT 1 keeps the planner from
// joining all messages and all outbox rows by hash instead, a plan that
// reads every message on every pass.
func unfinishedSQL(from, order string) string {
	return `SELECT s.key, m.seq, m.needs_run, m.content
		FROM (` + from + `) s
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
		  AND (m.needs_run
		       OR (m.reply
		           AND s.key NOT LIKE '%/team:%' -- a teammate's replies stay in its session
		           AND NOT EXISTS (SELECT 1 FROM outbox o
		                           WHERE o.session_key = s.key AND o.source_seq = m.seq AND o.source_seq > 0)))
		  AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.session_key = s.key AND a.status = 'pending')
		  AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.session_key = s.key AND q.status = 'pending')
		ORDER BY ` + order + `
		LIMIT $2`
}

var (
	unfinishedListedSQL = unfinishedSQL(listedSessions, "m.created_at, s.key")
	unfinishedPageSQL   = unfinishedSQL(everySession, "s.key")
)

// Unfinished lists, at most 500 at a time, the sessions whose newest
// message is older than q.OlderThan and was not followed through: a user or
// tool message, or an assistant message whose tool calls have no results
// yet (NeedsRun: the agent loop resumes from there), or a final assistant
// reply with no outbox row delivering it (Content holds the reply; not a
// note or a notice (agentcore.Note, agentcore.Notice), a silent reply or a
// teammate's reply, which are never sent this way). The agent stores each
// step right after what the model saw and moves messages that arrived
// meanwhile behind it (History.Insert), so an unanswered user message is
// always at the end: the newest message tells. Sessions parked on a
// pending approval or a pending question (ask_user) are left out; the
// decision or the answer resumes them, and a session whose approval was
// decided or question settled but not resumed yet (a crash in between) is
// listed again. A job's sessions are left out (recoveredSession).
//
// With q.WrittenWithin > 0 it looks only at the sessions with a message
// stored, an approval decided or a question settled in that time (and
// before q.OlderThan), oldest first: the cost follows activity, not the
// number of sessions, and is one small query when nothing happened.
// Otherwise it looks at every session whose key sorts after q.After, in
// key order, and a caller pages on from the last one listed.
//
// Each session looked at costs a primary-key probe of its newest message
// and, for a final reply, one of its outbox row (BenchmarkUnfinished).
func (db *DB) Unfinished(ctx context.Context, q bot.UnfinishedQuery) ([]bot.Unfinished, error) {
	olderThan := float64(q.OlderThan.Microseconds())
	sql, from := unfinishedPageSQL, any(q.After)
	if q.WrittenWithin > 0 {
		rows, err := db.pool.Query(ctx, touchedSQL, olderThan, float64(q.WrittenWithin.Microseconds()))
		if err != nil {
			return nil, fmt.Errorf("find sessions active lately: %w", err)
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("find sessions active lately: %w", err)
		}
		if len(keys) == 0 {
			return nil, nil
		}
		sql, from = unfinishedListedSQL, keys
	}
	rows, err := db.pool.Query(ctx, sql, olderThan, maxUnfinished, bot.SilentReply, from)
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
