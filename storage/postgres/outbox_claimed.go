package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
)

// outboxInsertSQL inserts one outbox row from the parameters starting at
// $p: platform, chat_id, thread_id, text, buttons, reply_to, then the
// claimer (” for none), the lease in microseconds, the file (jsonb) and
// the live messages it replaces (text[]), the dedupe key (OutboxMessage.Key;
// NULL for none). session and seq are
// SQL expressions; from names what they come from. The row is claimed for
// the claimer in the same statement unless the chat has a pending row that
// someone else holds or nobody holds (it must go first). It returns the
// row's id and attempts and whether it was claimed. OFFSET 0 keeps the
// owner subquery from being flattened into the three places that use it,
// so the chat is looked up once, not three times.
func outboxInsertSQL(session, seq, from string, p int) string {
	a := func(i int) string { return fmt.Sprintf("$%d", p+i) }
	return `INSERT INTO outbox (session_key, source_seq, platform, chat_id, thread_id, text, buttons, reply_to,
			claimed_by, claimed_until, attempts, file, replaces, dedupe_key)
		SELECT ` + session + `, ` + seq + `, ` + a(0) + `, ` + a(1) + `, ` + a(2) + `, ` + a(3) + `, ` + a(4) + `::jsonb, ` + a(5) + `,
			c.owner, CASE WHEN c.owner IS NOT NULL THEN now() + ` + a(7) + `::float8 * interval '1 microsecond' END,
			CASE WHEN c.owner IS NOT NULL THEN 1 ELSE 0 END, ` + a(8) + `::jsonb, ` + a(9) + `::text[], ` + a(10) + `::text
		FROM ` + from + `(SELECT CASE WHEN ` + a(6) + ` <> '' AND NOT EXISTS (
				SELECT 1 FROM outbox p WHERE p.platform = ` + a(0) + ` AND p.chat_id = ` + a(1) + `
				  AND p.status = 'pending' AND p.claimed_by IS DISTINCT FROM ` + a(6) + `)
			THEN ` + a(6) + `::text END AS owner OFFSET 0) c
		ON CONFLICT DO NOTHING -- either unique index: (session_key, source_seq) or dedupe_key
		RETURNING id, attempts, claimed_by IS NOT NULL AS claimed`
}

// outboxArgs are outboxInsertSQL's parameters for m.
func outboxArgs(m bot.OutboxMessage, claim bot.Claim) ([]any, error) {
	buttons, err := encodeButtons(m.Buttons)
	if err != nil {
		return nil, err
	}
	file, err := encodeFile(m.File)
	if err != nil {
		return nil, err
	}
	return []any{storable(m.To.Platform), storable(m.To.ChatID), storable(m.To.ThreadID), storable(m.Text),
		buttons, storable(m.ReplyTo), claim.Owner, float64(claim.Lease.Microseconds()), file, replaces(m.Replaces),
		nullIfEmpty(storable(m.Key))}, nil
}

var enqueueClaimedSQL = outboxInsertSQL(`$1::text`, `$2::bigint`, ``, 3)

// EnqueueClaimed stores m like Enqueue and, in the same statement, claims
// it for claim.Owner for claim.Lease when nothing else of its chat must be
// delivered first; see bot.Outbox. m comes back with its ID and Attempts.
func (db *DB) EnqueueClaimed(ctx context.Context, m bot.OutboxMessage, claim bot.Claim) (bot.OutboxMessage, bool, error) {
	oargs, err := outboxArgs(m, claim)
	if err != nil {
		return m, false, fmt.Errorf("enqueue reply: %w", err)
	}
	var seq *int64
	if m.SourceSeq != 0 {
		seq = &m.SourceSeq
	}
	args := append([]any{nullIfEmpty(m.Session), seq}, oargs...)
	var claimed bool
	err = db.pool.QueryRow(ctx, enqueueClaimedSQL, args...).Scan(&m.ID, &m.Attempts, &claimed)
	if errors.Is(err, pgx.ErrNoRows) {
		// The row for (session, seq) or for m.Key exists (committed, since
		// the insert waited for it): it is delivered as it is.
		m.ID, err = db.existingRow(ctx, nullIfEmpty(m.Session), seq, nullIfEmpty(storable(m.Key)))
		if err != nil {
			return m, false, fmt.Errorf("enqueue reply to %s: %w", m.To, err)
		}
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("enqueue reply to %s: %w", m.To, err)
	}
	return m, claimed, nil
}

// insertReplySQL is InsertReply when nothing was stored after `after`
// ($10): Insert's fast path and the outbox row for the new seq, in one
// statement.
var insertReplySQL = `WITH s AS (
		UPDATE sessions SET last_seq = last_seq + $2::bigint, updated_at = now()
		WHERE key = $1 AND last_seq = $10::bigint
		RETURNING last_seq
	), ins AS (` + fmt.Sprintf(insertMessagesSQL(`s.last_seq - $2::bigint`), "s, ") + `
	), o AS (` + outboxInsertSQL(`$1`, `s.last_seq`, `s, `, insertParams+1) + `)
	SELECT s.last_seq, o.id, o.attempts, o.claimed FROM s, o`

// insertReplyAtSQL is the outbox row of InsertReply's slow path, inside
// its transaction: $1 session, $2 seq.
var insertReplyAtSQL = outboxInsertSQL(`$1::text`, `$2::bigint`, ``, 3)

// InsertReply stores reply right after seq `after` in session, as Insert
// does, and its outbox row m (Session and SourceSeq set here) in the same
// transaction: one statement and one commit when nothing was stored after
// `after`, and that commit shared with the replies stored at the same time
// (groupCommit). The row is claimed for claim.Owner as EnqueueClaimed
// would.
//
// The commit is durable before InsertReply returns, so before the reply
// is sent: a PostgreSQL crash never loses a reply the chat has seen, and
// recovery never answers its user message again.
func (db *DB) InsertReply(ctx context.Context, session string, after int64, reply agentcore.Message, m bot.OutboxMessage, claim bot.Claim) (bot.StoredReply, error) {
	b, err := newBatch(session, []agentcore.Message{reply})
	if err != nil {
		return bot.StoredReply{}, err
	}
	oargs, err := outboxArgs(m, claim)
	if err != nil {
		return bot.StoredReply{}, fmt.Errorf("insert reply into session %s: %w", session, err)
	}
	args := append(b.insertArgs(after), oargs...)
	m.Session = session
	row := db.replies.rowOnce(db.pool, session, insertReplySQL, args)
	out, err := retryValue(ctx, func(ctx context.Context) (bot.StoredReply, error) {
		out := bot.StoredReply{Row: m}
		err := row(ctx, &out.Seq, &out.Row.ID, &out.Row.Attempts, &out.Claimed)
		if !errors.Is(err, pgx.ErrNoRows) {
			out.Row.SourceSeq = out.Seq
			return out, err
		}
		out.Seq, out.Moved, err = db.insertMoving(ctx, b, after, args[:insertParams], func(tx pgx.Tx, seq int64) error {
			out.Row.SourceSeq = seq
			return tx.QueryRow(ctx, insertReplyAtSQL, append([]any{session, seq}, oargs...)...).
				Scan(&out.Row.ID, &out.Row.Attempts, &out.Claimed)
		})
		return out, err
	})
	if err != nil {
		if errors.Is(err, agentcore.ErrConflict) || errors.Is(err, agentcore.ErrDuplicate) {
			return bot.StoredReply{}, fmt.Errorf("insert reply into session %s: %w", session, err)
		}
		return bot.StoredReply{}, appendError(session, err)
	}
	return out, nil
}

// appendReplySQL is AppendReply: appendSQL and the outbox row for the new
// seq in one statement.
var appendReplySQL = appendCTE + `, o AS (` + outboxInsertSQL(`$1`, `s.last_seq`, `s, `, appendParams+1) + `)
	SELECT s.last_seq, o.id, o.attempts, o.claimed FROM s, o`

// AppendReply stores reply at the end of session, as Append does, and its
// outbox row m (Session and SourceSeq set here) in the same statement, so
// in one durable commit (see InsertReply).
// The row is claimed for claim.Owner as EnqueueClaimed would.
func (db *DB) AppendReply(ctx context.Context, session string, reply agentcore.Message, m bot.OutboxMessage, claim bot.Claim) (bot.StoredReply, error) {
	b, err := newBatch(session, []agentcore.Message{reply})
	if err != nil {
		return bot.StoredReply{}, err
	}
	oargs, err := outboxArgs(m, claim)
	if err != nil {
		return bot.StoredReply{}, fmt.Errorf("append reply to session %s: %w", session, err)
	}
	args := append(b.args(), oargs...)
	m.Session = session
	out, err := retryValue(ctx, func(ctx context.Context) (bot.StoredReply, error) {
		out := bot.StoredReply{Row: m}
		err := db.pool.QueryRow(ctx, appendReplySQL, args...).Scan(&out.Seq, &out.Row.ID, &out.Row.Attempts, &out.Claimed)
		out.Row.SourceSeq = out.Seq
		return out, err
	})
	if err != nil {
		return bot.StoredReply{}, appendError(session, err)
	}
	return out, nil
}

// MarkSentAll records the deliveries in sent, each row by its id, session
// and seq (see isRow), in one statement. It runs to the end even when ctx
// is cancelled (a sent message left pending would be sent again), retrying
// dropped connections for up to RetryBudget. Rows that are not there (a
// failover lost them) are left alone.
func (db *DB) MarkSentAll(ctx context.Context, sent []bot.Sent) error {
	if len(sent) == 0 {
		return nil
	}
	ids, pmids := make([]int64, len(sent)), make([]string, len(sent))
	sessions, seqs := make([]*string, len(sent)), make([]*int64, len(sent))
	for i, s := range sent {
		ids[i], pmids[i], sessions[i] = s.ID, storable(s.PlatformMessageID), nullIfEmpty(s.Session)
		if s.SourceSeq != 0 {
			seqs[i] = &sent[i].SourceSeq
		}
	}
	err := withRetry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		// Each row by its id, session and seq (see isRow).
		_, err := db.pool.Exec(ctx, `UPDATE outbox o SET status = 'sent', platform_message_id = u.pmid,
				sent_at = now(), claimed_by = NULL, claimed_until = NULL
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS u (id, pmid, session, seq)
			WHERE o.id = u.id AND o.session_key IS NOT DISTINCT FROM u.session AND o.source_seq IS NOT DISTINCT FROM u.seq`,
			ids, pmids, sessions, seqs)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark %d outbox messages sent: %w", len(sent), err)
	}
	return nil
}
