package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// insertMessagesSQL inserts the unnested batch ($1 session, $3…$9 and $11
// the columns) at seq base+1, base+2, … where base is the SQL expression
// given.
func insertMessagesSQL(base string) string {
	return `INSERT INTO messages
			(session_key, seq, role, content, tool_calls, tool_call_id, tool_name, is_error, external_id, images)
		SELECT $1, ` + base + ` + m.ord, m.role, m.content, m.tool_calls::jsonb,
			m.tool_call_id, m.tool_name, m.is_error, m.external_id, m.images::jsonb
		FROM ` + "%s" + `unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::text[], $11::text[])
			WITH ORDINALITY AS m (role, content, tool_calls, tool_call_id, tool_name, is_error, external_id, images, ord)`
}

// insertParams is how many parameters an insert of a batch takes
// (insertArgs); a statement built on insertMessagesSQL numbers its own
// from insertParams+1.
const insertParams = 11

// insertArgs are the parameters of insertFastSQL and insertAtSQL: $1
// session, $2 count, $3…$9 the columns, $10 after, $11 the images.
func (b *batch) insertArgs(after int64) []any {
	return []any{b.session, b.n, b.roles, b.contents, b.calls, b.callIDs, b.toolNames, b.isErrors, b.externalIDs, after, b.images}
}

// insertFastSQL is Insert when nothing was stored after `after` ($10): one
// statement that bumps last_seq only if it still equals after, and inserts
// the batch behind it. No row back means someone appended meanwhile.
var insertFastSQL = `WITH s AS (
		UPDATE sessions SET last_seq = last_seq + $2::bigint, updated_at = now()
		WHERE key = $1 AND last_seq = $10::bigint
		RETURNING last_seq
	), ins AS (` + fmt.Sprintf(insertMessagesSQL(`s.last_seq - $2::bigint`), "s, ") + `)
	SELECT last_seq FROM s`

// insertAtSQL inserts the batch at after+1… inside the slow path's
// transaction, once later messages have moved out of the way.
var insertAtSQL = fmt.Sprintf(insertMessagesSQL(`$10::bigint`), "") + ` WHERE $2::bigint > 0`

// Insert stores msgs right after seq `after` in session and returns the seq
// of the last one and how many user messages moved behind them; see
// agentcore.History. In the common case (nothing was
// stored after `after`) it is one statement and one commit, shared with
// the appends made at the same time (groupCommit). Otherwise user
// messages stored meanwhile are moved behind msgs in one transaction, or, if
// anything else was stored, nothing changes and the error wraps
// agentcore.ErrConflict. Transient errors are retried.
func (db *DB) Insert(ctx context.Context, session string, after int64, msgs ...agentcore.Message) (int64, int, error) {
	if len(msgs) == 0 {
		return 0, 0, fmt.Errorf("insert into session %s: no messages", session)
	}
	b, err := newBatch(session, msgs)
	if err != nil {
		return 0, 0, err
	}
	args := b.insertArgs(after)
	type inserted struct {
		last  int64
		moved int
	}
	row := db.appends.rowOnce(db.pool, session, insertFastSQL, args)
	out, err := retryValue(ctx, func(ctx context.Context) (inserted, error) {
		var out inserted
		err := row(ctx, &out.last)
		if !errors.Is(err, pgx.ErrNoRows) {
			return out, err
		}
		out.last, out.moved, err = db.insertMoving(ctx, b, after, args, nil)
		return out, err
	})
	if err != nil {
		if errors.Is(err, agentcore.ErrConflict) || errors.Is(err, agentcore.ErrDuplicate) {
			return 0, 0, fmt.Errorf("insert into session %s: %w", session, err)
		}
		return 0, 0, appendError(session, err)
	}
	return out.last, out.moved, nil
}

// insertMoving is Insert's slow path: under the session row's lock it moves
// the user messages stored after `after` behind the batch. It returns the
// seq of the batch's last message and how many moved; then, when set, runs
// in the same transaction with that seq.
func (db *DB) insertMoving(ctx context.Context, b *batch, after int64, args []any, then func(tx pgx.Tx, last int64) error) (int64, int, error) {
	var (
		last  int64
		moved int
	)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var cur int64
		err := tx.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1 FOR UPDATE`, b.session).Scan(&cur)
		if errors.Is(err, pgx.ErrNoRows) {
			if after != 0 {
				return fmt.Errorf("session has no message %d: %w", after, agentcore.ErrConflict)
			}
			if err := tx.QueryRow(ctx, appendSQL, b.args()...).Scan(&last); err != nil || then == nil {
				return err
			}
			return then(tx, last)
		}
		if err != nil {
			return err
		}
		if cur < after {
			return fmt.Errorf("session ends at %d, before %d: %w", cur, after, agentcore.ErrConflict)
		}
		if cur > after {
			var others int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM messages
				WHERE session_key = $1 AND seq > $2 AND role <> 'user'`, b.session, after).Scan(&others); err != nil {
				return err
			}
			if others > 0 {
				return fmt.Errorf("%d non-user messages after %d: %w", others, after, agentcore.ErrConflict)
			}
			// Two steps, so no seq is ever taken twice.
			if _, err := tx.Exec(ctx, `UPDATE messages SET seq = -(seq + $3)
				WHERE session_key = $1 AND seq > $2`, b.session, after, b.n); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE messages SET seq = -seq WHERE session_key = $1 AND seq < 0`, b.session); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, insertAtSQL, args...); err != nil {
			return err
		}
		last, moved = after+b.n, int(cur-after)
		if _, err := tx.Exec(ctx, `UPDATE sessions SET last_seq = $2, updated_at = now() WHERE key = $1`, b.session, cur+b.n); err != nil || then == nil {
			return err
		}
		return then(tx, last)
	})
	return last, moved, err
}
