package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/retention"
)

var _ retention.Store = (*DB)(nil)

// ActionSessionReset is the audit action of a /reset.
const ActionSessionReset = "chat.reset"

// resetMark is the seq after which session $1's messages are shown (its
// /reset mark, 0 without one): a primary-key lookup per Load.
const resetMark = `coalesce((SELECT after_seq FROM session_resets WHERE session_key = $1), 0)`

// endsTurn is true for a message of table alias m that ends a turn: an
// assistant reply asking for no tool that is not a note (notes are context
// put before a turn, not answers). Everything up to such a message is
// whole: a tool step's results are stored right after its call.
const endsTurn = `(m.role = 'assistant' AND m.tool_calls IS NULL
	AND coalesce(m.external_id, '') NOT LIKE 'note:%' AND coalesce(m.external_id, '') NOT LIKE 'handoff-note:%')`

// resetSQL marks every session of scope $1 after its newest finished turn
// (0 when none finished yet), moving an existing mark only forward.
const resetSQL = `INSERT INTO session_resets (session_key, after_seq, reset_by)
	SELECT s.key, coalesce((SELECT max(m.seq) FROM messages m WHERE m.session_key = s.key AND ` + endsTurn + `), 0), $2
	FROM sessions s WHERE s.scope = $1
	ON CONFLICT (session_key) DO UPDATE
		SET after_seq = greatest(session_resets.after_seq, EXCLUDED.after_seq),
		    reset_by = EXCLUDED.reset_by, reset_at = now()`

// ResetScope implements retention.Store. The mark lands after the newest
// finished turn rather than after the newest message: a run in the middle
// of a tool step, or a message still to be answered, keeps its turn in
// view, so no call is cut off from its results and every message is
// answered with the message in sight.
func (db *DB) ResetScope(ctx context.Context, scope, actor string) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, resetSQL, storable(scope), storable(actor))
		if err != nil {
			return fmt.Errorf("reset %s: %w", scope, err)
		}
		n = int(tag.RowsAffected())
		return writeAudit(ctx, tx, AuditEntry{Actor: actor, Action: ActionSessionReset, SubjectKind: SubjectChat,
			SubjectID: scope, Detail: map[string]any{"sessions": n, "outcome": fmt.Sprintf("%d session(s) reset", n)}})
	})
	return n, err
}
